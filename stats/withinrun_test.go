package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
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
		p.L, p.SigmaRun = 600, sigmaRun
		rng := rand.New(rand.NewPCG(seed, 3))
		hits, none := 0, 0
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
			if w.RatioCI == nil {
				none++
				continue
			}
			if w.RatioCI[0] <= 1.1 && 1.1 <= w.RatioCI[1] {
				hits++
			}
			block += w.BaselineBlocks[0] / experiments // over all experiments
		}
		if none > experiments/2 {
			t.Fatalf("σ_run %g: %d of %d experiments without an interval", sigmaRun, none, experiments)
		}
		return float64(hits) / float64(experiments-none), block
	}
	c0, b0 := cover(0, 11)
	c5, _ := cover(0.05, 12)
	t.Logf("within-run coverage over %d experiments (L = 600, φ = 0.9): no run effect %.3f (mean block length %.1f), 5%% run effect %.3f", experiments, c0, b0, c5)
	if c0 < 0.85 {
		t.Errorf("coverage without run effect %.3f: want ≥ 0.85 (0.883 when written)", c0)
	}
	if c5 > 0.75 {
		t.Errorf("coverage with a 5%% run effect %.3f: expected well below 0.95", c5)
	}
}

// withinRunFalsePositives compares two runs of the same program (AR(1)
// log steps with φ, L steps, CIRuns' spikes, no run effect) in each of
// experiments experiments and counts those called different (the 95%
// ratio-of-means interval excludes 1) and those with no interval.
func withinRunFalsePositives(t *testing.T, phi float64, L, experiments int, seed uint64) (differ, none int) {
	t.Helper()
	p := dgp.CIRuns()
	p.L, p.SigmaRun, p.Phi = L, 0, phi
	rng := rand.New(rand.NewPCG(seed, uint64(L)))
	for e := range experiments {
		a, b := p.Run(rng, 1), p.Run(rng, 1)
		w, err := CompareWithinRun("x", "wall_ns", StatMean, "A", "B", [][]float64{a}, [][]float64{b}, Options{Resamples: 1999, Seed: uint64(e + 1)})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case w.RatioCI == nil:
			none++
			if w.Reason == "" {
				t.Fatalf("no interval and no reason: %+v", w)
			}
		case w.RatioCI[0] > 1 || w.RatioCI[1] < 1:
			differ++
		}
	}
	return differ, none
}

// TestWithinRunFalsePositives: two runs of one program are called
// different in at most about 5% of experiments (the interval's promise),
// and runs too short for their autocorrelation get no interval. Small
// version (about 3 s); the grid of docs/statistics.md §12 runs with
// NSYSPHASE_COVERAGE=1 (TestWithinRunFalsePositiveGrid).
func TestWithinRunFalsePositives(t *testing.T) {
	const experiments = 100
	var differ, runs int
	for _, c := range []struct {
		phi float64
		L   int
	}{{0.5, 100}, {0.7, 200}, {0.9, 400}} {
		d, none := withinRunFalsePositives(t, c.phi, c.L, experiments, withinRunSeed)
		t.Logf("φ %.1f, %d steps: called different %d of %d (no interval %d)", c.phi, c.L, d, experiments, none)
		differ += d
		runs += experiments - none
	}
	// 5% plus 1.6 Monte Carlo SEs; the Politis–White blocks alone gave 10–16%.
	if runs < 150 || float64(differ) > 0.07*float64(runs) {
		t.Errorf("two identical programs called different in %d of %d experiments with an interval: want ≤ 7%%", differ, runs)
	}
	_, none := withinRunFalsePositives(t, 0.9, 100, 20, withinRunSeed)
	if none < 15 {
		t.Errorf("φ 0.9, 100 steps: %d of 20 without an interval: want most (about 4 blocks of ~23 steps)", none)
	}
}

// withinRunSeed is the fixed seed of the within-run calibration tests.
const withinRunSeed = 20261205

// TestWithinRunFalsePositiveGrid is docs/statistics.md §12's table: 400
// experiments per cell, φ 0.5/0.7/0.8/0.9 × 100/200/400/1000 steps. Each cell
// with an interval calls identical runs different in at most 5% plus two
// Monte Carlo SEs, and all cells together in at most 5%.
func TestWithinRunFalsePositiveGrid(t *testing.T) {
	skipUnlessFullCoverage(t)
	const experiments = 400
	type cell struct {
		phi                float64
		L, differ, none, i int
	}
	var cells []*cell
	for _, phi := range []float64{0.5, 0.7, 0.8, 0.9} {
		for _, L := range []int{100, 200, 400, 1000} {
			cells = append(cells, &cell{phi: phi, L: L, i: len(cells)})
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, c := range cells {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c.differ, c.none = withinRunFalsePositives(t, c.phi, c.L, experiments, withinRunSeed+uint64(c.i))
		})
	}
	wg.Wait()
	var b strings.Builder
	b.WriteString("| φ | 100 steps | 200 | 400 | 1000 |\n|---:|---:|---:|---:|---:|\n")
	var differ, runs int
	for _, c := range cells {
		if c.L == 100 {
			fmt.Fprintf(&b, "| %.1f |", c.phi)
		}
		n := experiments - c.none
		switch {
		case n == 0:
			b.WriteString(" no interval |")
		case c.none > 0:
			fmt.Fprintf(&b, " %.1f%% (%.1f%% no interval) |", 100*float64(c.differ)/float64(n), 100*float64(c.none)/experiments)
		default:
			fmt.Fprintf(&b, " %.1f%% |", 100*float64(c.differ)/float64(n))
		}
		if c.L == 1000 {
			b.WriteString("\n")
		}
		differ += c.differ
		runs += n
		if n >= 100 {
			se := math.Sqrt(0.05 * 0.95 / float64(n))
			if float64(c.differ)/float64(n) > 0.05+2*se {
				t.Errorf("φ %.1f, %d steps: called different %d of %d", c.phi, c.L, c.differ, n)
			}
		}
	}
	t.Logf("identical runs called different (%d experiments a cell, B = 1999, seed %d+cell):\n%s", experiments, withinRunSeed, b.String())
	if float64(differ) > 0.05*float64(runs) {
		t.Errorf("all cells: %d of %d called different: want ≤ 5%%", differ, runs)
	}
}

// TestWithinRunDeterministic: same seed, same interval; swapped arms give
// the reciprocal point ratio.
func TestWithinRunDeterministic(t *testing.T) {
	p := dgp.CIRuns()
	p.L = 1000
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
