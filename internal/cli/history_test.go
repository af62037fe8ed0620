package cli_test

import (
	"encoding/json"
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
	// A history dir that is not a dataset: exit 2, named.
	_, errs, code = run(t, "check", "--history", filepath.Join(sharing, "nope"), cand, "--phase", "collector_step")
	if code != cli.ExitInput || !strings.Contains(errs, "nope") {
		t.Fatalf("missing history: exit %d %s", code, errs)
	}
}
