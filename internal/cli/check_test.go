package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestCheckGate: on interleaved_graph the graph arm halves collector_step,
// so graph vs eager passes and eager vs graph is a proven regression.
func TestCheckGate(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "interleaved_graph")
	out, errs, code := run(t, "check", fx.XZ, "--baseline", "eager", "--phase", "collector_step", "--max-regression", "5%", "--resamples", "1999")
	if code != 0 || !strings.HasPrefix(out, "PASS") {
		t.Fatalf("graph vs eager: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = run(t, "check", fx.XZ, "--baseline", "graph", "--phase", "collector_step", "--max-regression", "5%", "--resamples", "1999", "--format", "markdown")
	if code != 1 || !strings.Contains(out, "| eager |") || !strings.Contains(out, "regression") || errs != "" {
		t.Fatalf("eager vs graph: exit %d\n%s%s", code, out, errs)
	}
	// A phase the graph does not change: not proven either way.
	out, _, code = run(t, "check", fx.XZ, "--baseline", "graph", "--phase", "metrics", "--max-regression", "5%", "--resamples", "1999")
	if code != 0 {
		t.Fatalf("metrics: exit %d\n%s", code, out)
	}
	_, errs, code = run(t, "check", fx.XZ, "--baseline", "graph", "--phase", "nope")
	if code != 2 || !strings.Contains(errs, "not a phase") {
		t.Fatalf("unknown phase: exit %d %s", code, errs)
	}
}

// TestCheckLimitAndWithinRun: the case — "--max-regression 5" once
// meant 500% and passed a 2.1× regression; it is now a usage error, and the
// printed limit is the one used. A within-run CI (one block per arm) never
// proves a regression: inconclusive, exit 0, as analyze's "no CI".
func TestCheckLimitAndWithinRun(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "interleaved_graph")
	_, errs, code := run(t, "check", fx.XZ, "--baseline", "graph", "--phase", "collector_step", "--max-regression", "5", "--resamples", "1999")
	if code != cli.ExitInput || !strings.Contains(errs, "write 5%") {
		t.Fatalf("--max-regression 5: exit %d: %s", code, errs)
	}
	out, _, code := run(t, "check", fx.XZ, "--baseline", "graph", "--phase", "collector_step", "--max-regression", "0.05", "--resamples", "1999", "--format", "json")
	var g struct {
		Status string  `json:"status"`
		Limit  float64 `json:"limit"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || code != cli.ExitGate || g.Status != "FAIL" || g.Limit != 0.05 {
		t.Fatalf("--max-regression 0.05: exit %d, %+v, %v\n%s", code, g, err, out)
	}
	out, _, _ = run(t, "check", fx.XZ, "--baseline", "graph", "--phase", "collector_step", "--max-regression", "12.5%", "--resamples", "1999")
	if !strings.Contains(out, "limit +12.5%") || !strings.Contains(out, "lies above 1.125") {
		t.Errorf("printed limit differs from the one used:\n%s", out)
	}

	mps, null := fixture.Get(t, "sharing_mps_1"), fixture.Get(t, "sharing_null_1")
	args := []string{"check", "--step", "collector_step", "--arm-pattern", "^none(x)(y)$", "--arm", "mps=" + mps.XZ, "--arm", "null=" + null.XZ,
		"--baseline", "mps", "--phase", "collector_step", "--resamples", "1999"}
	out, errs, code = run(t, args...)
	if code != cli.ExitOK || !strings.Contains(out, "within-run-batch") || !strings.Contains(out, "inconclusive") {
		t.Fatalf("within-run CI: exit %d, want 0 (inconclusive)\n%s%s", code, out, errs)
	}
	out, _, _ = run(t, "analyze", "--step", "collector_step", "--arm-pattern", "^none(x)(y)$", "--arm", "mps="+mps.XZ, "--arm", "null="+null.XZ,
		"--baseline", "mps", "--resamples", "1999")
	if !strings.Contains(out, "no CI") {
		t.Errorf("analyze does not say no CI for the same comparison:\n%s", out)
	}
}
