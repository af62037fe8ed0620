package stats

// The comparisons' expanded-percentile bootstrap CIs over a plan's
// resamples (docs/statistics.md §3.3).

import "math"

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
