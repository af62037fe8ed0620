package stats

// The comparisons' expanded-percentile bootstrap CIs over a plan's
// resamples (docs/statistics.md §3.3).

import (
	"fmt"
	"math"
)

// bootCompare is the expanded-percentile CI of log(θ*_B/θ*_A) (returned
// exponentiated) and of θ*_B − θ*_A over the plan's resamples.
func bootCompare(pl *plan, replicates func(i int) []float64, withRatio bool) (ratioCI, diffCI *[2]float64, undefined int, unbounded bool) {
	return bootCompareValues(pl, replicates, nil, withRatio)
}

// bootCompareValues is bootCompare over values: per class of cl (shared by
// both sides), or per resample with cl nil.
func bootCompareValues(pl *plan, values func(i int) []float64, cl *rowClasses, withRatio bool) (ratioCI, diffCI *[2]float64, undefined int, unbounded bool) {
	ra, rb := values(0), values(1)
	diff := getBuf(len(ra))
	defer putBuf(ra)
	defer putBuf(rb)
	defer putBuf(diff)
	for r := range ra {
		diff[r] = rb[r] - ra[r]
	}
	lo, hi, undefined, ok := classInterval(diff, cl, pl.alphaP)
	if ok {
		diffCI = &[2]float64{lo, hi}
	}
	if withRatio {
		var lr *[2]float64
		lo, hi, und, ok := classLogRatioInterval(ra, rb, cl, pl.alphaP)
		if ok {
			lr = &[2]float64{lo, hi}
		}
		undefined = max(undefined, und)
		if lr != nil {
			ci := [2]float64{math.Exp(lr[0]), math.Exp(lr[1])}
			if finiteCI(ci) && !math.IsInf(lr[0], 0) && !math.IsInf(lr[1], 0) {
				ratioCI = &ci
			} else {
				unbounded = true
			}
		}
	}
	return ratioCI, diffCI, undefined, unbounded
}

// constantCompare is bootCompareValues when every one of the n replicates
// is va in the baseline and vb in the arm (side.constantMean): the CIs of
// n equal differences and log ratios, without the replicate arrays.
func constantCompare(va, vb float64, n int, withRatio bool) (ratioCI, diffCI *[2]float64, undefined int, unbounded bool) {
	switch d := vb - va; {
	case math.IsNaN(d):
		undefined = n
	case n >= 2:
		diffCI = &[2]float64{d, d}
	}
	if withRatio {
		lr := math.Log(vb) - math.Log(va)
		switch {
		case math.IsNaN(lr):
			undefined = n
		case n >= 2:
			ci := [2]float64{math.Exp(lr), math.Exp(lr)}
			if finiteCI(ci) && !math.IsInf(lr, 0) {
				ratioCI = &ci
			} else {
				unbounded = true
			}
		}
	}
	return ratioCI, diffCI, undefined, unbounded
}

func finiteCI(ci [2]float64) bool {
	return !math.IsInf(ci[0], 0) && !math.IsInf(ci[1], 0) && !math.IsNaN(ci[0]) && !math.IsNaN(ci[1])
}

func logCI(ci [2]float64) [2]float64 { return [2]float64{math.Log(ci[0]), math.Log(ci[1])} }

// bootCI sets c's bootstrap intervals (hulled with the jackknife-t's for
// the mean of a bootstrap plan).
func (e *metricEval) bootCI(c *Comparison, p float64, fBase statFunc, withRatio bool) {
	m, st := e.m, c.Stat
	base, pl := e.t.d.base, e.t.ci
	var und int
	var unbounded bool
	vals := func(i int) []float64 { return pl.quantileValues(i, m, p) }
	if st == StatMean {
		vals = func(i int) []float64 { return pl.meanValues(i, m) }
	}
	va, okA := pl.sides[0].constantMean(m)
	vb, okB := pl.sides[1].constantMean(m)
	if st == StatMean && okA && okB {
		c.RatioCI, c.DiffCI, und, unbounded = constantCompare(va, vb, pl.b, withRatio)
	} else {
		c.RatioCI, c.DiffCI, und, unbounded = bootCompareValues(pl, vals, pl.classes(), withRatio)
	}
	if und > 0 {
		e.flag(c, WarnUndefinedResamples, fmt.Sprintf("%d of %d resamples drew no present step in some arm; CIs use the rest", und, pl.b),
			map[string]float64{"undefined": float64(und), "b": float64(pl.b)})
	}
	if unbounded {
		e.flag(c, WarnUnboundedCI, "a resampled baseline value was 0: the ratio CI is unbounded and omitted", nil)
	}
	if st == StatMean && pl.method == MethodBootstrap {
		jr, jd := jackCompare(base, fBase, withRatio, true, e.cfg.confidence)
		c.JackknifeRatioCI = jr
		if (c.RatioCI != nil && jr != nil && skewed(logCI(*c.RatioCI), logCI(*jr))) ||
			(c.DiffCI != nil && jd != nil && skewed(*c.DiffCI, *jd)) {
			e.flag(c, WarnSkewedOrTailLimited, "the jackknife-t and bootstrap CIs disagree by more than 25% of the width", nil)
		}
		c.RatioCI, c.DiffCI = hullCI(c.RatioCI, jr), hullCI(c.DiffCI, jd)
	}
}
