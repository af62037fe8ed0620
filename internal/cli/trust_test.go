package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// The tests of issue 24 ("Trust, round 2"), one per case; docs/robustness.md
// lists them.

// runMain runs the command line through cli.Main.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = cli.Main(args, &o, &e)
	return code, o.String(), e.String()
}

// wantRefused asserts exit 2 with one stderr line containing each of want,
// and dir unchanged since before.
func wantRefused(t *testing.T, dir string, before map[string]string, args []string, want ...string) {
	t.Helper()
	code, _, stderr := runMain(t, args...)
	if code != cli.ExitInput || strings.Count(stderr, "\n") != 1 {
		t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line", strings.Join(args, " "), code, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: stderr %q lacks %q", strings.Join(args, " "), stderr, w)
		}
	}
	if after := snapshot(t, dir); !equalSnapshots(before, after) {
		t.Fatalf("%s changed %s: before %v, after %v", strings.Join(args, " "), dir, before, after)
	}
}

// TestOverwriteKeepsForeignFiles is issue 24 case 1: `analyze --out results
// --overwrite results/runs/run1.sqlite`, where results/ held a dataset, the
// input and an unrelated NOTES.md, deleted all three. --overwrite replaces
// only a directory that holds nothing but a dataset, and never one that
// holds an input.
func TestOverwriteKeepsForeignFiles(t *testing.T) {
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	if code, _, stderr := runMain(t, "analyze", "--no-stats", "--quiet", "--out", results, fx); code != 0 {
		t.Fatalf("first dataset: exit %d: %s", code, stderr)
	}
	// A dataset alone is replaced.
	if code, _, stderr := runMain(t, "analyze", "--no-stats", "--quiet", "--overwrite", "--out", results, fx); code != 0 {
		t.Fatalf("replace a dataset: exit %d: %s", code, stderr)
	}
	if err := os.MkdirAll(filepath.Join(results, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	in := copyFixture(t, fx, filepath.Join(results, "runs"), "run1.sqlite")
	if err := os.WriteFile(filepath.Join(results, "NOTES.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	wantRefused(t, dir, before, []string{"analyze", "--no-stats", "--out", results, "--overwrite", in}, results, "holds the input")
	// An input elsewhere: the foreign NOTES.md and runs/ still forbid it.
	wantRefused(t, dir, before, []string{"analyze", "--no-stats", "--out", results, "--overwrite", fx}, results, "not part of the dataset")
}

// TestOutputNotInsideInputDataset is issue 24 case 2: `analyze --from ds -o
// ds/phase_summary.parquet` replaced a table of the dataset being read. A
// -o inside an input directory is refused before any work.
func TestOutputNotInsideInputDataset(t *testing.T) {
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	if code, _, stderr := runMain(t, "analyze", "--no-stats", "--quiet", "--out", ds, fx); code != 0 {
		t.Fatalf("dataset: exit %d: %s", code, stderr)
	}
	before := snapshot(t, dir)
	alias := filepath.Join(dir, "alias")
	if err := os.Symlink("ds", alias); err != nil {
		t.Fatal(err)
	}
	before = snapshot(t, dir)
	for _, o := range []string{filepath.Join(ds, "phase_summary.parquet"), filepath.Join(alias, "phase_summary.parquet"), filepath.Join(ds, "new", "report.md")} {
		wantRefused(t, dir, before, []string{"analyze", "--from", "--no-stats", "--format", "parquet", "-o", o, ds}, "inside the input directory")
	}
	// Beside the dataset is fine.
	if code, _, stderr := runMain(t, "analyze", "--from", "--no-stats", "--format", "parquet", "-o", filepath.Join(dir, "summary.parquet"), ds); code != 0 {
		t.Fatalf("-o beside the dataset: exit %d: %s", code, stderr)
	}
}
