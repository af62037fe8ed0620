package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/base/budget"
	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestNsysRepCacheKeyedOnNsys is issue 37: the export cache was keyed by
// the report alone, so after switching to another nsys (NSYS, PATH) the
// first nsys's export was reused, partial or not. The key holds the nsys
// binary too: another nsys exports the report again.
func TestNsysRepCacheKeyedOnNsys(t *testing.T) {
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls.log")
	exports := nsysScript(t, dir, copyOut+`echo first >> `+calls+`
cp `+fx+` "$out"
`)
	rep := report(t, dir, "run.nsys-rep")
	if out, errs, code := run(t, "info", rep); code != 0 {
		t.Fatalf("first nsys: exit %d\n%s%s", code, out, errs)
	}
	second := filepath.Join(dir, "other")
	if err := os.Mkdir(second, 0o755); err != nil {
		t.Fatal(err)
	}
	nsysScript(t, second, copyOut+`echo second >> `+calls+`
cp `+fx+` "$out"
`)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache")) // the same cache
	if out, errs, code := run(t, "info", rep); code != 0 {
		t.Fatalf("second nsys: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code := run(t, "info", rep); code != 0 { // cached now
		t.Fatalf("second nsys again: exit %d\n%s%s", code, out, errs)
	}
	b, _ := os.ReadFile(calls)
	if got := strings.Fields(string(b)); strings.Join(got, " ") != "first second" {
		t.Errorf("nsys exports ran %q, want the first nsys once, then the second once", got)
	}
	if m, _ := filepath.Glob(filepath.Join(exports, "*", "run.sqlite")); len(m) != 2 {
		t.Errorf("cache: %v, want one export per nsys", m)
	}
}

// TestNsysRepOutputBounded is issue 37: nsys export's output was buffered
// whole (800 MB of output, 5.2 GB of memory) and its last line, however
// long, became the error line. The output's tail is kept
// (budget.SubprocessOutputBytes) and the error line is bounded.
func TestNsysRepOutputBounded(t *testing.T) {
	dir := t.TempDir()
	nsysScript(t, dir, `head -c 4000000 /dev/zero | tr '\0' 'o'
echo
head -c 200000 /dev/zero | tr '\0' 'e' >&2
echo " END" >&2
exit 1
`)
	rep := report(t, dir, "run.nsys-rep")
	_, errs, code := run(t, "info", rep)
	if code != cli.ExitInput || strings.Count(errs, "\n") != 1 {
		t.Fatalf("exit %d, %d-byte stderr; want exit 2 and one line", code, len(errs))
	}
	if len(errs) > budget.DisplayNameBytes+1024 || !strings.Contains(errs, "eeee END") || !strings.Contains(errs, "export failed") {
		t.Errorf("stderr: %d bytes (%.80q…%.80q); want at most %d, with the end of nsys's last line", len(errs), errs, errs[max(len(errs)-80, 0):], budget.DisplayNameBytes+1024)
	}
}
