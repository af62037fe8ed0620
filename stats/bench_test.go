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
	a := newArmData("A", ptrs, 1, cfg.primary, cfg.tune)
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

// phaseUnits builds one phase as nsysphase analyze hands it over: 8 rounds
// of interleaved blocks (A, B) × 250 steps × 47 metrics, metric 0 the wall
// and metrics 1–6 its exclusive parts (integer ns that sum to it), 7–9
// inner parts of part 3, and of the rest a third constant 0, a third a
// constant count and a third integer durations.
func phaseUnits() ([]string, []Unit, Options) {
	const nUnits, steps, metrics = 16, 250, 47
	rng := rand.New(rand.NewPCG(9, 9))
	names := make([]string, metrics)
	for m := range names {
		names[m] = fmt.Sprintf("m%02d", m)
	}
	units := make([]Unit, nUnits)
	for i := range units {
		s := make([][]float64, metrics)
		for m := range s {
			s[m] = make([]float64, steps)
		}
		for t := range steps {
			var wall float64
			for m := 1; m <= 6; m++ {
				v := math.Round(2e5 * float64(m) * math.Exp(0.3*rng.NormFloat64()))
				s[m][t] = v
				wall += v
			}
			s[0][t] = wall
			s[7][t] = math.Round(s[3][t] / 2)
			s[8][t] = math.Round(s[3][t] / 3)
			s[9][t] = s[3][t] - s[7][t] - s[8][t]
			for m := 10; m < metrics; m++ {
				switch m % 3 {
				case 0:
					s[m][t] = 0
				case 1:
					s[m][t] = float64(m)
				default:
					s[m][t] = math.Round(1e4 * math.Exp(rng.NormFloat64()))
				}
			}
		}
		units[i] = Unit{ID: fmt.Sprintf("u%02d", i), Arm: armNames[i%2], Profile: "p", Start: int64(i) * 1e9, Steps: s}
	}
	opt := Options{QuantileMetrics: []int{0}, Decompose: &Decomposition{Total: 0, Parts: []int{1, 2, 3, 4, 5, 6},
		Inner: []InnerPart{{Metric: 7, Of: 3}, {Metric: 8, Of: 3}, {Metric: 9, Of: 3}}}}
	return names, units, opt
}

// One phase of large_interleaved's shape, B = 9999 (the analyze hot path:
// arm summaries, paired comparison and decomposition of 47 metrics).
func BenchmarkAnalyzeRealisticPhase(b *testing.B) {
	names, units, opt := phaseUnits()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze("phase", names, units, opt); err != nil {
			b.Fatal(err)
		}
	}
}
