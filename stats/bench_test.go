package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// benchUnits builds nUnits interleaved blocks (arms A, B alternating) of
// steps × metrics lognormal values, in ns.
func benchUnits(nUnits, steps, metrics int) ([]string, []Unit) {
	rng := rand.New(rand.NewPCG(7, 7))
	names := make([]string, metrics)
	for m := range names {
		names[m] = fmt.Sprintf("m%02d", m)
	}
	units := make([]Unit, nUnits)
	for i := range units {
		arm := armNames[i%2]
		s := make([][]float64, metrics)
		for m := range s {
			s[m] = make([]float64, steps)
			for t := range s[m] {
				s[m][t] = math.Round(1e6 * float64(m+1) * math.Exp(0.2*rng.NormFloat64()))
			}
		}
		units[i] = Unit{ID: fmt.Sprintf("u%02d", i), Arm: arm, Profile: "p", Start: int64(i) * 1e9, Steps: s}
	}
	return names, units
}

func benchAnalyze(b *testing.B, nUnits, steps, metrics int, opt Options) {
	names, units := benchUnits(nUnits, steps, metrics)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze("bench", names, units, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// 16 units (8 rounds) × 250 steps × 20 metrics, B = 9999: mean CIs for all
// metrics, median CI for metric 0.
func BenchmarkAnalyzeMeans(b *testing.B) { benchAnalyze(b, 16, 250, 20, Options{}) }

// The same with p90/p99 CIs of metric 0.
func BenchmarkAnalyzeQuantiles(b *testing.B) { benchAnalyze(b, 16, 250, 20, Options{Quantiles: true}) }

// The same with quantile CIs for all 20 metrics (the expensive path).
func BenchmarkAnalyzeAllQuantiles(b *testing.B) {
	all := make([]int, 20)
	for i := range all {
		all[i] = i
	}
	benchAnalyze(b, 16, 250, 20, Options{Quantiles: true, QuantileMetrics: all})
}

// One phase as the integrator sees it: 30 metrics, 16 blocks × 500 steps.
func BenchmarkAnalyzePhase30(b *testing.B) { benchAnalyze(b, 16, 500, 30, Options{Quantiles: true}) }

// The hot loop alone: weighted quantile of 4000 pooled steps over 16 groups.
func BenchmarkWeightedQuantile(b *testing.B) {
	_, units := benchUnits(16, 250, 1)
	for i := range units {
		units[i].Arm = "A"
	}
	cfg := testConfig([]string{"m"}, Options{})
	ptrs := make([]*Unit, len(units))
	for i := range units {
		ptrs[i] = &units[i]
	}
	a := newArmData("A", ptrs, 1, cfg.primary)
	pl := buildArmPlan(a, cfg.primary)
	pl.draw(1, "k", 9999, 0.95)
	s := pl.sides[0]
	for b.Loop() {
		for r := range pl.b {
			s.quantile(0, 0.5, pl.row(0, r))
		}
	}
}

// One expanded-percentile CI of B = 9999 replicates at n = 8 (j = 57), the
// step every CI ends with.
func BenchmarkPercentileInterval(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	reps := make([]float64, 9999)
	for i := range reps {
		reps[i] = rng.NormFloat64()
	}
	alpha := expandedAlpha(8, 0.95)
	work := make([]float64, len(reps))
	for b.Loop() {
		copy(work, reps)
		percentileInterval(work, alpha)
	}
}
