package stats

import (
	"hash/fnv"
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/stat/distuv"
)

// streamSeed2 is FNV-1a-64 of a task key: one PCG stream per task (docs/statistics.md §3.5).
func streamSeed2(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}

// expandedAlpha is α′ of the expanded percentile interval (Hesterberg 2015):
// z_{1−α′/2} = √(n/(n−1))·t_{n−1,1−α/2}.
func expandedAlpha(n int, confidence float64) float64 {
	alpha := 1 - confidence
	if n < 2 {
		return alpha
	}
	t := studentT(float64(n-1), 1-alpha/2)
	z := math.Sqrt(float64(n)/float64(n-1)) * t
	return 2 * (1 - distuv.UnitNormal.CDF(z))
}

// percentileRank is j = max(1, ⌊(B+1)·α′/2⌋); the interval is [θ*_(j), θ*_(B+1−j)].
func percentileRank(b int, alphaPrime float64) int {
	j := int(math.Floor(float64(b+1) * alphaPrime / 2))
	return max(j, 1)
}

// minResamplesFor is the smallest B ≥ b whose rank j is at least 10 (docs/statistics.md §3.3:
// fewer than 10 replicates beyond an endpoint make it too noisy).
func minResamplesFor(b int, alphaPrime float64) int {
	for percentileRank(b, alphaPrime) < 10 {
		need := int(math.Ceil(20/alphaPrime)) - 1
		if need <= b {
			need = b + 1
		}
		b = need
	}
	return b
}

// percentileInterval returns the expanded-percentile endpoints of the
// non-NaN replicates in reps and how many were NaN. reps may be reordered
// (NaNs compacted out). ok is false when fewer than two replicates remain.
func percentileInterval(reps []float64, alphaPrime float64) (lo, hi float64, undefined int, ok bool) {
	if lo, hi, undefined, ok, done := sampledInterval(reps, nil, len(reps), alphaPrime); done {
		return lo, hi, undefined, ok
	}
	return heapInterval(reps, alphaPrime)
}

// classInterval is percentileInterval of the replicates vals[cl.class[r]]
// of every row r, from the class values (cl nil: vals are the replicates).
func classInterval(vals []float64, cl *rowClasses, alphaPrime float64) (lo, hi float64, undefined int, ok bool) {
	n := len(vals)
	if cl != nil {
		n = len(cl.class)
	}
	if v, same := sameBits(vals); same {
		// Every replicate is v (a metric constant in every unit): the
		// endpoints are v, with nothing to select.
		if n < 2 {
			return 0, 0, 0, false
		}
		return v, v, 0, true
	}
	if cl == nil {
		return percentileInterval(vals, alphaPrime)
	}
	if lo, hi, undefined, ok, done := sampledInterval(vals, cl.weight, len(cl.class), alphaPrime); done {
		return lo, hi, undefined, ok
	}
	rows := cl.rows(vals)
	defer putBuf(rows)
	return heapInterval(rows, alphaPrime)
}

// heapInterval is percentileInterval by compacting the NaNs out and one
// extremeRanks pass: the reference that sampledInterval must reproduce.
func heapInterval(reps []float64, alphaPrime float64) (lo, hi float64, undefined int, ok bool) {
	// Most replicate sets hold no NaN: find the first one before paying
	// for a compacting copy.
	k := 0
	for k < len(reps) && !math.IsNaN(reps[k]) {
		k++
	}
	for _, v := range reps[min(k+1, len(reps)):] {
		if !math.IsNaN(v) {
			reps[k] = v
			k++
		}
	}
	undefined = len(reps) - k
	reps = reps[:k]
	if k < 2 {
		return 0, 0, undefined, false
	}
	j := min(percentileRank(k, alphaPrime), k/2)
	lo, hi = extremeRanks(reps, j)
	return lo, hi, undefined, true
}

// Sampled selection. The endpoints are the j-th smallest and largest of
// about 10⁴ replicates with j ≈ 50–250. A heap pass spends most of its time
// on the few hundred values that enter a heap (unpredictable branches); a
// strided sample instead gives bounds that at least j replicates lie beyond,
// one pass collects the replicates beyond them (a few hundred), and a
// selection among those finds the exact endpoints. The endpoints are order
// statistics, so they equal heapInterval's; the one ambiguity of value
// equality, 0 versus −0, is checked (unsignedZero) and falls back to
// heapInterval.
const (
	sampleMinReps = 2000 // below this the heap pass is cheap
	sampleStride  = 8
)

// sampleBounds returns bounds tlo ≤ thi from every sampleStride-th non-NaN
// key such that, with high probability, at least j of all keys are ≤ tlo
// and at least j are ≥ thi (callers check). ok is false when the sample is
// too small.
func sampleBounds(keys []float64, j int) (tlo, thi float64, ok bool) {
	buf := getBuf(len(keys)/sampleStride + 1)
	defer putBuf(buf)
	sample := buf[:0]
	for i := sampleStride / 2; i < len(keys); i += sampleStride {
		if v := keys[i]; !math.IsNaN(v) {
			sample = append(sample, v)
		}
	}
	// The sample's i-th smallest has about i·stride keys below it: aim
	// three standard deviations past j.
	expect := float64(j) * float64(len(sample)) / float64(len(keys))
	i := int(math.Ceil(expect+3*math.Sqrt(expect))) + 2
	if i > len(sample)/4 {
		return 0, 0, false
	}
	tlo, thi = extremeRanks(sample, i)
	return tlo, thi, true
}

// sampledInterval is heapInterval by sampled selection over n replicates:
// the values vals, each weight[i] times (weight nil: once). done is false
// when the caller must run heapInterval instead. Replicates equal to a bound
// are counted, not collected: when most replicates are one value (a metric
// that is almost always 0) the bounds coincide and both endpoints come from
// the few replicates on either side and that count.
func sampledInterval(vals []float64, weight []int32, n int, alphaPrime float64) (lo, hi float64, undefined int, ok, done bool) {
	if n < sampleMinReps {
		return 0, 0, 0, false, false
	}
	// NaNs only lower j, so bounds for all n replicates are safe.
	tlo, thi, okB := sampleBounds(vals, min(percentileRank(n, alphaPrime), n/2))
	if !okB {
		return 0, 0, 0, false, false
	}
	if weight == nil {
		weight = unitWeights(len(vals))
	}
	lowBuf, highBuf := getBuf(n), getBuf(n)
	defer putBuf(lowBuf)
	defer putBuf(highBuf)
	low, high := lowBuf[:0], highBuf[:0] // replicates < tlo, > thi
	var atLo, atHi, negLo, negHi int     // replicates = tlo, = thi, and of those with the sign bit
	var outside []int32
	if tlo == thi {
		// Most replicates are this one value: count them by their bits
		// (so a −0 among +0s still goes through the switch below).
		outside = outsideValue(vals, tlo)
		atLo = n
		for _, i := range outside {
			atLo -= int(weight[i])
		}
		if math.Signbit(tlo) {
			negLo = atLo
		}
	} else {
		outside = outsideBounds(vals, tlo, thi)
	}
	defer putIndexBuf(outside)
	for _, i := range outside {
		v, w := vals[i], int(weight[i])
		switch {
		case v < tlo:
			for range w {
				low = append(low, v)
			}
		case v == tlo:
			atLo += w
			if math.Signbit(v) {
				negLo += w
			}
		case v > thi:
			for range w {
				high = append(high, v)
			}
		case v == thi:
			atHi += w
			if math.Signbit(v) {
				negHi += w
			}
		default: // NaN
			undefined += w
		}
	}
	k := n - undefined
	if k < 2 {
		return 0, 0, undefined, false, true
	}
	j := min(percentileRank(k, alphaPrime), k/2)
	single := tlo == thi // then every replicate is < t, = t (atLo) or > t
	// The j-th smallest.
	switch {
	case len(low) >= j:
		lo = selectKth(low, j-1)
		ok = unsignedZero(lo, low)
	case len(low)+atLo >= j:
		lo, ok = tlo, tlo != 0 || negLo == 0 || negLo == atLo
	case single:
		lo = selectKth(high, j-len(low)-atLo-1)
		ok = unsignedZero(lo, high)
	}
	if !ok {
		return 0, 0, 0, false, false
	}
	// The j-th largest.
	at, neg := atHi, negHi
	if single {
		at, neg = atLo, negLo
	}
	ok = false
	switch {
	case len(high) >= j:
		hi = selectKth(high, len(high)-j)
		ok = unsignedZero(hi, high)
	case len(high)+at >= j:
		hi, ok = thi, thi != 0 || neg == 0 || neg == at
	case single:
		hi = selectKth(low, len(low)-(j-len(high)-at))
		ok = unsignedZero(hi, low)
	}
	if !ok {
		return 0, 0, 0, false, false
	}
	return lo, hi, undefined, true, true
}

// outsideBounds returns the indices of the values of xs not strictly
// between lo and hi (NaNs included), in a pooled buffer. The scan is kept
// apart from the handling of those few values: with nothing else live in
// the loop, nothing is spilled per value.
func outsideBounds(xs []float64, lo, hi float64) []int32 {
	idx := getIndexBuf(len(xs))
	n := 0
	for i, v := range xs {
		idx[n] = int32(i)
		if !(v > lo && v < hi) {
			n++
		}
	}
	return idx[:n]
}

// outsideValue returns the indices of the values of xs whose bits differ
// from x's, in a pooled buffer.
func outsideValue(xs []float64, x float64) []int32 {
	idx := getIndexBuf(len(xs))
	bits, n := math.Float64bits(x), 0
	for i, v := range xs {
		idx[n] = int32(i)
		if math.Float64bits(v) != bits {
			n++
		}
	}
	return idx[:n]
}

func getIndexBuf(n int) []int32 { return indexPool.get(n) }
func putIndexBuf(b []int32)     { indexPool.put(b) }

// unsignedZero reports whether an endpoint x selected from cands is
// unambiguous: nonzero (equal values then have equal bits), or a zero whose
// sign every zero among cands shares. Every replicate equal to an endpoint
// is among its candidates, so the heap pass returns the same bits.
func unsignedZero(x float64, cands []float64) bool {
	if x != 0 {
		return true
	}
	neg := math.Signbit(x)
	for _, v := range cands {
		if v == 0 && math.Signbit(v) != neg {
			return false
		}
	}
	return true
}

// classLogRatioInterval is percentileInterval of the log ratios
// d_r = log(rb_r) − log(ra_r) (a difference of logs negates exactly when
// the arms swap) of the class values ra, rb (cl nil: they are the
// replicates), without taking 2B logarithms: it selects on the quotients
// q_r = rb_r/ra_r and takes logs only of the candidates near each endpoint.
// ra may be overwritten with the d_r.
//
// Why that is exact: |d_r − ln q_r| is a few ulps of |log x| ≤ 745, below
// 10⁻¹², so quotients more than a factor 1 ± 10⁻⁹ apart have log ratios in
// the same order. If at least j quotients are ≤ T, the j-th smallest d is
// ≤ ln T + 10⁻¹², and every replicate with q > T·(1+10⁻⁹) has a larger d:
// the j-th smallest d is the j-th smallest among the replicates with
// q ≤ T·(1+10⁻⁹). Likewise at the top. Zeros and infinities give q = 0 or
// +Inf exactly where d = −Inf or +Inf, and NaN exactly where d is NaN; any
// other quotient outside the normal range (overflow, underflow, a negative
// value) falls back to taking every log.
func classLogRatioInterval(ra, rb []float64, cl *rowClasses, alphaPrime float64) (lo, hi float64, undefined int, ok bool) {
	weight, n := []int32(nil), len(ra)
	if cl != nil {
		weight, n = cl.weight, len(cl.class)
	}
	if a, sameA := sameBits(ra); sameA {
		if b, sameB := sameBits(rb); sameB {
			// Every log ratio is d: the endpoints are d, or none when d is
			// NaN (every replicate undefined).
			d := math.Log(b) - math.Log(a)
			if math.IsNaN(d) {
				return 0, 0, n, false
			}
			if n < 2 {
				return 0, 0, 0, false
			}
			return d, d, 0, true
		}
	}
	if lo, hi, undefined, ok, done := sampledLogRatioInterval(ra, rb, weight, n, alphaPrime); done {
		return lo, hi, undefined, ok
	}
	for i := range ra {
		ra[i] = math.Log(rb[i]) - math.Log(ra[i])
	}
	return classInterval(ra, cl, alphaPrime)
}

// logRatioBand is the relative margin around the quotient bounds; see
// classLogRatioInterval.
const logRatioBand = 1e-9

// sampledLogRatioInterval is sampledInterval of the log ratios of ra and
// rb (values weighted as there).
func sampledLogRatioInterval(ra, rb []float64, weight []int32, n int, alphaPrime float64) (lo, hi float64, undefined int, ok, done bool) {
	if n < sampleMinReps {
		return 0, 0, 0, false, false
	}
	q := getBuf(len(ra))
	defer putBuf(q)
	for i := range q {
		v := rb[i] / ra[i]
		q[i] = v
		if !(v >= 0x1p-1000 && v <= 0x1p1000) && !exactQuotient(v, ra[i], rb[i]) {
			return 0, 0, 0, false, false
		}
	}
	tlo, thi, okB := sampleBounds(q, min(percentileRank(n, alphaPrime), n/2))
	if !okB {
		return 0, 0, 0, false, false
	}
	bandLo, bandHi := tlo*(1+logRatioBand), thi*(1-logRatioBand)
	if !(bandLo < bandHi) {
		return 0, 0, 0, false, false
	}
	if weight == nil {
		weight = unitWeights(len(ra))
	}
	lowBuf, highBuf := getBuf(n), getBuf(n)
	defer putBuf(lowBuf)
	defer putBuf(highBuf)
	low, high := lowBuf[:0], highBuf[:0]
	var atLo, atHi int // quotients ≤ tlo and ≥ thi
	outside := outsideBounds(q, bandLo, bandHi)
	defer putIndexBuf(outside)
	for _, i := range outside {
		v := q[i]
		if v <= bandLo {
			w := int(weight[i])
			d := math.Log(rb[i]) - math.Log(ra[i])
			for range w {
				low = append(low, d)
			}
			if v <= tlo {
				atLo += w
			}
		} else if v >= bandHi {
			w := int(weight[i])
			d := math.Log(rb[i]) - math.Log(ra[i])
			for range w {
				high = append(high, d)
			}
			if v >= thi {
				atHi += w
			}
		} else if math.IsNaN(v) {
			undefined += int(weight[i])
		}
	}
	k := n - undefined
	if k < 2 {
		return 0, 0, undefined, false, true
	}
	j := min(percentileRank(k, alphaPrime), k/2)
	if atLo < j || atHi < j {
		return 0, 0, 0, false, false
	}
	lo, hi = selectKth(low, j-1), selectKth(high, len(high)-j)
	if !unsignedZero(lo, low) || !unsignedZero(hi, high) {
		return 0, 0, 0, false, false
	}
	return lo, hi, undefined, true, true
}

// sameBits reports whether every value of xs has the bits of xs[0], and
// that value is not NaN, returning it.
func sameBits(xs []float64) (float64, bool) {
	if len(xs) == 0 || math.IsNaN(xs[0]) {
		return 0, false
	}
	b := math.Float64bits(xs[0])
	for _, v := range xs[1:] {
		if math.Float64bits(v) != b {
			return 0, false
		}
	}
	return xs[0], true
}

// unitWeights returns n weights of 1 (shared, read-only).
func unitWeights(n int) []int32 {
	if p := unitWeightCache.Load(); p != nil && len(*p) >= n {
		return (*p)[:n]
	}
	w := make([]int32, n)
	for i := range w {
		w[i] = 1
	}
	unitWeightCache.Store(&w)
	return w
}

var unitWeightCache atomic.Pointer[[]int32]

// exactQuotient reports whether a quotient q = b/a outside the normal range
// still orders like log b − log a: NaN where that is NaN, 0 where it is
// −Inf and +Inf where it is +Inf.
func exactQuotient(q, a, b float64) bool {
	switch {
	case math.IsNaN(q):
		return true
	case q == 0:
		return b == 0 || math.IsInf(a, 1)
	case math.IsInf(q, 1):
		return a == 0 || math.IsInf(b, 1)
	}
	return false
}

// extremeRanks returns the j-th smallest and the j-th largest (1-based) of
// xs in one pass, keeping the j smallest in a max-heap and the j largest in
// a min-heap. The ranks are near the ends (j ≈ 50–250 of 10⁴), so few values
// enter a heap after the first j and the pass is about 2n comparisons; the
// result is an order statistic, so it does not depend on xs's order. The
// heaps are typed (no comparison callback): this scan runs for every CI.
func extremeRanks(xs []float64, j int) (lo, hi float64) {
	var stack [256]float64 // the usual j fits: no allocation per CI
	heaps := stack[:]
	if 2*j > len(stack) {
		heaps = make([]float64, 2*j)
	}
	heaps = heaps[:2*j]
	small := heaps[:j:j] // max-heap: small[0] is the largest of the j smallest
	large := heaps[j:]   // min-heap: large[0] is the smallest of the j largest
	for i, v := range xs[:j] {
		small[i] = v
		siftUpMax(small, i)
		large[i] = v
		siftUpMin(large, i)
	}
	// The heap roots live in locals: the scan then compares registers, and
	// memory is touched only when a value enters a heap.
	lo, hi = small[0], large[0]
	for _, v := range xs[j:] {
		if v < lo {
			small[0] = v
			siftDownMax(small)
			lo = small[0]
		}
		if v > hi {
			large[0] = v
			siftDownMin(large)
			hi = large[0]
		}
	}
	return lo, hi
}

// siftUpMax and siftDownMax keep h a max-heap; siftUpMin and siftDownMin a
// min-heap.
func siftUpMax(h []float64, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !(h[i] > h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftUpMin(h []float64, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !(h[i] < h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDownMax(h []float64) {
	i, n := 0, len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h[c+1] > h[c] {
			c++
		}
		if !(h[c] > h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

func siftDownMin(h []float64) {
	i, n := 0, len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h[c+1] < h[c] {
			c++
		}
		if !(h[c] < h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// tQuantiles caches t_{ν, p}: the jackknife and trend CIs ask for the same
// few degrees of freedom many times.
var tQuantiles sync.Map // [2]float64{ν, p} → float64

func studentT(nu, p float64) float64 {
	key := [2]float64{nu, p}
	if v, ok := tQuantiles.Load(key); ok {
		return v.(float64)
	}
	v := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(p)
	tQuantiles.Store(key, v)
	return v
}
