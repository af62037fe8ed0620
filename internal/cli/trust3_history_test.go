package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// copyDir copies the regular files of src into a new directory dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// TestHistoryRefusesCopies: five copies of one history run gave a CV of
// 0 %, a zero-width interval, and check "proved" a regression. A copy of
// a run (same export inside), under whatever name, is refused as --from
// refuses it, with the two directories named.
func TestHistoryRefusesCopies(t *testing.T) {
	t.Parallel()
	h := historyDatasets(t, "sharing_null_1")
	for _, n := range []string{"copy2", "copy3", "copy4", "copy5"} {
		copyDir(t, filepath.Join(h, "sharing_null_1"), filepath.Join(h, n))
	}
	cand := fixture.Get(t, "sharing_null_2").XZ
	for _, hist := range [][]string{
		{"--history", filepath.Join(h, "*")},
		{"--history", filepath.Join(h, "sharing_null_1"), "--history", filepath.Join(h, ".", "sharing_null_1"), "--history", filepath.Join(h, "copy2")},
	} {
		args := append([]string{"check", "--phase", "collector_step", "--format", "json"}, hist...)
		out, errs, code := run(t, append(args, cand)...)
		if code != cli.ExitInput || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "pass each") || !strings.Contains(errs, "sharing_null_1") {
			t.Errorf("%v: exit %d, stderr %q, stdout %.200s", hist, code, errs, out)
		}
	}
}

// TestHistoryTakesCandidateWarmup: `check --history … --from DATASET` cut
// the history with the default warm-up (1 step) but kept the candidate
// dataset's (5): the same run scored 165 steps as history and 161 as
// candidate, and its ratio was not 1. The history is now cut with the
// candidate's warm-up, and a warning says so.
func TestHistoryTakesCandidateWarmup(t *testing.T) {
	t.Parallel()
	h := historyDatasets(t, "sharing_null_1", "sharing_null_2", "sharing_mps_1")
	cand := filepath.Join(t.TempDir(), "cand")
	if _, errs, code := run(t, "analyze", "--quiet", "--no-stats", "--skip-steps", "5", "--out", cand, fixture.Get(t, "sharing_null_1").XZ); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	out, errs, code := run(t, "check", "--history", filepath.Join(h, "*"), "--from", cand, "--phase", "collector_step", "--format", "json")
	var g historyGateJSON
	if err := json.Unmarshal([]byte(out), &g); err != nil || code == cli.ExitInput || len(g.Arms) != 1 {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errs)
	}
	// The candidate's own run is recognised in the history (same steps,
	// same value) and left out of it.
	a := g.Arms[0].History
	if !strings.Contains(strings.Join(a.Warnings, ","), "candidate_in_history") || len(a.History) != 2 {
		t.Errorf("warnings %v, %d history runs: want candidate_in_history and 2 runs", a.Warnings, len(a.History))
	}
	if strings.Count(errs, "re-cut with 5, the candidate's warm-up") != 3 {
		t.Errorf("stderr %q: want one warning per history run naming the warm-up", errs)
	}
}
