package stats

// The cluster jackknife-t: the CI method at small n (docs/statistics.md §3.4),
// and the cross-check hulled with the bootstrap for a mean.

import (
	"math"
	"slices"
)

// jointStat evaluates a statistic of all sides under one count vector each.
type jointStat func(cs [][]int32) float64

// jackknife returns θ̂ (all groups), se_J and the third moment of the
// deletions' influence values (jackSkew) of h. Paired plans delete one
// round from both sides; otherwise each side's deletions add their variance
// (the two-sample jackknife).
func (pl *plan) jackknife(h jointStat) (theta, se float64, sk jackSkew, ok bool) {
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
		sk.add(thetas)
		return theta, s, sk, okJ
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
			return theta, 0, sk, false
		}
		variance += s * s
		sk.add(thetas)
	}
	return theta, math.Sqrt(variance), sk, true
}

// jackSkew sums the second and third powers of the jackknife influence
// values v_k = (n−1)/n·(θ̄ − θ̂_(−k)) of every side: Σv³/(Σv²)^{3/2} is the
// skewness of θ̂, six times BCa's acceleration (Efron 1987).
type jackSkew struct{ s2, s3 float64 }

func (j *jackSkew) add(deleted []float64) {
	n := float64(len(deleted))
	m := meanOf(deleted)
	for _, d := range deleted {
		v := (n - 1) / n * (m - d)
		j.s2 += v * v
		j.s3 += v * v * v
	}
}

// gamma is the skewness of θ̂ (0 without spread).
func (j jackSkew) gamma() float64 {
	if j.s2 <= 0 || math.IsNaN(j.s3) {
		return 0
	}
	return j.s3 / math.Pow(j.s2, 1.5)
}

// skewInterval is the jackknife-t interval of a mean (docs/statistics.md
// §3.4): θ̂ ± t_{n−1,1−α/2}·se, lengthened on the side of the skew by
// |γ̂|/6·(2t²+1)·se (at most t·se), Hall's (1992) Edgeworth term for the
// quantiles of a studentized statistic, with γ̂ the jackknife skewness of
// θ̂. The other side is never shortened: γ̂ from 3–20 deletions is too
// noisy for that (the full correction covered 90–93 % on D1 at 3–7 rounds).
// On the spiky cell D1 the plain jackknife-t covered 93.7–94.2 % at 3–7
// rounds and its lower end lay above the truth in up to 3.0 % on D2.
func skewInterval(theta, se float64, sk jackSkew, n int, confidence float64) [2]float64 {
	t := studentT(float64(n-1), 1-(1-confidence)/2)
	adj := math.Max(-t, math.Min(t, sk.gamma()/6*(2*t*t+1)))
	return [2]float64{theta - se*(t+math.Max(0, -adj)), theta + se*(t+math.Max(0, adj))}
}

// tInterval is θ ± t_{n−1,1−α/2}·se.
func tInterval(theta, se float64, n int, confidence float64) [2]float64 {
	t := studentT(float64(n-1), 1-(1-confidence)/2)
	return [2]float64{theta - t*se, theta + t*se}
}

// logScaleJackknife runs the jackknife-t of f on the log scale when f > 0
// (ratios and arm values, docs/statistics.md §3.4) and on the raw scale
// otherwise; for a mean (skew) the skew-corrected one (skewInterval).
func logScaleJackknife(pl *plan, h jointStat, skew bool, confidence float64) *[2]float64 {
	full := make([][]int32, len(pl.sides))
	for i, s := range pl.sides {
		full[i] = s.ones
	}
	if v := h(full); v > 0 {
		ci, ok := jackInterval(pl, func(cs [][]int32) float64 { return math.Log(h(cs)) }, skew, confidence)
		if !ok {
			return nil
		}
		return &[2]float64{math.Exp(ci[0]), math.Exp(ci[1])}
	}
	ci, ok := jackInterval(pl, h, skew, confidence)
	if !ok {
		return nil
	}
	return &ci
}

// jackInterval is the jackknife-t interval of h: skew-corrected for a mean
// (skewInterval), θ̂ ± t·se otherwise.
func jackInterval(pl *plan, h jointStat, skew bool, confidence float64) ([2]float64, bool) {
	theta, se, sk, ok := pl.jackknife(h)
	if !ok {
		return [2]float64{}, false
	}
	if skew {
		return skewInterval(theta, se, sk, pl.n, confidence), true
	}
	return tInterval(theta, se, pl.n, confidence), true
}

// jackCompare is the cluster jackknife-t CI of the log ratio (returned
// exponentiated) and of the difference; skew-corrected for a mean.
func jackCompare(pl *plan, f statFunc, withRatio, skew bool, confidence float64) (ratioCI, diffCI *[2]float64) {
	if withRatio {
		ci, ok := jackInterval(pl, func(cs [][]int32) float64 { return math.Log(f(1, cs[1])) - math.Log(f(0, cs[0])) }, skew, confidence)
		if ok {
			ci = [2]float64{math.Exp(ci[0]), math.Exp(ci[1])}
			if finiteCI(ci) {
				ratioCI = &ci
			}
		}
	}
	ci, ok := jackInterval(pl, func(cs [][]int32) float64 { return f(1, cs[1]) - f(0, cs[0]) }, skew, confidence)
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
