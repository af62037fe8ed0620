package stats

import (
	"math"
	"math/bits"
	"slices"
	"sync"

	"gonum.org/v1/gonum/stat"
)

// qIndex answers weighted Empirical quantiles of one arm's pooled steps under
// many count vectors without re-sorting (docs/statistics.md §3.2): the values are sorted once,
// and checkpoints every stride values hold how many values of each group lie
// below, so the cumulative weight at a checkpoint is a dot product with the
// count vector. A binary search over checkpoints and a walk of at most
// stride values find the quantile. The result is exactly
// stat.Quantile(p, stat.Empirical, vals, w) with w_i = c[grp[i]].
type qIndex struct {
	vals   []float64 // present values, ascending
	grp    []int32   // group of each value; cols-1 is the never-drawn group
	cols   int       // groups + 1
	stride int
	ckpt   []int32 // ckpt[j*cols+g]: values of group g among vals[:j*stride]
}

func newQIndex(vals []float64, grp []int32, groups int) *qIndex {
	cols := groups + 1
	stride := max(16, cols)
	nck := (len(vals)-1)/stride + 1
	q := &qIndex{vals: vals, grp: grp, cols: cols, stride: stride, ckpt: make([]int32, nck*cols)}
	run := make([]int32, cols)
	for i, g := range grp {
		if i%stride == 0 {
			copy(q.ckpt[(i/stride)*cols:], run)
		}
		run[g]++
	}
	return q
}

func (q *qIndex) prefix(j int, c []int32) int64 {
	// The last column is the never-drawn group, whose count is 0. Two
	// accumulators halve the dependency chain (integer sums: any order
	// gives the same value).
	row := q.ckpt[j*q.cols : (j+1)*q.cols-1]
	c = c[:len(row)] // one bounds check instead of one per group
	var s0, s1 int64
	g := 0
	for ; g+1 < len(row); g += 2 {
		s0 += int64(row[g]) * int64(c[g])
		s1 += int64(row[g+1]) * int64(c[g+1])
	}
	if g < len(row) {
		s0 += int64(row[g]) * int64(c[g])
	}
	return s0 + s1
}

// quantile returns the p-quantile (0 < p ≤ 1) under counts c (len cols, the
// last 0) whose total weight is w > 0.
//
// The cumulative weights are integers, exact in float64 as gonum adds them,
// so "cumulative weight ≥ p·w" is "cumulative weight ≥ ⌈p·w⌉" and the search
// runs on integers: a branch-free binary search over the checkpoints, then
// a walk that adds counts in an integer chain.
func (q *qIndex) quantile(p float64, c []int32, w float64) float64 {
	fidx := p * w // the same float expression as gonum's empiricalQuantile
	if !(fidx > 0 && fidx < 1<<52) {
		return q.quantileFloat(fidx, c)
	}
	t := int64(math.Ceil(fidx))
	// The last checkpoint whose prefix is below t (prefix(0) = 0 is).
	cols := q.cols
	cg := c[:cols-1] // the last column, the never-drawn group, counts 0
	lo, size := 0, len(q.ckpt)/cols
	for size > 1 {
		half := size / 2
		// prefix(lo+half), inlined; the step taken by a mask, not a
		// branch (which would mispredict half the time).
		row := q.ckpt[(lo+half)*cols : (lo+half)*cols+len(cg)]
		var s0, s1 int64
		g := 0
		for ; g+1 < len(row); g += 2 {
			s0 += int64(row[g]) * int64(cg[g])
			s1 += int64(row[g+1]) * int64(cg[g+1])
		}
		if g < len(row) {
			s0 += int64(row[g]) * int64(cg[g])
		}
		lo += half & int((s0+s1-t)>>63)
		size -= half
	}
	var cum int64 // prefix(0) is always 0: skip its dot product (all of it when groups ≥ stride)
	if lo > 0 {
		cum = q.prefix(lo, c)
	}
	grp := q.grp[lo*q.stride:]
	for i, g := range grp {
		cum += int64(c[g])
		if cum >= t {
			return q.vals[lo*q.stride+i]
		}
	}
	return q.vals[len(q.vals)-1] // unreachable while w matches c
}

// quantileFloat is quantile by float comparisons, for a p·w outside the
// range where integer counts stand in for it.
func (q *qIndex) quantileFloat(fidx float64, c []int32) float64 {
	lo, hi := 0, len(q.ckpt)/q.cols-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if float64(q.prefix(mid, c)) < fidx {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	cum := float64(q.prefix(lo, c))
	for i := lo * q.stride; i < len(q.vals); i++ {
		cum += float64(c[q.grp[i]])
		if cum >= fidx {
			return q.vals[i]
		}
	}
	return q.vals[len(q.vals)-1]
}

// side is one arm inside one plan: its steps grouped into the plan's
// resampled units (groups). Steps outside every group (an unmatched trailing
// unit) belong to group `groups`, whose count is always 0.
type side struct {
	arm     *armData
	groups  int
	labels  []string
	stepGrp []int32     // group of each flat step
	sum     [][]float64 // [metric][groups]
	cnt     [][]float64
	q       []*qIndex // [metric], primary metrics only
	ones    []int32   // counts of the full sample
	partial bool      // some steps are outside every group
	// steps[g] counts group g's steps; full[m] says metric m is present in
	// all of them, so its resampled denominators Σc·n are shared (denoms).
	steps []float64
	full  []bool
}

func newSide(a *armData, stepGrp []int32, groups int, labels []string, primary []bool) *side {
	s := &side{arm: a, groups: groups, labels: labels, stepGrp: stepGrp}
	nm := len(a.vals)
	s.sum = make([][]float64, nm)
	s.cnt = make([][]float64, nm)
	s.q = make([]*qIndex, nm)
	for _, g := range stepGrp {
		if int(g) == groups {
			s.partial = true
			break
		}
	}
	// Runs of consecutive steps of one group: each run's sum is carried in
	// a register, adding the steps in order as a per-step update would.
	type run struct {
		from, to int
		g        int32
	}
	var runs []run
	for i, g := range stepGrp {
		if len(runs) > 0 && runs[len(runs)-1].g == g {
			runs[len(runs)-1].to = i + 1
		} else {
			runs = append(runs, run{i, i + 1, g})
		}
	}
	// A group that is one run of exactly one unit's steps has that unit's
	// sum: the same additions, from 0, in the same order (newArmData).
	whole := make([]int, len(runs)) // the unit a run is, or −1
	runsOf := make([]int, groups+1)
	for _, r := range runs {
		runsOf[r.g]++
	}
	u := 0
	for k, r := range runs {
		whole[k] = -1
		for u < len(a.units) && a.offset[u] < r.from {
			u++
		}
		if u < len(a.units) && a.offset[u] == r.from && a.offset[u+1] == r.to && runsOf[r.g] == 1 {
			whole[k] = u
		}
	}
	for m := range nm {
		sums := make([]float64, groups+1)
		cnts := make([]float64, groups+1)
		vals := a.vals[m]
		for k, r := range runs {
			if i := whole[k]; i >= 0 {
				sums[r.g], cnts[r.g] = a.unitSum[m][i], a.unitCnt[m][i]
				continue
			}
			sum, cnt := sums[r.g], cnts[r.g]
			for _, v := range vals[r.from:r.to] {
				if !math.IsNaN(v) {
					sum += v
					cnt++
				}
			}
			sums[r.g], cnts[r.g] = sum, cnt
		}
		sums[groups], cnts[groups] = 0, 0
		s.sum[m], s.cnt[m] = sums, cnts
		if primary[m] && len(a.order[m]) > 0 {
			grp := make([]int32, len(a.order[m]))
			for i, j := range a.order[m] {
				grp[i] = stepGrp[j]
			}
			s.q[m] = newQIndex(a.sorted[m], grp, groups)
		}
	}
	s.steps = make([]float64, groups)
	for _, g := range stepGrp {
		if int(g) < groups {
			s.steps[g]++
		}
	}
	s.full = make([]bool, nm)
	for m := range nm {
		s.full[m] = slices.Equal(s.cnt[m][:groups], s.steps)
	}
	s.ones = make([]int32, groups+1)
	for g := range groups {
		s.ones[g] = 1
	}
	return s
}

// constantMean reports whether every resampled mean of metric m is exactly
// one value v, whatever the counts and the order of the additions: the
// metric is present in every step of the groups and always v, a
// non-negative integer (ns) so small that every Σ c_g·S_g (at most
// groups × steps × v) is an integer below 2⁵³. Each sum of such terms is
// then exact, the numerator is exactly v times the denominator, and the
// quotient is v. The replicates then need no sums at all.
func (s *side) constantMean(m int) (float64, bool) {
	a := s.arm
	if a.tune.noConstantShortcut || !a.same[m] || !s.full[m] || a.sameBits[m]>>63 != 0 {
		return 0, false
	}
	v := math.Float64frombits(a.sameBits[m])
	if v != math.Trunc(v) || v*float64(s.groups+1)*float64(a.steps()) >= 1<<53 {
		return 0, false
	}
	return v, true
}

// exactSums reports whether every resampled sum Σ c_g·S_g of metric m
// (and, counts being integers below it, Σ c_g·n_g) is exact in float64,
// whatever the order of the additions: every group sum S_g is an integer
// and groups·Σ|S_g| (a row's counts add up to groups) is below 2⁵³. The
// one-chain side means (side.mean) then equal the two-chain ones
// (meanValues) bit for bit.
func (s *side) exactSums(m int) bool {
	var bound float64
	for _, v := range s.sum[m][:s.groups] {
		if v != math.Trunc(v) {
			return false // a fraction, or NaN
		}
		bound += math.Abs(v)
	}
	return bound*float64(s.groups) < 1<<53
}

// constantValues returns n copies of v in a pooled buffer.
func constantValues(n int, v float64) []float64 {
	out := getBuf(n)
	for i := range out {
		out[i] = v
	}
	return out
}

// unitGroups maps each unit of a to a group (or groups for "none") and
// expands the map to steps.
func unitStepGroups(a *armData, unitGrp []int32) []int32 {
	out := make([]int32, a.steps())
	for i := range a.units {
		for t := a.offset[i]; t < a.offset[i+1]; t++ {
			out[t] = unitGrp[i]
		}
	}
	return out
}

// weight is Σ_g c_g·n_g for metric m: the total weight of a resample.
func (s *side) weight(m int, c []int32) float64 {
	var n float64
	for g, k := range c[:s.groups] {
		n += float64(k) * s.cnt[m][g]
	}
	return n
}

// mean is μ* = Σ c_g S_g / Σ c_g n_g (NaN when no present step was drawn).
func (s *side) mean(m int, c []int32) float64 {
	var sum, n float64
	sums, cnts := s.sum[m], s.cnt[m]
	for g, k := range c[:s.groups] {
		f := float64(k)
		sum += f * sums[g]
		n += f * cnts[g]
	}
	return sum / n
}

// quantile is q*(p) under counts c (NaN when no present step was drawn).
func (s *side) quantile(m int, p float64, c []int32) float64 {
	w := s.weight(m, c)
	if w == 0 {
		return math.NaN()
	}
	return s.q[m].quantile(p, c, w)
}

// pointQuantile is the quantile of the side's full sample; it needs no
// index when every step belongs to a group.
func (s *side) pointQuantile(m int, p float64) float64 {
	if s.q[m] != nil {
		return s.quantile(m, p, s.ones)
	}
	if !s.partial {
		if s.arm.present[m] == 0 {
			return math.NaN()
		}
		return s.arm.quant[m][quantIndex(p)]
	}
	var vals []float64
	for i, v := range s.arm.vals[m] {
		if !math.IsNaN(v) && int(s.stepGrp[i]) < s.groups {
			vals = append(vals, v)
		}
	}
	slices.Sort(vals)
	if len(vals) == 0 {
		return math.NaN()
	}
	return stat.Quantile(p, stat.Empirical, vals, nil)
}

func quantIndex(p float64) int {
	switch p {
	case 0.5:
		return 0
	case 0.9:
		return 1
	}
	return 2
}

// present is the number of present steps of metric m inside the groups.
func (s *side) present(m int) int { return int(s.weight(m, s.ones)) }

// plan is one resampling task: one arm alone (arm summary) or a baseline and
// an arm (comparison), with the count vectors of its stream.
type plan struct {
	sides   []*side
	paired  bool
	n       int // the ladder's n
	level   string
	method  string
	b       int
	alphaP  float64
	stream  uint64
	counts  [][]int32    // per side: b rows of groups+1 counts
	den     [2][]float64 // per side: shared resampled denominators
	denOnce [2]sync.Once
	// Per side and class (plans with shared classes): den at each class's
	// first row, and Σ c_g·steps_g in one chain, side.mean's denominator.
	classDen, chainDen         [2][]float64
	classDenOnce, chainDenOnce [2]sync.Once
	// memos[i] memoizes side i's running sums over its count rows (paired
	// sides share the rows, so they share memos[0]).
	memos    [2]*sumMemo
	memoOnce [2]sync.Once
}

// memo returns the sum memo of side i's count rows, built on first use.
func (pl *plan) memo(i int) *sumMemo {
	if pl.paired {
		i = 0
	}
	pl.memoOnce[i].Do(func() {
		pl.memos[i] = newSumMemo(pl.counts[i], pl.sides[i].groups, pl.b)
	})
	return pl.memos[i]
}

// draw fills the count vectors from the stream (seed, key). Sides draw in
// order of arm name, so swapping baseline and arm draws the same vectors.
func (pl *plan) draw(seed uint64, key string, b int, confidence float64) {
	pl.stream = streamSeed2(key)
	pl.alphaP = expandedAlpha(pl.n, confidence)
	pl.b = minResamplesFor(b, pl.alphaP)
	rng := pcg{hi: seed, lo: pl.stream}
	drawSide := func(g int) []int32 {
		c := getIndexBuf(pl.b * (g + 1)) // back to the pool in release; fill sets every count
		rng.fill(c, pl.b, g)
		return c
	}
	pl.counts = make([][]int32, len(pl.sides))
	if pl.paired {
		c := drawSide(pl.sides[0].groups)
		for i := range pl.sides {
			pl.counts[i] = c
		}
		return
	}
	order := []int{0}
	if len(pl.sides) == 2 {
		order = []int{0, 1}
		if pl.sides[1].arm.name < pl.sides[0].arm.name {
			order = []int{1, 0}
		}
	}
	for _, i := range order {
		pl.counts[i] = drawSide(pl.sides[i].groups)
	}
}

// pcg is rand.NewPCG(hi, lo) (math/rand/v2's 128-bit LCG with the DXSM
// output) with its state held in locals while it fills count rows: drawing
// is most of a plan's setup, and the library's generator keeps its state
// in memory, on the LCG's dependency chain. TestPCGFillMatchesRand checks
// it draw for draw.
type pcg struct{ hi, lo uint64 }

// fill draws rows count rows of g unit indices each into counts (a unit
// index is the high word of the 128-bit product output × g: a specified
// mapping that does not depend on rand.IntN's algorithm), g+1 columns per
// row, the last (the never-drawn group) 0. counts need not be zero
// beforehand.
func (p *pcg) fill(counts []int32, rows, g int) {
	const (
		mulHi    = 2549297995355413924
		mulLo    = 4865540595714422341
		incHi    = 6364136223846793005
		incLo    = 1442695040888963407
		cheapMul = 0xda942042e4dd58b5
	)
	hi, lo := p.hi, p.lo
	n := uint64(g)
	cols := g + 1
	next := func() uint64 {
		// state = state·mul + inc, then DXSM, as rand.PCG.Uint64.
		h, l := bits.Mul64(lo, mulLo)
		h += hi*mulLo + lo*mulHi
		l, c := bits.Add64(l, incLo, 0)
		h, _ = bits.Add64(h, incHi, c)
		hi, lo = h, l
		h ^= h >> 32
		h *= cheapMul
		h ^= h >> 48
		h *= l | 1
		idx, _ := bits.Mul64(h, n)
		return idx
	}
	if g <= 15 {
		// A row's counts are at most g ≤ 15: count them in 4-bit fields
		// of one register instead of incrementing memory.
		for r := range rows {
			var acc uint64
			for range g {
				acc += 1 << (4 * next())
			}
			row := counts[r*cols : r*cols+cols]
			for k := range row[:g] {
				row[k] = int32(acc >> (4 * k) & 15)
			}
			row[g] = 0
		}
	} else {
		for r := range rows {
			row := counts[r*cols : (r+1)*cols]
			clear(row)
			for range g {
				row[next()]++
			}
		}
	}
	p.hi, p.lo = hi, lo
}

// prepare builds the sum memos and shared denominators of a drawn plan
// while the tasks are set up in parallel; built lazily instead, the first
// metrics of every plan would queue behind one worker building them.
func (pl *plan) prepare() {
	for i := range pl.sides {
		pl.memo(i)
		pl.denominators(i)
		if pl.memo(i).classes != nil {
			pl.classDenominators(i)
		}
	}
}

// release hands a drawn plan's count rows, memos and denominators back to
// the pools once its task is done; nothing of them is in a Result.
func (pl *plan) release() {
	if pl == nil || pl.counts == nil {
		return
	}
	putIndexBuf(pl.counts[0])
	if len(pl.counts) > 1 && !pl.paired {
		putIndexBuf(pl.counts[1])
	}
	pl.counts = nil
	for i, m := range pl.memos {
		if m != nil {
			m.release()
			pl.memos[i] = nil
		}
	}
	for i, d := range pl.den {
		if d != nil {
			putBuf(d)
			pl.den[i] = nil
		}
	}
}

// row returns side i's counts of resample r.
func (pl *plan) row(i, r int) []int32 {
	cols := pl.sides[i].groups + 1
	return pl.counts[i][r*cols : (r+1)*cols]
}

// statFunc evaluates a statistic of side i under counts c.
type statFunc func(i int, c []int32) float64

func meanStat(sides []*side, m int) statFunc {
	return func(i int, c []int32) float64 { return sides[i].mean(m, c) }
}

func quantileStat(sides []*side, m int, p float64) statFunc {
	return func(i int, c []int32) float64 { return sides[i].quantile(m, p, c) }
}

// denominators returns Σ_g c_g·steps_g of every resample of side i,
// computed once and shared by all metrics present in every step.
func (pl *plan) denominators(i int) []float64 {
	pl.denOnce[i].Do(func() {
		s := pl.sides[i]
		den := getBuf(pl.b) // back to the pool in release
		pl.memo(i).paritySums(den, pl.counts[i], s.groups+1, s.steps)
		pl.den[i] = den
	})
	return pl.den[i]
}

// meanReplicates is side i's mean of metric m under every resample, like
// side.mean but summing the even and the odd groups in two chains (half the
// floating-point dependency chain of one), in a fixed order, from the
// side's sum memo.
func (pl *plan) meanReplicates(i, m int) []float64 {
	s := pl.sides[i]
	if v, ok := s.constantMean(m); ok {
		return constantValues(pl.b, v)
	}
	var den []float64
	if s.full[m] {
		den = pl.denominators(i)
	}
	memo := pl.memo(i)
	if cl := memo.classes; cl != nil {
		vals := getBuf(len(cl.reps))
		defer putBuf(vals)
		if den != nil {
			den = pl.classDenominators(i)
		}
		memo.classMeans(vals, s.sum[m][:s.groups], s.cnt[m][:s.groups], den)
		return cl.rows(vals)
	}
	out := getBuf(pl.b)
	memo.parityReplicates(out, pl.counts[i], s.groups+1, s.sum[m][:s.groups], s.cnt[m][:s.groups], den)
	return out
}

// quantileAt is the p-quantile of side i's metric m under resample r, with
// the total weight taken from the shared denominators when metric m is
// present in every step.
func (pl *plan) quantileAt(i, m int, p float64, r int) float64 {
	s := pl.sides[i]
	c := pl.row(i, r)
	if !s.full[m] {
		return s.quantile(m, p, c)
	}
	den := pl.denominators(i)
	if den[r] == 0 {
		return math.NaN()
	}
	return s.q[m].quantile(p, c, den[r])
}

// quantileReplicates is side i's p-quantile of metric m under every
// resample, computed once per distinct count row when the memo knows them.
func (pl *plan) quantileReplicates(i, m int, p float64) []float64 {
	return pl.perRow(i, func(r int) float64 { return pl.quantileAt(i, m, p, r) })
}

// perRow returns f(r) for every resample r of side i into a pooled buffer,
// calling f once per distinct count row when the memo knows them (f must
// depend on the row's counts only).
func (pl *plan) perRow(i int, f func(r int) float64) []float64 {
	cl := pl.memo(i).classes
	vals := pl.atClasses(cl, f)
	if cl == nil {
		return vals
	}
	defer putBuf(vals)
	return cl.rows(vals)
}

// atClasses returns f(r) at the first row r of every class of cl, or at
// every row when cl is nil, in a pooled buffer.
func (pl *plan) atClasses(cl *rowClasses, f func(r int) float64) []float64 {
	if cl == nil {
		out := getBuf(pl.b)
		for r := range out {
			out[r] = f(r)
		}
		return out
	}
	out := getBuf(len(cl.reps))
	for k, r := range cl.reps {
		out[k] = f(int(r))
	}
	return out
}

// Replicate values. When every side of a plan resamples with the same count
// rows (one side, or paired sides) and the rows fall into classes of equal
// rows, a statistic is computed once per class: the plan's "values" are
// then per class, and their CIs weigh each class by its size. Otherwise
// values are per row, the replicates themselves. Either way a CI is that of
// the B replicates, bit for bit.

// classes returns the row classes that all sides of pl share, or nil.
func (pl *plan) classes() *rowClasses {
	if len(pl.sides) > 1 && !pl.paired {
		return nil
	}
	return pl.memo(0).classes
}

// values returns f(r) at the first row r of every class, or at every row
// when pl has no shared classes, in a pooled buffer.
func (pl *plan) values(f func(r int) float64) []float64 {
	return pl.atClasses(pl.classes(), f)
}

// classDenominators is denominators(i) at the first row of each class of
// side i's rows.
func (pl *plan) classDenominators(i int) []float64 {
	pl.classDenOnce[i].Do(func() {
		den := pl.denominators(i)
		reps := pl.memo(i).classes.reps
		cd := make([]float64, len(reps))
		for k, r := range reps {
			cd[k] = den[r]
		}
		pl.classDen[i] = cd
	})
	return pl.classDen[i]
}

// chainDenominators is Σ_g c_g·steps_g in one chain (side.mean's
// denominator for metrics present in every step) of each class of side i's
// rows.
func (pl *plan) chainDenominators(i int) []float64 {
	pl.chainDenOnce[i].Do(func() {
		s := pl.sides[i]
		den := make([]float64, len(pl.memo(i).classes.reps))
		pl.memo(i).chainSums(den, pl.counts[i], s.groups+1, s.steps)
		pl.chainDen[i] = den
	})
	return pl.chainDen[i]
}

// meanValues is meanReplicates as values.
func (pl *plan) meanValues(i, m int) []float64 {
	cl := pl.classes()
	if cl == nil {
		return pl.meanReplicates(i, m)
	}
	s := pl.sides[i]
	if v, ok := s.constantMean(m); ok {
		return constantValues(len(cl.reps), v)
	}
	var den []float64
	if s.full[m] {
		den = pl.classDenominators(i)
	}
	out := getBuf(len(cl.reps))
	pl.memo(i).classMeans(out, s.sum[m][:s.groups], s.cnt[m][:s.groups], den)
	return out
}

// quantileValues is quantileReplicates as values.
func (pl *plan) quantileValues(i, m int, p float64) []float64 {
	return pl.values(func(r int) float64 { return pl.quantileAt(i, m, p, r) })
}

// sideMeanValues is side i's mean of metric m (side.mean, one chain) as
// values.
func (pl *plan) sideMeanValues(i, m int) []float64 {
	s := pl.sides[i]
	cl := pl.classes()
	if v, ok := s.constantMean(m); ok {
		n := pl.b
		if cl != nil {
			n = len(cl.reps)
		}
		return constantValues(n, v)
	}
	if !s.arm.tune.noExactSums && s.exactSums(m) {
		// One chain or two, every sum is the same exact integer.
		return pl.meanValues(i, m)
	}
	if cl == nil {
		return pl.values(func(r int) float64 { return s.mean(m, pl.row(i, r)) })
	}
	memo, cols := pl.memo(i), s.groups+1
	out := getBuf(len(cl.reps))
	memo.chainSums(out, pl.counts[i], cols, s.sum[m][:s.groups])
	var den []float64
	if s.full[m] {
		den = pl.chainDenominators(i)
	} else {
		den = getBuf(len(cl.reps))
		defer putBuf(den)
		memo.chainSums(den, pl.counts[i], cols, s.cnt[m][:s.groups])
	}
	for k := range out {
		out[k] /= den[k]
	}
	return out
}

// replicateRows returns the replicates of values vals: a fresh row-level
// copy (for the test hook).
func (pl *plan) replicateRows(vals []float64) []float64 {
	if cl := pl.classes(); cl != nil {
		rows := cl.rows(vals)
		return rows[:len(rows):len(rows)]
	}
	return slices.Clone(vals)
}

// slicePool recycles buffers: an Analyze call fills hundreds of replicate
// arrays (B floats each), and reusing them keeps the collector out of the
// hot loop. Buffers are pooled by capacity class (powers of two), so that
// requests of different sizes (B rows, distinct rows, trie nodes) do not
// evict each other. Contents of a recycled buffer are arbitrary.
type slicePool[T any] struct{ classes [64]sync.Pool }

func (p *slicePool[T]) get(n int) []T {
	c := bits.Len(uint(max(n, 1) - 1)) // smallest class with 1<<c ≥ n
	if b, ok := p.classes[c].Get().(*[]T); ok {
		return (*b)[:n]
	}
	return make([]T, n, 1<<c)
}

func (p *slicePool[T]) put(b []T) {
	c := bits.Len(uint(cap(b))) - 1 // largest class with 1<<c ≤ cap
	if c < 0 {
		return
	}
	b = b[:1<<c]
	p.classes[c].Put(&b)
}

var (
	floatPool slicePool[float64]
	indexPool slicePool[int32]
)

func getBuf(n int) []float64 { return floatPool.get(n) }
func putBuf(b []float64)     { floatPool.put(b) }

// interval is the expanded-percentile CI of the replicates that values vals
// stand for (class values weighted by the class sizes when pl has shared
// classes); vals may be reordered.
func (pl *plan) interval(vals []float64) (ci *[2]float64, undefined int) {
	lo, hi, undefined, ok := classInterval(vals, pl.classes(), pl.alphaP)
	if !ok {
		return nil, undefined
	}
	return &[2]float64{lo, hi}, undefined
}

// releasedInterval is interval and then returns vals to the pool.
func (pl *plan) releasedInterval(vals []float64) (*[2]float64, int) {
	ci, und := pl.interval(vals)
	putBuf(vals)
	return ci, und
}
