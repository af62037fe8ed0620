package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Summary is a plain description of one sample, without confidence intervals.
// Quantiles use the package's single definition (stat.Empirical, see doc.go).
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Std    float64 `json:"std"` // sample standard deviation (n−1); 0 when N < 2
}

// Summarize describes xs. NaN values mark missing observations and are skipped;
// N counts the values present. With N == 0 every field is zero.
func Summarize(xs []float64) Summary {
	vals := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			vals = append(vals, x)
		}
	}
	if len(vals) == 0 {
		return Summary{}
	}
	slices.Sort(vals)
	s := Summary{
		N:      len(vals),
		Median: Quantile(0.5, vals),
		P90:    Quantile(0.9, vals),
		P99:    Quantile(0.99, vals),
		Min:    vals[0],
		Max:    vals[len(vals)-1],
	}
	if len(vals) >= 2 {
		s.Mean, s.Std = stat.MeanStdDev(vals, nil)
	} else {
		s.Mean = vals[0]
	}
	return s
}

// Quantile is the quantile definition used everywhere in nsysphase:
// stat.Quantile(p, stat.Empirical, sorted, nil), the lowest value whose
// cumulative count reaches p·n (even n gives the lower median). sorted must be
// ascending, non-empty and free of NaN.
func Quantile(p float64, sorted []float64) float64 {
	return stat.Quantile(p, stat.Empirical, sorted, nil)
}

// QuantileType7 is Hyndman–Fan type 7 (numpy's and R's default, linear
// interpolation between order statistics). It exists only to compare with
// notebooks; nsysphase's own numbers never use it. sorted must be ascending
// and non-empty.
func QuantileType7(p float64, sorted []float64) float64 {
	n := len(sorted)
	if n == 1 {
		return sorted[0]
	}
	h := float64(n-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i >= n-1 {
		return sorted[n-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}
