package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nsysphase/nsysphase/stats/internal/dgp"
)

// TestOptimalBlockLength: the Politis–White length grows with the
// autocorrelation and stays in its bounds.
func TestOptimalBlockLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	ar := func(phi float64, n int) []float64 {
		x := make([]float64, n)
		z := 0.0
		for i := range x {
			z = phi*z + rng.NormFloat64()
			x[i] = 10 + z
		}
		return x
	}
	b0, b5, b9 := OptimalBlockLength(ar(0, 1000)), OptimalBlockLength(ar(0.5, 1000)), OptimalBlockLength(ar(0.9, 1000))
	t.Logf("block lengths, n = 1000: φ = 0 %.2f, 0.5 %.2f, 0.9 %.2f", b0, b5, b9)
	if !(b0 < 3 && b5 > b0 && b9 > 2*b5 && b9 <= math.Ceil(3*math.Sqrt(1000))) {
		t.Errorf("block lengths %v %v %v", b0, b5, b9)
	}
	if OptimalBlockLength([]float64{1, 1, 1, 1, 1}) != 1 || OptimalBlockLength([]float64{1, 2}) != 1 {
		t.Error("constant or short series")
	}
}

// TestWithinRunCoverage: one run per arm, AR(1) steps (φ = 0.9) with
// spikes and no run effect: the stationary bootstrap's 95% interval of
// the ratio of means covers the truth in most experiments (the steps are
// not treated as independent). With a 5% run effect, which no within-run
// resampling can see, it covers far less: why the output says within-run.
func TestWithinRunCoverage(t *testing.T) {
	const experiments = 60
	cover := func(sigmaRun float64, seed uint64) (float64, float64) {
		p := dgp.CIRuns()
		p.L, p.SigmaRun = 400, sigmaRun
		rng := rand.New(rand.NewPCG(seed, 3))
		hits := 0
		var block float64
		for e := range experiments {
			a, b := p.Run(rng, 1), p.Run(rng, 1.1)
			w, err := CompareWithinRun("x", "wall_ns", StatMean, "A", "B", [][]float64{a}, [][]float64{b}, Options{Resamples: 1999, Seed: uint64(e + 1)})
			if err != nil {
				t.Fatal(err)
			}
			if w.Method != MethodWithinRunBootstrap || len(w.Warnings) != 1 || w.Warnings[0] != WarnRunToRunExcluded {
				t.Fatalf("%+v", w)
			}
			if w.RatioCI[0] <= 1.1 && 1.1 <= w.RatioCI[1] {
				hits++
			}
			block += w.BaselineBlocks[0] / experiments
		}
		return float64(hits) / experiments, block
	}
	c0, b0 := cover(0, 11)
	c5, _ := cover(0.05, 12)
	t.Logf("within-run coverage over %d experiments (L = 400, φ = 0.9): no run effect %.3f (mean block length %.1f), 5%% run effect %.3f", experiments, c0, b0, c5)
	if c0 < 0.85 {
		t.Errorf("coverage without run effect %.3f: want ≥ 0.85 (0.883 when written)", c0)
	}
	if c5 > 0.75 {
		t.Errorf("coverage with a 5%% run effect %.3f: expected well below 0.95", c5)
	}
}

// TestWithinRunDeterministic: same seed, same interval; swapped arms give
// the reciprocal point ratio.
func TestWithinRunDeterministic(t *testing.T) {
	p := dgp.CIRuns()
	p.L = 200
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := p.Run(rng, 1), p.Run(rng, 1.2)
	w1, _ := CompareWithinRun("k", "wall_ns", StatMedian, "A", "B", [][]float64{a}, [][]float64{b}, Options{Resamples: 1999})
	w2, _ := CompareWithinRun("k", "wall_ns", StatMedian, "A", "B", [][]float64{a}, [][]float64{b}, Options{Resamples: 1999})
	if *w1.RatioCI != *w2.RatioCI || w1.Seed != 1 || w1.B != 1999 {
		t.Fatalf("%v %v", *w1.RatioCI, *w2.RatioCI)
	}
	if _, err := CompareWithinRun("k", "wall_ns", StatMean, "A", "B", [][]float64{a}, [][]float64{b}, Options{Resamples: 100}); err == nil {
		t.Error("B = 100 accepted")
	}
}
