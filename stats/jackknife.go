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

// tInterval is θ ± t_{n−1,1−α/2}·se.
func tInterval(theta, se float64, n int, confidence float64) [2]float64 {
	t := studentT(float64(n-1), 1-(1-confidence)/2)
	return [2]float64{theta - t*se, theta + t*se}
}

// logScale runs the jackknife-t of f on the log scale when f > 0 (ratios
// and arm values, docs/statistics.md §3.4) and on the raw scale otherwise.
func logScaleJackknife(pl *plan, h jointStat, confidence float64) *[2]float64 {
	full := make([][]int32, len(pl.sides))
	for i, s := range pl.sides {
		full[i] = s.ones
	}
	if v := h(full); v > 0 {
		theta, se, ok := pl.jackknife(func(cs [][]int32) float64 { return math.Log(h(cs)) })
		if !ok {
			return nil
		}
		ci := tInterval(theta, se, pl.n, confidence)
		return &[2]float64{math.Exp(ci[0]), math.Exp(ci[1])}
	}
	theta, se, ok := pl.jackknife(h)
	if !ok {
		return nil
	}
	ci := tInterval(theta, se, pl.n, confidence)
	return &ci
}

// jackCompare is the cluster jackknife-t CI of the log ratio (returned
// exponentiated) and of the difference.
func jackCompare(pl *plan, f statFunc, withRatio bool, confidence float64) (ratioCI, diffCI *[2]float64) {
	if withRatio {
		theta, se, ok := pl.jackknife(func(cs [][]int32) float64 { return math.Log(f(1, cs[1])) - math.Log(f(0, cs[0])) })
		if ok {
			ci := tInterval(theta, se, pl.n, confidence)
			ci = [2]float64{math.Exp(ci[0]), math.Exp(ci[1])}
			if finiteCI(ci) {
				ratioCI = &ci
			}
		}
	}
	theta, se, ok := pl.jackknife(func(cs [][]int32) float64 { return f(1, cs[1]) - f(0, cs[0]) })
	if ok {
		ci := tInterval(theta, se, pl.n, confidence)
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
// percentile and the cluster jackknife-t (docs/statistics.md §3.4): the
// percentile interval alone dipped to 93.7% coverage at 8 blocks where
// the jackknife-t, used up to 7, gave 95%; the hull covers 94.9–96.0% at
// every n from 8 to 20 on the no-spike cell D2.
func hullCI(boot, jack *[2]float64) *[2]float64 {
	if boot == nil || jack == nil {
		return boot
	}
	return &[2]float64{math.Min(boot[0], jack[0]), math.Max(boot[1], jack[1])}
}
