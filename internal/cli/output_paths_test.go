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

// copyFixture copies the decompressed export into dir as name.
func copyFixture(t *testing.T, fx, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(fx)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOutputNotAnInput is issue 16 case 7: `analyze -o X.sqlite X.sqlite`
// replaced the input export with the report. -o naming an input, whether
// directly, through a symlink, a glob or an --arm glob, is exit 2 with one
// line, before any work, and the input is byte-for-byte unchanged with no
// file added beside it.
func TestOutputNotAnInput(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	in := copyFixture(t, fx, dir, "X.sqlite")
	alias := filepath.Join(dir, "alias.sqlite")
	if err := os.Symlink("X.sqlite", alias); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	for _, args := range [][]string{
		{"analyze", "--no-stats", "-o", in, in},
		{"analyze", "--no-stats", "--format", "json", "-o", alias, in},
		{"analyze", "--no-stats", "-o", in, alias},
		{"analyze", "--no-stats", "-o", in, filepath.Join(dir, "X*.sqlite")},
		{"analyze", "--no-stats", "-o", in, "--arm", "x=" + filepath.Join(dir, "X.sql?te")},
		{"analyze", "--no-stats", "--out", in, in},
		{"analyze", "--no-stats", "--out", alias, "--overwrite", in},
		{"inventory", "-o", in, in},
	} {
		var stdout, stderr bytes.Buffer
		code := cli.Main(args, &stdout, &stderr)
		if code != cli.ExitInput || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "input") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line naming the input", strings.Join(args, " "), code, stderr.String())
		}
		if after := snapshot(t, dir); !equalSnapshots(before, after) {
			t.Fatalf("%s changed the input directory: before %v, after %v", strings.Join(args, " "), before, after)
		}
	}
}

// TestOutputThroughSymlink: -o on a symlink writes the report to the link's
// target and leaves the link a link (it used to replace the link).
func TestOutputThroughSymlink(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "reports", "report.json")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "latest.json")
	if err := os.Symlink(filepath.Join("reports", "report.json"), link); err != nil {
		t.Fatal(err)
	}
	args := []string{"analyze", "--no-stats", "--format", "json", fx}
	var want, stderr bytes.Buffer
	if code := cli.Main(args, &want, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if code := cli.Main(append([]string{"-o", link}, args...), &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("-o %s: exit %d: %s", link, code, stderr.String())
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink (%v)", link, err)
	}
	got, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("the link's target holds %d bytes, want the %d bytes of the report", len(got), want.Len())
	}
	entries, _ := os.ReadDir(filepath.Dir(target))
	if len(entries) != 1 {
		t.Errorf("beside the target: %v, want report.json alone (no temporary file left)", entries)
	}
}

// TestOutputRefusesSpecial: -o on a FIFO or a directory is exit 2 with one
// line, and the FIFO or directory is left as it was (a FIFO used to be
// replaced by a regular file).
func TestOutputRefusesSpecial(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	outs := []string{sub}
	if fifo := makeFIFO(t, filepath.Join(dir, "pipe")); fifo != "" {
		outs = append(outs, fifo)
	}
	before := snapshot(t, dir)
	for _, out := range outs {
		var stderr bytes.Buffer
		code := cli.Main([]string{"analyze", "--no-stats", "-o", out, fx}, &bytes.Buffer{}, &stderr)
		if code != cli.ExitInput || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "not a regular file") {
			t.Errorf("-o %s: exit %d, stderr %q; want exit 2, one line, \"not a regular file\"", out, code, stderr.String())
		}
	}
	if after := snapshot(t, dir); !equalSnapshots(before, after) {
		t.Errorf("the directory changed: before %v, after %v", before, after)
	}
}
