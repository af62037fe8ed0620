package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// fakeNsys writes an nsys script that "exports" any report as a copy of
// sqlite and logs each call, and returns its log.
func fakeNsys(t *testing.T, dir, sqlite string) (logPath string) {
	t.Helper()
	logPath = filepath.Join(dir, "calls.log")
	script := `#!/bin/sh
echo "$@" >> ` + logPath + `
out=""
while [ $# -gt 1 ]; do
  if [ "$1" = "--output" ]; then out="$2"; fi
  shift
done
cp ` + sqlite + ` "$out"
`
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "nsys"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("NSYS", "")
	return logPath
}

// TestNsysRepInput: a .nsys-rep input is exported once by the nsys found on
// PATH into the user cache (keyed by the report's hash, never beside the
// input), then analysed; without nsys the message says what to do (exit 2).
func TestNsysRepInput(t *testing.T) { testReportInput(t, ".nsys-rep") }

// TestQdrepInput: a .qdrep report (nsys before 2021.3) goes the same way as
// a .nsys-rep: exported through nsys into the same cache, analysed like its
// export (the same info and analyze JSON), the same error without nsys.
func TestQdrepInput(t *testing.T) { testReportInput(t, ".qdrep") }

func testReportInput(t *testing.T, ext string) {
	if _, err := exec.LookPath("xz"); err != nil {
		t.Skip("needs xz to decompress the fixture")
	}
	fx := fixture.Get(t, "eager_graph_small")
	dir := t.TempDir()
	sqlite := filepath.Join(dir, "export.sqlite")
	if out, err := exec.Command("sh", "-c", "xz -dc "+fx.XZ+" > "+sqlite).CombinedOutput(); err != nil {
		t.Fatalf("xz: %v %s", err, out)
	}
	inputs := filepath.Join(dir, "inputs")
	if err := os.MkdirAll(inputs, 0o555); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(inputs, "run"+ext)
	if err := os.Chmod(inputs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(report, []byte("not really a report, the fake nsys ignores it"), 0o444); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", dir)
	log := fakeNsys(t, dir, sqlite)

	for i := range 2 {
		out, errs, code := run(t, "info", report)
		if code != 0 || !strings.HasPrefix(out, report) {
			t.Fatalf("info (run %d): exit %d\n%s%s", i, code, out, errs)
		}
	}
	calls, _ := os.ReadFile(log)
	if n := strings.Count(string(calls), "export --type sqlite"); n != 1 {
		t.Errorf("nsys export ran %d times, want once (then cached):\n%s", n, calls)
	}
	entries, _ := os.ReadDir(inputs)
	if len(entries) != 1 {
		t.Errorf("something was written beside the input: %v", entries)
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "nsysphase", "exports", "*", "run.sqlite"))
	if len(matches) != 1 {
		t.Errorf("cache holds %v, want one run.sqlite under a hash directory", matches)
	}
	if out, errs, code := run(t, "analyze", "--resamples", "1999", report); code != 0 || !strings.Contains(out, "step collector_step") {
		t.Fatalf("analyze: exit %d\n%s%s", code, out, errs)
	}
	// The report analyses like its export: the same JSON but for the input's
	// name (the path given, kept in every message and provenance field).
	viaReport, errs, code := run(t, "analyze", "--resamples", "1999", "--format", "json", report)
	if code != 0 {
		t.Fatalf("analyze --format json %s: exit %d\n%s", report, code, errs)
	}
	direct, errs, code := run(t, "analyze", "--resamples", "1999", "--format", "json", sqlite)
	if code != 0 {
		t.Fatalf("analyze --format json %s: exit %d\n%s", sqlite, code, errs)
	}
	if strings.ReplaceAll(viaReport, report, sqlite) != direct {
		t.Errorf("analyze --format json of the %s report differs from that of its export", ext)
	}

	t.Setenv("PATH", dir) // no nsys here
	other := filepath.Join(inputs, "other"+ext)
	if err := os.WriteFile(other, []byte("x"), 0o444); err != nil {
		t.Fatal(err)
	}
	_, errs, code = run(t, "info", other)
	if code != cli.ExitInput || !strings.Contains(errs, "nsys was not found") || !strings.Contains(errs, "nsys export --type sqlite") {
		t.Errorf("without nsys: exit %d: %s", code, errs)
	}
}
