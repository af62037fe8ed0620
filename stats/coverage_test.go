package stats

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nsysphase/nsysphase/stats/internal/dgp"
)

// The coverage suite of docs/statistics.md §9 (1–5, 9). It runs only with
// NSYSPHASE_COVERAGE=1 and uses B = 999. Seeds are fixed here and must not
// be tuned until the checks pass.

const (
	coverageB     = 999
	coverageSeedA = 20260101 // first fixed DGP seed
	coverageSeedB = 20260202 // second fixed seed, for D1 cells in [0.92, 0.93)
)

func skipUnlessCoverage(t *testing.T) {
	if v := os.Getenv("NSYSPHASE_COVERAGE"); v != "1" && v != "full" {
		t.Skip("coverage suite: set NSYSPHASE_COVERAGE=1")
	}
}

// skipUnlessFullCoverage gates the simulations of many minutes (every
// number of blocks, the interval comparison, the within-run grid): `make
// test-long` runs them with NSYSPHASE_COVERAGE=full; CI runs the suite of
// NSYSPHASE_COVERAGE=1, a few minutes on 2 cores.
func skipUnlessFullCoverage(t *testing.T) {
	if os.Getenv("NSYSPHASE_COVERAGE") != "full" {
		t.Skip("long coverage simulation: set NSYSPHASE_COVERAGE=full (make test-long)")
	}
}

// covKeys are the CIs tallied, in report order.
var covKeys = []string{
	"A mean", "A median", "A p90", "A p99", "B mean", "B median", "B p90", "B p99",
	"ratio mean", "diff mean", "ratio median", "diff median", "ratio p90", "diff p90", "ratio p99", "diff p99",
}

var covStats = []struct {
	name string
	p    float64
}{{StatMean, 0}, {StatMedian, 0.5}, {StatP90, 0.9}, {StatP99, 0.99}}

func truths(p dgp.Params) map[string]float64 {
	tr := map[string]float64{}
	var v [2][4]float64
	for a := range 2 {
		for i, s := range covStats {
			if s.p == 0 {
				v[a][i] = p.Mean(a)
			} else {
				v[a][i] = p.Quantile(a, s.p)
			}
			tr[armNames[a]+" "+s.name] = v[a][i]
		}
	}
	for i, s := range covStats {
		tr["ratio "+s.name] = v[1][i] / v[0][i]
		tr["diff "+s.name] = v[1][i] - v[0][i]
	}
	return tr
}

// cis collects a Result's wall CIs under covKeys.
func cis(r *Result) map[string]*[2]float64 {
	out := map[string]*[2]float64{}
	for _, a := range r.Arms {
		m := a.Metrics[0]
		out[a.Arm+" mean"], out[a.Arm+" median"], out[a.Arm+" p90"], out[a.Arm+" p99"] = m.MeanCI, m.MedianCI, m.P90CI, m.P99CI
	}
	for _, c := range r.Comparisons {
		out["ratio "+c.Stat], out["diff "+c.Stat] = c.RatioCI, c.DiffCI
	}
	return out
}

type tally struct {
	name    string
	runs    int
	hit, n  map[string]int
	above   map[string]int // CIs whose lower end lies above the truth
	width   map[string]float64
	methods map[string]int
}

func (t *tally) add(o *tally) {
	t.runs += o.runs
	for k := range o.n {
		t.hit[k] += o.hit[k]
		t.above[k] += o.above[k]
		t.n[k] += o.n[k]
		t.width[k] += o.width[k]
	}
	for k, v := range o.methods {
		t.methods[k] += v
	}
}

func (t *tally) cover(k string) float64 { return float64(t.hit[k]) / float64(t.n[k]) }

func (t *tally) report(tb testing.TB) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d experiments, methods %v):\n", t.name, t.runs, t.methods)
	for _, k := range covKeys {
		if t.n[k] > 0 {
			fmt.Fprintf(&b, "  %-13s coverage %.3f (n %4d, lower end above the truth %.3f)  mean width %.4g\n", k, t.cover(k), t.n[k], float64(t.above[k])/float64(t.n[k]), t.width[k]/float64(t.n[k]))
		}
	}
	tb.Log(b.String())
}

// experiment returns the CIs of one generated data set and its method.
type experiment func(blocks []dgp.Block, seed uint64) (map[string]*[2]float64, string)

// runCell runs experiments 0..runs−1 of cell p on all cores; each writes its
// own slot, so the tally does not depend on scheduling.
func runCell(name string, p dgp.Params, seed1 uint64, runs int, exp experiment) *tally {
	tr := truths(p)
	type out struct {
		ci     map[string]*[2]float64
		method string
	}
	results := make([]out, runs)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= runs {
					return
				}
				ci, m := exp(dgp.Generate(p, seed1, uint64(i)), uint64(i)+1)
				results[i] = out{ci, m}
			}
		})
	}
	wg.Wait()
	t := &tally{name: name, runs: runs, hit: map[string]int{}, above: map[string]int{}, n: map[string]int{}, width: map[string]float64{}, methods: map[string]int{}}
	for _, r := range results {
		t.methods[r.method]++
		for _, k := range covKeys {
			ci := r.ci[k]
			if ci == nil {
				continue
			}
			t.n[k]++
			t.width[k] += ci[1] - ci[0]
			if ci[0] <= tr[k] && tr[k] <= ci[1] {
				t.hit[k]++
			}
			if ci[0] > tr[k] {
				t.above[k]++
			}
		}
	}
	return t
}

// engineExperiment runs the real Analyze path at B = 999.
func engineExperiment(stratified bool) experiment {
	return func(blocks []dgp.Block, seed uint64) (map[string]*[2]float64, string) {
		cfg := testConfig([]string{"wall"}, Options{Resamples: coverageB, Seed: seed, Quantiles: true, Baseline: "A"})
		cfg.stratified = stratified
		r, err := analyze("cov", []string{"wall"}, dgpUnits(blocks), cfg)
		if err != nil {
			panic(err)
		}
		return cis(r), r.Method
	}
}

// naiveExperiment bootstraps steps i.i.d. (each step its own unit, arms
// independent): the benchstat/hyperfine/criterion approach §2 rejects.
func naiveExperiment(blocks []dgp.Block, seed uint64) (map[string]*[2]float64, string) {
	units := dgpUnits(blocks)
	primary := []bool{true}
	var sides []*side
	for _, arm := range armNames {
		var us []*Unit
		for i := range units {
			if units[i].Arm == arm {
				us = append(us, &units[i])
			}
		}
		a := newArmData(arm, us, 1, primary, tuning{})
		stepGrp := make([]int32, a.steps())
		labels := make([]string, a.steps())
		for i := range stepGrp {
			stepGrp[i] = int32(i)
		}
		sides = append(sides, newSide(a, stepGrp, len(stepGrp), labels, primary))
	}
	pl := &plan{sides: sides, n: min(sides[0].groups, sides[1].groups), level: "step", method: "naive"}
	pl.draw(seed, "naive", coverageB, 0.95)
	out := map[string]*[2]float64{}
	for _, s := range covStats[:3] { // §9.2 needs means, medians and p90
		reps := func(i int) []float64 { return pl.meanReplicates(i, 0) }
		if s.p > 0 {
			reps = func(i int) []float64 { return pl.quantileReplicates(i, 0, s.p) }
		}
		r, d, _, _ := bootCompare(pl, reps, true)
		out["ratio "+s.name], out["diff "+s.name] = r, d
	}
	return out, "naive-iid-steps"
}

func inRange(t *testing.T, tl *tally, keys []string, lo, hi float64) {
	t.Helper()
	for _, k := range keys {
		if c := tl.cover(k); c < lo || c > hi || tl.n[k] != tl.runs {
			t.Errorf("%s %s: coverage %.3f over %d, want [%.2f, %.2f] over %d", tl.name, k, c, tl.n[k], lo, hi, tl.runs)
		}
	}
}

func TestCoverage(t *testing.T) {
	skipUnlessCoverage(t)
	start := time.Now()
	defer func() {
		t.Logf("coverage suite: %v on %d cores", time.Since(start).Round(time.Second), runtime.GOMAXPROCS(0))
	}()
	meanMedian := []string{"A mean", "A median", "B mean", "B median", "ratio mean", "diff mean", "ratio median", "diff median"}

	t.Run("D1", func(t *testing.T) {
		tl := runCell("D1", dgp.D1(), coverageSeedA, 2000, engineExperiment(false))
		tl.report(t)
		// Cells in [0.92, 0.93) are judged on 4000 experiments with the second seed.
		tight := []string{"ratio mean", "diff mean", "ratio median", "diff median", "A median", "B median", "ratio p90"}
		var retry []string
		for _, k := range tight {
			if c := tl.cover(k); c >= 0.92 && c < 0.93 {
				retry = append(retry, k)
			}
		}
		if len(retry) > 0 {
			more := runCell("D1 second seed", dgp.D1(), coverageSeedB, 2000, engineExperiment(false))
			more.report(t)
			tl.add(more)
			tl.name = "D1 pooled"
			tl.report(t)
		}
		inRange(t, tl, tight, 0.93, 0.97)
		inRange(t, tl, []string{"A mean", "B mean"}, 0.92, 0.97)
		inRange(t, tl, []string{"A p90", "B p90", "A p99", "B p99", "ratio p99", "diff p99"}, 0.90, 1)
		if tl.methods[MethodBootstrap] != tl.runs {
			t.Errorf("D1 methods %v", tl.methods)
		}
	})
	t.Run("D2", func(t *testing.T) {
		tl := runCell("D2", dgp.D2(), coverageSeedA, 1000, engineExperiment(false))
		tl.report(t)
		inRange(t, tl, meanMedian, 0.93, 0.97)
	})
	t.Run("D3 paired vs stratified", func(t *testing.T) {
		paired := runCell("D3 paired", dgp.D3(), coverageSeedA, 1000, engineExperiment(false))
		paired.report(t)
		inRange(t, paired, meanMedian, 0.93, 0.97)
		strat := runCell("D3 stratified", dgp.D3(), coverageSeedA, 1000, engineExperiment(true))
		strat.report(t)
		for _, k := range []string{"ratio mean", "ratio median", "diff mean", "diff median"} {
			if c := strat.cover(k); c < 0.95 {
				t.Errorf("D3 stratified %s covers %.3f, want ≥ 0.95", k, c)
			}
			if strat.width[k] <= paired.width[k] {
				t.Errorf("D3 %s: stratified width %.4g not above paired %.4g", k, strat.width[k]/1000, paired.width[k]/1000)
			}
		}
	})
	t.Run("naive i.i.d. steps", func(t *testing.T) {
		d1 := runCell("D1 naive", dgp.D1(), coverageSeedA, 2000, naiveExperiment)
		d1.report(t)
		d2 := runCell("D2 naive", dgp.D2(), coverageSeedA, 1000, naiveExperiment)
		d2.report(t)
		for _, c := range []struct {
			tl *tally
			k  string
		}{{d1, "ratio median"}, {d1, "ratio p90"}, {d2, "ratio mean"}} {
			if cov := c.tl.cover(c.k); cov > 0.80 {
				t.Errorf("%s %s: naive coverage %.3f, want ≤ 0.80", c.tl.name, c.k, cov)
			}
		}
	})
	t.Run("small n", func(t *testing.T) {
		for k := 3; k <= 7; k++ {
			p := dgp.D1()
			p.K = k
			tl := runCell(fmt.Sprintf("D1 K=%d", k), p, coverageSeedA, 1000, engineExperiment(false))
			tl.report(t)
			// As §9.1 does for D1: a cell within one Monte Carlo SE (≈ 0.009)
			// below its bound is judged on 2000 experiments, adding the
			// second fixed seed.
			if c, m := tl.cover("ratio mean"), tl.cover("ratio median"); (c >= 0.91 && c < 0.92) || (m >= 0.92 && m < 0.93) {
				more := runCell(fmt.Sprintf("D1 K=%d second seed", k), p, coverageSeedB, 1000, engineExperiment(false))
				more.report(t)
				tl.add(more)
				tl.name = fmt.Sprintf("D1 K=%d pooled", k)
				tl.report(t)
			}
			if tl.methods[MethodJackknife] != tl.runs {
				t.Errorf("K=%d: methods %v, want the jackknife-t", k, tl.methods)
			}
			if c := tl.cover("ratio mean"); c < 0.92 {
				t.Errorf("K=%d ratio of means covers %.3f, want ≥ 0.92", k, c)
			}
			if c := tl.cover("ratio median"); c < 0.93 {
				t.Errorf("K=%d ratio of medians covers %.3f, want ≥ 0.93", k, c)
			}
			for _, q := range []string{"A p90", "A p99", "ratio p90", "ratio p99", "diff p99"} {
				if tl.n[q] != 0 {
					t.Errorf("K=%d: %s CI present", k, q)
				}
			}
		}
	})
	t.Run("single block within-run", func(t *testing.T) {
		p := dgp.D1()
		p.K, p.L, p.SigmaB, p.SigmaR = 1, 1000, 0, 0
		clean := runCell("K=1 L=1000 no run effects", p, coverageSeedA, 1000, engineExperiment(false))
		clean.report(t)
		inRange(t, clean, []string{"ratio mean", "ratio median", "diff median"}, 0.92, 0.97)
		if clean.methods[MethodWithinRun] != clean.runs {
			t.Errorf("methods %v", clean.methods)
		}
		p = dgp.D1()
		p.K, p.L = 1, 1000
		effects := runCell("K=1 L=1000 D1 effects", p, coverageSeedA, 1000, engineExperiment(false))
		effects.report(t)
		if c := effects.cover("ratio median"); c >= 0.80 {
			t.Errorf("with run effects the within-run median CI covers %.3f, want < 0.80", c)
		}
	})
	t.Run("decomposition", func(t *testing.T) {
		const runs = 1000
		include0 := make([][5]bool, runs)
		launchUp := make([]bool, runs)
		var next atomic.Int64
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= runs {
						return
					}
					metrics, units := decompUnits(decompDGP.Generate(coverageSeedA, uint64(i)))
					opt := decompOpt
					opt.Resamples, opt.Seed, opt.Baseline = coverageB, uint64(i)+1, "A"
					r, err := analyze("cov", metrics, units, testConfig(metrics, opt))
					if err != nil {
						panic(err)
					}
					var shares float64
					for k, c := range r.Decomposition {
						include0[i][k] = c.DiffCI[0] <= 0 && 0 <= c.DiffCI[1]
						shares += c.Share
					}
					launchUp[i] = r.Decomposition[1].DiffCI[0] > 0
					if w := findCmp(r, "wall", StatMean); math.Abs(shares-(*w.Ratio-1)) > 1e-12 {
						panic(fmt.Sprintf("shares %v ≠ R−1 %v", shares, *w.Ratio-1))
					}
				}
			})
		}
		wg.Wait()
		names := []string{"cpu_other", "launch", "sync", "alloc", "other_api"}
		var up int
		for _, u := range launchUp {
			if u {
				up++
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "decomposition (%d experiments, launch +%g ns): launch CI excludes 0 in %.3f\n", runs, decompDGP.Shift, float64(up)/runs)
		for k, name := range names {
			if k == 1 {
				continue
			}
			n := 0
			for _, inc := range include0 {
				if inc[k] {
					n++
				}
			}
			fmt.Fprintf(&b, "  %-10s CI includes 0 in %.3f\n", name, float64(n)/runs)
			if float64(n)/runs < 0.93 {
				t.Errorf("%s CI includes 0 in %.3f of experiments, want ≥ 0.93", name, float64(n)/runs)
			}
		}
		t.Log(b.String())
		if float64(up)/runs < 0.99 {
			t.Errorf("launch CI excludes 0 in only %.3f", float64(up)/runs)
		}
	})
}

// TestCoverageQuick is the coverage suite's small version, run by make
// test (about 3 s): one seeded cell per method and design, 200
// experiments each at B = 999, on D2 (no spikes, so the truth is not
// tail-limited), and the jackknife-t on the spiky D1, whose widening
// (docs/statistics.md §3.4) the D1 mean needs. Each 95% ratio CI of means and medians covers at least
// 0.95 − 3 Monte Carlo SEs (0.905), and its lower end lies above the truth
// (a false alarm of check at a limit equal to the true ratio) in at most
// 2.5% + 3 SEs (5.8%). The full suite (TestCoverage, 1000–4000
// experiments a cell) runs with NSYSPHASE_COVERAGE=1.
func TestCoverageQuick(t *testing.T) {
	const runs = 200
	se := math.Sqrt(0.05 * 0.95 / runs)
	cells := []struct {
		name       string
		k, l       int
		stratified bool
		method     string
		spiky      bool
	}{
		{"paired bootstrap, K=10", 10, 100, false, MethodBootstrap, false},
		{"stratified bootstrap, K=10", 10, 100, true, MethodBootstrap, false},
		{"jackknife-t, K=5", 5, 100, false, MethodJackknife, false},
		{"within-run batches, K=1", 1, 1000, false, MethodWithinRun, false},
		{"jackknife-t, K=5, spiky D1", 5, 100, false, MethodJackknife, true},
	}
	for i, c := range cells {
		p := dgp.D2()
		if c.spiky {
			p = dgp.D1()
		}
		p.K, p.L = c.k, c.l
		if c.k == 1 {
			p.SigmaB, p.SigmaR = 0, 0 // §4c's promise holds without run effects only
		}
		tl := runCell(c.name, p, coverageSeedA+uint64(i), runs, engineExperiment(c.stratified))
		tl.report(t)
		// §4c gives no CI below 5 batches (a few runs with long autocorrelation).
		if got := tl.methods[c.method]; got != runs && (c.method != MethodWithinRun || got+tl.methods[MethodNone] != runs || got < runs*9/10) {
			t.Errorf("%s: methods %v", c.name, tl.methods)
		}
		for _, k := range []string{"ratio mean", "ratio median"} {
			if cv := tl.cover(k); cv < 0.95-3*se || tl.n[k] != tl.methods[c.method] {
				t.Errorf("%s %s: coverage %.3f over %d, want ≥ %.3f", c.name, k, cv, tl.n[k], 0.95-3*se)
			}
			lowSE := math.Sqrt(0.025 * 0.975 / runs)
			if a := float64(tl.above[k]) / float64(tl.n[k]); c.method != MethodWithinRun && a > 0.025+3*lowSE {
				t.Errorf("%s %s: lower end above the truth in %.3f, want ≤ %.3f", c.name, k, a, 0.025+3*lowSE)
			}
		}
	}
}

// TestCoverageByBlocks is docs/statistics.md §10's per-K table (with
// NSYSPHASE_COVERAGE=1): the ratio-of-means CI at every number of rounds
// K = 3…20 on the spiky D1 and on D2, 1000 experiments each at B = 999
// (about 5 minutes on 2 cores), across the switch from the widened
// jackknife-t (K ≤ 7) to its hull with the bootstrap (K ≥ 8). Each K covers
// at least 0.94 − 2 SE and its lower end lies above the truth (check's false
// alarm at a limit equal to the true ratio) in at most 2.5% + 3 SE (3 SE
// since 36 cells are judged at once); pooled over K, each design covers at
// least 0.94 and its lower end lies above the truth in at most 2.5% + 2 SE.
func TestCoverageByBlocks(t *testing.T) {
	skipUnlessFullCoverage(t)
	const runs = 1000
	se, lowSE := math.Sqrt(0.05*0.95/runs), math.Sqrt(0.025*0.975/runs)
	for _, design := range []struct {
		name string
		p    dgp.Params
	}{{"D1", dgp.D1()}, {"D2", dgp.D2()}} {
		var b strings.Builder
		b.WriteString("| K | method | ratio of means | lower end above truth | upper end below truth | ratio of medians |\n|---:|---|---:|---:|---:|---:|\n")
		var hit, above, n int
		for k := 3; k <= 20; k++ {
			p := design.p
			p.K = k
			tl := runCell(fmt.Sprintf("%s K=%d", design.name, k), p, coverageSeedA, runs, engineExperiment(false))
			method := MethodJackknife
			if k >= 8 {
				method = MethodBootstrap
			}
			if tl.methods[method] != runs {
				t.Errorf("%s K=%d: methods %v", design.name, k, tl.methods)
			}
			a := float64(tl.above["ratio mean"]) / runs
			c := tl.cover("ratio mean")
			fmt.Fprintf(&b, "| %d | %s | %.3f | %.3f | %.3f | %.3f |\n", k, method, c, a, 1-c-a, tl.cover("ratio median"))
			hit += tl.hit["ratio mean"]
			above += tl.above["ratio mean"]
			n += tl.n["ratio mean"]
			if c < 0.94-2*se {
				t.Errorf("%s K=%d: ratio of means covers %.3f, want ≥ %.3f", design.name, k, c, 0.94-2*se)
			}
			if a > 0.025+3*lowSE {
				t.Errorf("%s K=%d: lower end above the truth in %.3f, want ≤ %.3f", design.name, k, a, 0.025+3*lowSE)
			}
		}
		c, a := float64(hit)/float64(n), float64(above)/float64(n)
		t.Logf("%s, %d experiments a K, B = %d, seed %d; pooled over K: coverage %.4f, lower end above the truth %.4f:\n%s", design.name, runs, coverageB, coverageSeedA, c, a, b.String())
		if c < 0.94 {
			t.Errorf("%s pooled over K: ratio of means covers %.4f, want ≥ 0.94", design.name, c)
		}
		if pooledSE := math.Sqrt(0.025 * 0.975 / float64(n)); a > 0.025+2*pooledSE {
			t.Errorf("%s pooled over K: lower end above the truth in %.4f, want ≤ %.4f", design.name, a, 0.025+2*pooledSE)
		}
	}
}
