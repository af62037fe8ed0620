//go:build unix

package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestHistoryIsAnInput: a --history dataset is an input like an export.
// `check --history 'h/*' -o h/run1/phase_instances.parquet` replaced a
// table of a history run (every later gate exited 2), and `analyze
// --history h/run1 --out h/run1 --overwrite` replaced the baseline with
// the candidate. Both are refused before any work and h is left as it was;
// `--history 'h/*' --out h/new` (a new run beside the history) works: the
// glob no longer picks up h/.new.tmp-…, the staging directory of its own
// output.
func TestHistoryIsAnInput(t *testing.T) {
	t.Parallel()
	h := historyDatasets(t, "sharing_null_1", "sharing_null_2", "sharing_mps_1")
	cand := fixture.Get(t, "sharing_mps_2").XZ
	run1 := filepath.Join(h, "sharing_null_1")
	before := snapshot(t, h)
	for _, args := range [][]string{
		{"check", "--history", filepath.Join(h, "*"), "--phase", "collector_step", "-o", filepath.Join(run1, "phase_instances.parquet"), cand},
		{"analyze", "--no-stats", "--history", run1, "--out", run1, "--overwrite", cand},
		{"analyze", "--no-stats", "--history", filepath.Join(h, "*"), "--out", run1, "--overwrite", cand},
	} {
		_, errs, code := run(t, args...)
		if code != cli.ExitInput || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "input") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming the input", args, code, errs)
		}
	}
	if after := snapshot(t, h); !equalSnapshots(before, after) {
		t.Fatalf("the history changed")
	}
	newRun := filepath.Join(h, "new")
	if _, errs, code := run(t, "analyze", "--quiet", "--no-stats", "--history", filepath.Join(h, "*"), "--out", newRun, cand); code != 0 {
		t.Fatalf("--history 'h/*' --out h/new: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(newRun, "phase_instances.parquet")); err != nil {
		t.Fatal(err)
	}
}

// TestOutputInsideOut: -o inside the --out directory exited 0 and left a
// dataset that --from could no longer open (a file its manifest does not
// list); it is refused, and nothing is written.
func TestOutputInsideOut(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small").XZ
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	for _, o := range []string{filepath.Join(results, "phase_instances.parquet"), filepath.Join(dir, ".", "results", "sub", "report.md")} {
		_, errs, code := run(t, "analyze", "--no-stats", "--out", results, "-o", o, fx)
		if code != cli.ExitInput || !strings.Contains(errs, "inside --out") {
			t.Errorf("-o %s: exit %d, stderr %q", o, code, errs)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("written: %v", entries)
	}
}

// mainProcess runs nsysphase (the test binary under runMainEnv) in a
// separate process, through sh when script is set ("umask 077; exec …").
func mainProcess(t *testing.T, script string, stdout *os.File, args ...string) (stderr string, code int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	if script != "" {
		cmd = exec.Command("sh", append([]string{"-c", script + `; exec "$0" "$@"`, exe}, args...)...)
	} else {
		cmd = exec.Command(exe, args...)
	}
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &errb
	err = cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return errb.String(), 0
}

// TestOutputDevStdoutAppends: `analyze -o /dev/stdout … >> ci.log` followed
// /proc/self/fd/1 to ci.log and renamed the report over it: the log was
// gone. The report is now streamed into the descriptor, after the log.
func TestOutputDevStdoutAppends(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/stdout"); err != nil {
		t.Skip("no /dev/stdout")
	}
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	log := filepath.Join(t.TempDir(), "ci.log")
	if err := os.WriteFile(log, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(log)
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, args := range [][]string{
		{"analyze", "--no-stats", "--format", "json", "-o", "/dev/stdout", fx},
		{"info", "-o", "/dev/fd/1", fx},
	} {
		if errs, code := mainProcess(t, "", f, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(log)
	if !os.SameFile(before, after) || !strings.HasPrefix(string(b), "earlier step\n{") || !strings.Contains(string(b), `"schema_version"`) || strings.Count(string(b), "eager_graph_small") < 2 {
		t.Fatalf("ci.log replaced or not appended to (same file %v):\n%.300s", os.SameFile(before, after), b)
	}
}

// TestOutputModes: -o kept no mode of its own (a 0600 file became 0644,
// whatever the umask) and --out directories were 0755 under umask 077. A
// replaced file keeps its mode; new files and directories get 0666/0777
// less the umask.
func TestOutputModes(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	private := filepath.Join(dir, "private.md")
	if err := os.WriteFile(private, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(private, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := run(t, "info", "-o", private, fx); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if st, _ := os.Stat(private); st.Mode().Perm() != 0o600 {
		t.Errorf("replaced 0600 file is %v", st.Mode().Perm())
	}

	report, ds := filepath.Join(dir, "new", "report.md"), filepath.Join(dir, "ds")
	if errs, code := mainProcess(t, "umask 077", nil, "analyze", "--no-stats", "-o", report, "--out", ds, fx); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := map[string]os.FileMode{report: 0o600, filepath.Dir(report): 0o700, ds: 0o700, filepath.Join(ds, "phase_instances.parquet"): 0o600}
	for p, m := range want {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != m {
			t.Errorf("%s under umask 077: %v %v, want %v", p, st.Mode().Perm(), err, m)
		}
	}
}
