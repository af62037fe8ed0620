package cli_test

import (
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestCheckGate: on interleaved_graph the graph arm halves collector_step,
// so graph vs eager passes and eager vs graph is a proven regression.
func TestCheckGate(t *testing.T) {
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
