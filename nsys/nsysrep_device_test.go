package nsys

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestNsysRepRealReport opens a real .nsys-rep through nsys.Open where the
// vendor's nsys is installed: scripts/nsysrep_device.sh records a small
// report on the GPU host, exports it once by hand, and runs this test with
// NSYSPHASE_TEST_REPORT (the report), NSYSPHASE_TEST_EXPORT (the
// hand-made export) and NSYS set. Elsewhere it skips.
//
// The report opens under its own name, its export lands in the cache (not
// beside the report), a second open uses the cache without running nsys,
// and everything info reports equals the hand-made export's.
func TestNsysRepRealReport(t *testing.T) {
	rep, want := os.Getenv("NSYSPHASE_TEST_REPORT"), os.Getenv("NSYSPHASE_TEST_EXPORT")
	if rep == "" || want == "" {
		t.Skip("needs NSYSPHASE_TEST_REPORT and NSYSPHASE_TEST_EXPORT (scripts/nsysrep_device.sh on a host with nsys)")
	}
	if _, ok := nsysBinary(); !ok {
		t.Skip("nsys not found (set NSYS)")
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	before, _ := os.ReadDir(filepath.Dir(rep))

	f, err := Open(rep)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Path != rep || !strings.HasPrefix(f.Disk, cache) {
		t.Fatalf("opened as %q from %q, want the report's name and a file under %s", f.Path, f.Disk, cache)
	}
	if after, _ := os.ReadDir(filepath.Dir(rep)); len(after) != len(before) {
		t.Errorf("opening the report wrote beside it: %d entries, was %d", len(after), len(before))
	}
	got, err := f.Describe()
	if err != nil {
		t.Fatal(err)
	}
	if got.Kernels.Count == 0 {
		t.Fatalf("no kernels read from %s", rep)
	}

	// The second open must come from the cache: a failing nsys proves it.
	t.Setenv("NSYS", "/bin/false")
	again, err := Open(rep)
	if err != nil {
		t.Fatalf("cached open: %v", err)
	}
	again.Close()

	g, err := Open(want)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	exp, err := g.Describe()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(exp, got, cmpopts.IgnoreFields(Info{}, "File", "Warnings")); d != "" {
		t.Errorf("info of the report differs from its hand-made export (-export +report):\n%s", d)
	}
	t.Logf("%s: %d kernels, %d API calls; cached export %s", rep, got.Kernels.Count, got.API.Count, f.Disk)
}
