package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// A side: one arm inside one plan, its steps grouped into the plan's
// resampled units, with the point statistics under a count vector.

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
