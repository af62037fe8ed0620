package stats

// The cluster jackknife-t: the CI method at small n (docs/statistics.md §3.4),
// and the cross-check hulled with the bootstrap for a mean.

import (
	"math"
	"slices"
)

// jointStat evaluates a statistic of all sides under one count vector each.
type jointStat func(cs [][]int32) float64

// jackknife returns θ̂ (all groups) and se_J of h. Paired plans delete one
// round from both sides; otherwise each side's deletions add their variance
// (the two-sample jackknife).
func (pl *plan) jackknife(h jointStat) (theta, se float64, ok bool) {
	full := make([][]int32, len(pl.sides))
	for i, s := range pl.sides {
		full[i] = s.ones
	}
	theta = h(full)
	if pl.paired {
		groups := pl.sides[0].groups
		thetas := make([]float64, groups)
		for d := range groups {
			c := slices.Clone(pl.sides[0].ones)
			c[d] = 0
			cs := make([][]int32, len(pl.sides))
			for i := range cs {
				cs[i] = c
			}
			thetas[d] = h(cs)
		}
		s, okJ := jackknifeSE(thetas)
		return theta, s, okJ
	}
	var variance float64
	for side := range pl.sides {
		groups := pl.sides[side].groups
		thetas := make([]float64, groups)
		for d := range groups {
			c := slices.Clone(pl.sides[side].ones)
			c[d] = 0
			cs := slices.Clone(full)
			cs[side] = c
			thetas[d] = h(cs)
		}
		s, okJ := jackknifeSE(thetas)
		if !okJ {
			return theta, 0, false
		}
		variance += s * s
	}
	return theta, math.Sqrt(variance), true
}

// expandedTInterval is the jackknife-t interval of a mean
// (docs/statistics.md §3.4): θ̂ ± √(n/(n−1))·t_{n−1,1−α/2}·se, the t
// interval widened by the factor the expanded percentile applies (§3.3).
// The plain t interval of a ratio of means covered 93.8–94.7 % at 3–7
// rounds on the spiky cell D1 and its lower end lay above the truth in
// up to 2.8 %; widened, 95.5–96.0 % and at most 2.0 % (TestRatioIntervalChoice).
func expandedTInterval(theta, se float64, n int, confidence float64) [2]float64 {
	t := math.Sqrt(float64(n)/float64(n-1)) * studentT(float64(n-1), 1-(1-confidence)/2)
	return [2]float64{theta - t*se, theta + t*se}
}

// tInterval is θ ± t_{n−1,1−α/2}·se.
func tInterval(theta, se float64, n int, confidence float64) [2]float64 {
	t := studentT(float64(n-1), 1-(1-confidence)/2)
	return [2]float64{theta - t*se, theta + t*se}
}

// logScaleJackknife runs the jackknife-t of f on the log scale when f > 0
// (ratios and arm values, docs/statistics.md §3.4) and on the raw scale
// otherwise; for a mean (expand) widened as expandedTInterval.
func logScaleJackknife(pl *plan, h jointStat, expand bool, confidence float64) *[2]float64 {
	full := make([][]int32, len(pl.sides))
	for i, s := range pl.sides {
		full[i] = s.ones
	}
	if v := h(full); v > 0 {
		ci, ok := jackInterval(pl, func(cs [][]int32) float64 { return math.Log(h(cs)) }, expand, confidence)
		if !ok {
			return nil
		}
		return &[2]float64{math.Exp(ci[0]), math.Exp(ci[1])}
	}
	ci, ok := jackInterval(pl, h, expand, confidence)
	if !ok {
		return nil
	}
	return &ci
}

// jackInterval is the jackknife-t interval of h: widened for a mean
// (expandedTInterval), θ̂ ± t·se otherwise.
func jackInterval(pl *plan, h jointStat, expand bool, confidence float64) ([2]float64, bool) {
	theta, se, ok := pl.jackknife(h)
	if !ok {
		return [2]float64{}, false
	}
	if expand {
		return expandedTInterval(theta, se, pl.n, confidence), true
	}
	return tInterval(theta, se, pl.n, confidence), true
}

// jackCompare is the cluster jackknife-t CI of the log ratio (returned
// exponentiated) and of the difference; widened for a mean (expand).
func jackCompare(pl *plan, f statFunc, withRatio, expand bool, confidence float64) (ratioCI, diffCI *[2]float64) {
	if withRatio {
		ci, ok := jackInterval(pl, func(cs [][]int32) float64 { return math.Log(f(1, cs[1])) - math.Log(f(0, cs[0])) }, expand, confidence)
		if ok {
			ci = [2]float64{math.Exp(ci[0]), math.Exp(ci[1])}
			if finiteCI(ci) {
				ratioCI = &ci
			}
		}
	}
	ci, ok := jackInterval(pl, func(cs [][]int32) float64 { return f(1, cs[1]) - f(0, cs[0]) }, expand, confidence)
	if ok {
		diffCI = &ci
	}
	return ratioCI, diffCI
}

// skewed compares the jackknife-t cross-check with the bootstrap CI: an
// endpoint more than 25 % of the bootstrap width away flags skew or a
// tail-limited statistic (docs/statistics.md §5).
func skewed(boot, jack [2]float64) bool {
	w := boot[1] - boot[0]
	return math.Abs(jack[0]-boot[0]) > 0.25*w || math.Abs(jack[1]-boot[1]) > 0.25*w
}

// hullCI is the smallest interval holding both boot and jack (boot alone
// when jack is nil). A mean's CI at n ≥ 8 is the hull of the expanded
// percentile and the widened jackknife-t (docs/statistics.md §3.4): the
// percentile interval alone dipped to 93.7% coverage at 8 blocks where
// the jackknife-t, used up to 7, gave 95% (TestCoverageByBlocks).
func hullCI(boot, jack *[2]float64) *[2]float64 {
	if boot == nil || jack == nil {
		return boot
	}
	return &[2]float64{math.Min(boot[0], jack[0]), math.Max(boot[1], jack[1])}
}

// jackknifeSE is se_J = √((n−1)/n · Σ(θ̂_(−k) − θ̄)²) over the delete-one
// values. ok is false with fewer than two or a non-finite one.
func jackknifeSE(deleted []float64) (se float64, ok bool) {
	n := len(deleted)
	if n < 2 {
		return 0, false
	}
	var mean float64
	for _, v := range deleted {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false
		}
		mean += v
	}
	mean /= float64(n)
	var ss float64
	for _, v := range deleted {
		d := v - mean
		ss += d * d
	}
	return math.Sqrt(float64(n-1) / float64(n) * ss), true
}

// jackknifeT is the cluster jackknife-t interval θ̂ ± t_{n−1,1−α/2}·se_J,
// computed on whatever scale the caller passes (log for ratios and arm
// values).
func jackknifeT(theta float64, deleted []float64, confidence float64) (lo, hi, se float64, ok bool) {
	se, ok = jackknifeSE(deleted)
	if !ok || math.IsNaN(theta) || math.IsInf(theta, 0) {
		return 0, 0, 0, false
	}
	ci := tInterval(theta, se, len(deleted), confidence)
	return ci[0], ci[1], se, true
}
