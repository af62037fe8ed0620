package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// historyDatasets writes one analyze --out dataset per fixture into dir
// and returns dir.
func historyDatasets(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		fx := fixture.Get(t, n)
		if _, errs, code := run(t, "analyze", "--quiet", "--no-stats", "--out", filepath.Join(dir, n), fx.XZ); code != 0 {
			t.Fatalf("analyze --out %s: exit %d: %s", n, code, errs)
		}
	}
	return dir
}

type historyGateJSON struct {
	Status      string   `json:"status"`
	Mode        string   `json:"mode"`
	Baseline    string   `json:"baseline"`
	HistoryDirs []string `json:"history_dirs"`
	Arms        []struct {
		Arm     string      `json:"arm"`
		Ratio   *float64    `json:"ratio"`
		RatioCI *[2]float64 `json:"ratio_ci"`
		Method  string      `json:"method"`
		Outcome string      `json:"outcome"`
		History struct {
			HistoryRuns int      `json:"history_runs"`
			DF          int      `json:"df"`
			CV          float64  `json:"cv"`
			Warnings    []string `json:"warnings"`
			History     []struct {
				Label string  `json:"label"`
				Steps int     `json:"steps"`
				Value float64 `json:"value"`
			} `json:"history"`
		} `json:"history"`
	} `json:"arms"`
}

// TestCheckHistory gates real exports against datasets of earlier runs
// (one run each): the collector's eager step (3.6 ms with a learner
// process beside it) against three runs of the graph arm (0.8 ms) is a
// proven regression with 3 runs; the eager arm of eager_graph_small
// against the four sharing runs is not proven (their spread is wide).
func TestCheckHistory(t *testing.T) {
	t.Parallel()
	graphs := historyDatasets(t, "eager_graph_small", "interleaved_graph", "graph_whole")
	cand := fixture.Get(t, "sharing_null_1").XZ
	out, errs, code := run(t, "check", "--history", filepath.Join(graphs, "*"), "--baseline", "graph", cand, "--phase", "collector_step", "--format", "json")
	var g historyGateJSON
	if err := json.Unmarshal([]byte(out), &g); err != nil || code != cli.ExitGate {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errs)
	}
	if g.Status != "FAIL" || g.Mode != "history" || g.Baseline != "graph" || len(g.HistoryDirs) != 3 || len(g.Arms) != 1 {
		t.Fatalf("%+v", g)
	}
	a := g.Arms[0]
	if a.Arm != "eager" || a.Method != "history-prediction-t" || a.Outcome != "regression" || a.History.HistoryRuns != 3 || a.History.DF != 2 ||
		a.RatioCI == nil || a.RatioCI[0] < 3 || *a.Ratio < 4 || *a.Ratio > 5 || len(a.History.History) != 3 {
		t.Fatalf("%+v", a)
	}
	if strings.Join(a.History.Warnings, ",") != "few_history_runs,history_steps_differ" {
		t.Errorf("warnings %v", a.History.Warnings)
	}

	sharing := historyDatasets(t, "sharing_null_1", "sharing_null_2", "sharing_mps_1", "sharing_mps_2")
	out, errs, code = run(t, "check", "--history", filepath.Join(sharing, "sharing_*"), fixture.Get(t, "eager_graph_small").XZ, "--phase", "collector_step", "--baseline", "eager", "--format", "markdown")
	if code != 0 || !strings.Contains(out, "| eager |") || !strings.Contains(out, "| graph |") || !strings.Contains(out, "not proven") || errs != "" {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	// The candidate is one of the history runs: left out of it, and said.
	out, _, code = run(t, "check", "--history", filepath.Join(sharing, "sharing_*"), cand, "--phase", "collector_step")
	if code != 0 || !strings.Contains(out, "3 history runs") || !strings.Contains(out, "candidate_in_history") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// Two history runs: no interval, inconclusive, exit 0.
	out, _, code = run(t, "check", "--history", filepath.Join(sharing, "sharing_null_*"), fixture.Get(t, "sharing_mps_1").XZ, "--phase", "collector_step")
	if code != 0 || !strings.Contains(out, "inconclusive") || !strings.Contains(out, "2 history runs: at least 3") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// Each candidate arm meets the history of its own arm: eager has three
	// runs (an interval), graph two (none: inconclusive).
	mixed := historyDatasets(t, "eager_graph_small", "interleaved_graph", "emit_nvtx")
	out, errs, code = run(t, "check", "--history", filepath.Join(mixed, "*"), fixture.Get(t, "graph_whole").XZ, "--phase", "collector_step", "--format", "json")
	var m historyGateJSON
	if err := json.Unmarshal([]byte(out), &m); err != nil || code != 0 || len(m.Arms) != 2 {
		t.Fatalf("own arms: exit %d %v\n%s%s", code, err, out, errs)
	}
	if e, g := m.Arms[0], m.Arms[1]; e.Arm != "eager" || e.History.HistoryRuns != 3 || e.RatioCI == nil || e.Outcome != "pass" ||
		g.Arm != "graph" || g.History.HistoryRuns != 2 || g.RatioCI != nil || g.Outcome != "inconclusive" {
		t.Fatalf("own arms: %+v", m.Arms)
	}
	// A history dir that is there and not a dataset: exit 2, named.
	notData := filepath.Join(t.TempDir(), "notdata")
	if err := os.MkdirAll(notData, 0o755); err != nil {
		t.Fatal(err)
	}
	_, errs, code = run(t, "check", "--history", notData, cand, "--phase", "collector_step")
	if code != cli.ExitInput || !strings.Contains(errs, "notdata") {
		t.Fatalf("history that is not a dataset: exit %d %s", code, errs)
	}
	// No history yet (a missing directory, a glob that matches nothing):
	// inconclusive, passes, the output written and the arm named.
	for _, h := range []string{filepath.Join(sharing, "nope"), filepath.Join(t.TempDir(), "*")} {
		out, errs, code = run(t, "check", "--history", h, cand, "--phase", "collector_step", "--format", "md")
		if code != 0 || !strings.Contains(out, "vs the history of eager, limit +5%") || !strings.Contains(out, "| eager | ") ||
			!strings.Contains(out, "| inconclusive |") || !strings.Contains(out, "no history run yet") || !strings.Contains(errs, "found no dataset") {
			t.Errorf("empty history %s: exit %d\n%s%s", h, code, out, errs)
		}
	}
	// --history d1 d2 FILE: d2 lands among the candidates; the answer says
	// how to pass two history runs.
	_, errs, code = run(t, "check", "--history", filepath.Join(sharing, "sharing_null_1"), filepath.Join(sharing, "sharing_null_2"), cand, "--phase", "collector_step")
	if code != cli.ExitInput || !strings.Contains(errs, "--history d1 --history d2") {
		t.Errorf("--history d1 d2: exit %d %s", code, errs)
	}
}

// TestAnalyzeHistory: analyze --history adds one row per arm and phase
// against the history runs, in JSON and in the Markdown for PRs.
func TestAnalyzeHistory(t *testing.T) {
	t.Parallel()
	sharing := historyDatasets(t, "sharing_null_1", "sharing_null_2", "sharing_mps_1", "sharing_mps_2")
	fx := fixture.Get(t, "eager_graph_small")
	out, errs, code := run(t, "analyze", "--history", filepath.Join(sharing, "*"), fx.XZ, "--resamples", "1999", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var d struct {
		Summary []struct {
			Arm string `json:"arm"`
		} `json:"summary"`
		History []struct {
			Phase       string      `json:"phase"`
			Arm         string      `json:"arm"`
			HistoryArm  string      `json:"history_arm"`
			Method      string      `json:"method"`
			HistoryRuns int         `json:"history_runs"`
			RatioCI     *[2]float64 `json:"ratio_ci"`
		} `json:"history"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	byArm := map[string]int{}
	for _, r := range d.History {
		byArm[r.Arm]++
		if r.HistoryArm != "eager" {
			t.Errorf("%s/%s: history arm %q", r.Arm, r.Phase, r.HistoryArm)
		}
		if r.Phase == "collector_step" && (r.HistoryRuns != 4 || r.RatioCI == nil || r.Method != "history-prediction-t") {
			t.Errorf("%+v", r)
		}
	}
	// One row per arm and phase present (the graph arm replays a graph
	// instead of some phases).
	want := map[string]int{}
	for _, s := range d.Summary {
		want[s.Arm]++
	}
	if fmt.Sprint(byArm) != fmt.Sprint(want) || want["eager"] < 10 {
		t.Errorf("rows per arm %v, want %v", byArm, want)
	}
	out, _, code = run(t, "analyze", "--history", filepath.Join(sharing, "*"), fx.XZ, "--resamples", "1999", "--format", "md")
	if code != 0 || !strings.Contains(out, "against the history of eager") || !strings.Contains(out, "| collector_step | graph |") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	out, _, code = run(t, "analyze", "--history", filepath.Join(sharing, "*"), fx.XZ, "--resamples", "1999", "--format", "html")
	if code != 0 || !strings.Contains(out, "against the history of eager") || !strings.Contains(out, "history-prediction-t") && !strings.Contains(out, "prediction interval") {
		t.Errorf("html: exit %d, history table missing", code)
	}
	out, _, _ = run(t, "analyze", "--history", filepath.Join(sharing, "*"), fx.XZ, "--resamples", "1999")
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > 120 {
			t.Errorf("line of %d columns: %s", n, l)
		}
	}
}

// TestCheckWithinRun: one export per arm. Without --within-run the gate
// cannot prove anything (inconclusive, exit 0); with it, the stationary
// bootstrap over steps finds null 37% slower than mps in these two runs
// (exit 1), and every line says within-run.
func TestCheckWithinRun(t *testing.T) {
	t.Parallel()
	mps, null := fixture.Get(t, "sharing_mps_1"), fixture.Get(t, "sharing_null_1")
	args := []string{"check", "--step", "collector_step", "--arm-pattern", "^none(x)(y)$", "--arm", "mps=" + mps.XZ, "--arm", "null=" + null.XZ,
		"--baseline", "mps", "--phase", "collector_step", "--resamples", "1999"}
	if out, _, code := run(t, args...); code != 0 || !strings.Contains(out, "inconclusive") {
		t.Fatalf("without --within-run: exit %d\n%s", code, out)
	}
	out, errs, code := run(t, append(args, "--within-run")...)
	if code != cli.ExitGate || errs != "" {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(l, "within-run") && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "      ") {
			t.Errorf("line without within-run: %q", l)
		}
	}
	out, _, code = run(t, append(args, "--within-run", "--format", "json")...)
	var g struct {
		Mode string `json:"mode"`
		Arms []struct {
			Ratio     float64    `json:"ratio"`
			RatioCI   [2]float64 `json:"ratio_ci"`
			Outcome   string     `json:"outcome"`
			WithinRun struct {
				Method      string    `json:"method"`
				Warnings    []string  `json:"warnings"`
				ArmSteps    int       `json:"arm_steps"`
				BlockLength []float64 `json:"baseline_block_length"`
			} `json:"within_run"`
		} `json:"arms"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || code != cli.ExitGate || g.Mode != "within-run" || len(g.Arms) != 1 {
		t.Fatalf("exit %d %v\n%s", code, err, out)
	}
	a := g.Arms[0]
	if a.Outcome != "regression" || a.Ratio < 1.3 || a.Ratio > 1.45 || a.RatioCI[0] < 1.3 || a.WithinRun.Method != "within-run-stationary-bootstrap" ||
		a.WithinRun.ArmSteps != 179 || len(a.WithinRun.BlockLength) != 1 || a.WithinRun.BlockLength[0] < 1 ||
		strings.Join(a.WithinRun.Warnings, ",") != "ci_excludes_run_to_run_variance" {
		t.Fatalf("%+v", a)
	}
	if _, errs, code := run(t, append(args, "--within-run", "--history", "x")...); code != cli.ExitInput || !strings.Contains(errs, "pick one") {
		t.Fatalf("--within-run --history: exit %d %s", code, errs)
	}
}

// TestAnalyzeWithinRun: analyze --within-run adds one row per non-baseline
// arm and phase, labelled within-run in the table and in JSON.
func TestAnalyzeWithinRun(t *testing.T) {
	t.Parallel()
	mps, null := fixture.Get(t, "sharing_mps_1"), fixture.Get(t, "sharing_null_1")
	args := []string{"analyze", "--within-run", "--step", "collector_step", "--arm-pattern", "^none(x)(y)$", "--arm", "mps=" + mps.XZ, "--arm", "null=" + null.XZ,
		"--baseline", "mps", "--resamples", "1999"}
	out, errs, code := run(t, append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	var d struct {
		Phases    []string `json:"phases"`
		WithinRun []struct {
			Phase    string      `json:"phase"`
			Arm      string      `json:"arm"`
			Method   string      `json:"method"`
			B        int         `json:"b"`
			RatioCI  *[2]float64 `json:"ratio_ci"`
			Warnings []string    `json:"warnings"`
			Reason   string      `json:"reason"`
		} `json:"within_run"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.WithinRun) != len(d.Phases) {
		t.Fatalf("%d rows for %d phases", len(d.WithinRun), len(d.Phases))
	}
	// A phase too short for its autocorrelation gets no interval, with the
	// reason (docs/statistics.md §12); the step and most phases get one.
	withCI := 0
	for _, r := range d.WithinRun {
		if r.Arm != "null" || r.Method != "within-run-stationary-bootstrap" || r.B != 1999 || (r.RatioCI == nil) != (r.Reason != "") || strings.Join(r.Warnings, ",") != "ci_excludes_run_to_run_variance" {
			t.Errorf("%+v", r)
		}
		if r.RatioCI != nil {
			withCI++
		} else if r.Phase == "collector_step" {
			t.Errorf("the step has no within-run interval: %s", r.Reason)
		}
	}
	if withCI*2 < len(d.WithinRun) {
		t.Errorf("%d of %d phases with a within-run interval", withCI, len(d.WithinRun))
	}
	out, _, _ = run(t, args...)
	if !strings.Contains(out, "Within-run: mean wall per step against mps") || !strings.Contains(out, "within-run: steps of one run per arm") {
		t.Errorf("table:\n%s", out)
	}
	if html, _, _ := run(t, append(args, "--format", "html")...); !strings.Contains(html, "Within-run: mean wall per step against mps") {
		t.Error("html: no within-run table")
	}
	if out, _, _ := run(t, append([]string{"analyze"}, args[2:]...)...); strings.Contains(out, "Within-run") {
		t.Error("a within-run section without --within-run")
	}
}

// TestCheckOneArm: with one arm, check says in one sentence what it needs.
func TestCheckOneArm(t *testing.T) {
	t.Parallel()
	_, errs, code := run(t, "check", fixture.Get(t, "sharing_null_1").XZ, "--phase", "collector_step")
	if code != cli.ExitInput || !strings.Contains(errs, "these inputs hold one arm (eager): record the baseline and the change as arms") ||
		!strings.Contains(errs, "--history") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, errs, code = run(t, "check", fixture.Get(t, "interleaved_graph").XZ, "--phase", "collector_step", "--metric", "nope")
	if code != cli.ExitInput || !strings.Contains(errs, `--metric "nope": not a metric`) {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// TestAnalyzeWithinRunOneArm: --within-run on an export of one arm has
// nothing to compare; the run still succeeds and says so (a warning that
// names the arm), instead of printing nothing where the rows would be.
func TestAnalyzeWithinRunOneArm(t *testing.T) {
	t.Parallel()
	var prof string
	for _, f := range fixture.Extra(t) {
		if f.Name == "profiler_step" {
			prof = f.XZ
		}
	}
	if prof == "" {
		t.Skip("profiler_step not found")
	}
	out, errs, code := run(t, "analyze", "--within-run", "--no-stats", "--warnings", prof)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "within_run_one_arm") || !strings.Contains(out, "hold one arm (all)") {
		t.Errorf("no within_run_one_arm warning naming the arm:\n%s", out)
	}
	if strings.Contains(out, "Within-run:") {
		t.Errorf("a within-run table with one arm:\n%s", out)
	}
}
