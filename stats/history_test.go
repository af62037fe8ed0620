package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nsysphase/nsysphase/stats/internal/dgp"
)

// historySeed is the fixed seed of the history tests (not tuned).
const historySeed = 20261202

// historyExperiment draws n history runs and one candidate run with scale
// factor f from the CI cell and compares their means, as check --history
// does (one run, one number).
func historyExperiment(t *testing.T, p dgp.Runs, rng *rand.Rand, n int, f float64, buf []float64) *HistoryComparison {
	t.Helper()
	return historyStatExperiment(t, p, rng, n, f, buf, StatMean)
}

// historyStatExperiment is historyExperiment with the per-run statistic stat.
func historyStatExperiment(t *testing.T, p dgp.Runs, rng *rand.Rand, n int, f float64, buf []float64, stat string) *HistoryComparison {
	t.Helper()
	run := func(label string, g float64) RunValue {
		p.RunInto(rng, g, buf)
		v, k, err := RunStatistic(buf, stat)
		if err != nil {
			t.Fatal(err)
		}
		return RunValue{Label: label, Steps: k, Value: v}
	}
	hist := make([]RunValue, n)
	for i := range hist {
		hist[i] = run(fmt.Sprintf("h%d", i), 1)
		hist[i].Start = int64(i)
	}
	cand := []RunValue{run("candidate", f)}
	h, err := CompareHistory("wall_ns", stat, hist, cand, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHistoryGateSlowSteps is the acceptance test of the gate's default
// statistic (issue 40): on runs with rare slow steps (dgp.SlowStepRuns:
// AR(1) steps, a 3% run effect, 10–100× steps in 0.2% of them) and 10
// history runs, the default per-run median catches at least 90% of +25%
// regressions at --max-regression 5% with at most 5% false alarms at
// limit 0, over 100 candidates each; the mean, whose run-to-run CV the
// slow steps inflate, catches far fewer (why it is not the default).
func TestHistoryGateSlowSteps(t *testing.T) {
	if DefaultHistoryStat != StatMedian {
		t.Fatalf("default history statistic %q", DefaultHistoryStat)
	}
	p := dgp.SlowStepRuns()
	const experiments, n = 100, 10
	buf := make([]float64, p.L)
	rates := func(stat string) (alarms, detected int, cv float64) {
		rng := rand.New(rand.NewPCG(historySeed, 3))
		for range experiments {
			if historyStatExperiment(t, p, rng, n, 1, buf, stat).Regression(0) {
				alarms++
			}
			h := historyStatExperiment(t, p, rng, n, 1.25, buf, stat)
			if h.Regression(0.05) {
				detected++
			}
			cv += h.CV / experiments
		}
		return alarms, detected, cv
	}
	a, d, cv := rates(DefaultHistoryStat)
	am, dm, cvm := rates(StatMean)
	t.Logf("slow-step runs, n = %d: median CV %.1f%%, false alarms %d/%d (limit 0), +25%% caught %d/%d (limit 5%%); mean CV %.1f%%, %d/%d, %d/%d",
		n, 100*cv, a, experiments, d, experiments, 100*cvm, am, experiments, dm, experiments)
	if a > experiments/20 || d < experiments*9/10 {
		t.Errorf("median: false alarms %d/%d (want ≤ 5%%), +25%% caught %d/%d (want ≥ 90%%)", a, experiments, d, experiments)
	}
	if dm > experiments*3/4 || cvm < 2*cv {
		t.Errorf("mean: caught %d/%d with CV %.3f against the median's %.3f: the slow steps should hurt it", dm, experiments, cvm, cv)
	}
}

// TestHistoryGateRates is the acceptance test of check --history on the
// generator's runs (AR(1) steps, a run effect, rare spikes): with 10
// history runs, at most 5% false alarms over 200 null candidates (at
// --max-regression 0, the strictest gate, and at the default 5%), and at
// least 90% detection of a +25% regression at the default 5%.
func TestHistoryGateRates(t *testing.T) {
	p := dgp.CIRuns()
	const experiments, n = 200, 10
	buf := make([]float64, p.L)
	rng := rand.New(rand.NewPCG(historySeed, 1))
	var alarms0, alarms5 int
	for range experiments {
		h := historyExperiment(t, p, rng, n, 1, buf)
		if h.Method != MethodHistory || h.DF != n-1 {
			t.Fatalf("method %s df %d", h.Method, h.DF)
		}
		if h.Regression(0) {
			alarms0++
		}
		if h.Regression(0.05) {
			alarms5++
		}
	}
	rng = rand.New(rand.NewPCG(historySeed, 2))
	var detected int
	var cv float64
	for range experiments {
		h := historyExperiment(t, p, rng, n, 1.25, buf)
		if h.Regression(0.05) {
			detected++
		}
		cv += h.CV / experiments
	}
	t.Logf("n = %d history runs, run-to-run CV %.1f%%: false alarms %d/%d (limit 0), %d/%d (limit 5%%); +25%% detected %d/%d (limit 5%%)",
		n, 100*cv, alarms0, experiments, alarms5, experiments, detected, experiments)
	if alarms0 > experiments/20 || alarms5 > experiments/20 {
		t.Errorf("false alarms %d and %d of %d: want at most 5%%", alarms0, alarms5, experiments)
	}
	if detected < experiments*9/10 {
		t.Errorf("+25%% detected %d of %d: want at least 90%%", detected, experiments)
	}
	if cv < 0.015 || cv > 0.04 {
		t.Errorf("mean estimated run-to-run CV %.3f: the cell is meant to have about 2.5%%", cv)
	}
}

// TestCompareHistoryExact checks the interval against a hand computation.
func TestCompareHistoryExact(t *testing.T) {
	vals := []float64{100, 102, 98, 101, 99}
	var hist []RunValue
	for i, v := range vals {
		hist = append(hist, RunValue{Label: fmt.Sprint(i), Start: int64(i), Steps: 100, Value: v})
	}
	cand := []RunValue{{Label: "c", Steps: 100, Value: 110}}
	h, err := CompareHistory("wall_ns", StatMean, hist, cand, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	var ys []float64
	for _, v := range vals {
		ys = append(ys, math.Log(v))
	}
	ybar := meanOf(ys)
	var ss float64
	for _, y := range ys {
		ss += (y - ybar) * (y - ybar)
	}
	s := math.Sqrt(ss / 4)
	d := math.Log(110) - ybar
	half := 2.7764451051977987 * s * math.Sqrt(1+1.0/5) // t_{4, 0.975}
	want := [2]float64{math.Exp(d - half), math.Exp(d + half)}
	if h.RatioCI == nil || math.Abs(h.RatioCI[0]-want[0]) > 1e-12 || math.Abs(h.RatioCI[1]-want[1]) > 1e-12 {
		t.Fatalf("CI %v, want %v", h.RatioCI, want)
	}
	if h.DF != 4 || h.Verdict != "changed" || !h.Regression(0.04) || h.Regression(0.05) {
		t.Fatalf("df %d verdict %q regression(4%%) %v regression(5%%) %v, CI %v", h.DF, h.Verdict, h.Regression(0.04), h.Regression(0.05), *h.RatioCI)
	}
	if len(h.Warnings) != 0 {
		t.Fatalf("warnings %v", h.Warnings)
	}
	// Two history runs: no interval, a reason.
	h2, err := CompareHistory("wall_ns", StatMean, hist[:2], cand, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if h2.RatioCI != nil || h2.Method != MethodNone || h2.Reason == "" || h2.Regression(0) {
		t.Fatalf("two runs: %+v", h2)
	}
	// Four runs: an interval, flagged; a candidate with a quarter of the steps: flagged.
	short := []RunValue{{Label: "c", Steps: 20, Value: 100}}
	h4, err := CompareHistory("wall_ns", StatMean, hist[:4], short, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if h4.RatioCI == nil || fmt.Sprint(h4.Warnings) != "[few_history_runs history_steps_differ]" {
		t.Fatalf("four runs: CI %v warnings %v", h4.RatioCI, h4.Warnings)
	}
}

// TestHistoryTrend flags a history that moves steadily.
func TestHistoryTrend(t *testing.T) {
	var hist []RunValue
	for i := range 8 {
		hist = append(hist, RunValue{Label: fmt.Sprint(i), Start: int64(i), Steps: 100, Value: 100 * (1 + 0.02*float64(i)) * (1 + 0.001*float64(i%2))})
	}
	h, err := CompareHistory("wall_ns", StatMean, hist, []RunValue{{Label: "c", Steps: 100, Value: 100}}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(h.Warnings) != "[history_trend]" {
		t.Fatalf("warnings %v", h.Warnings)
	}
}

// TestRunStatistic checks the per-run statistics and absent steps.
func TestRunStatistic(t *testing.T) {
	xs := []float64{4, math.NaN(), 1, 3, 2}
	for stat, want := range map[string]float64{StatMean: 2.5, StatMedian: 2, StatP90: 4, StatP99: 4} {
		v, n, err := RunStatistic(xs, stat)
		if err != nil || v != want || n != 4 {
			t.Errorf("%s: %v %d %v, want %v", stat, v, n, err, want)
		}
	}
	if _, _, err := RunStatistic([]float64{-1}, StatMean); err == nil {
		t.Error("negative duration accepted")
	}
}
