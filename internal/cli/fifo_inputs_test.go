//go:build unix

package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// runMainBounded is runMain that fails, rather than hangs, when the run
// does not return (a FIFO opened for reading waits for a writer forever).
func runMainBounded(t *testing.T, args ...string) (code int, stderr string) {
	t.Helper()
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, _, stderr := runMain(t, args...)
		done <- result{code, stderr}
	}()
	select {
	case r := <-done:
		return r.code, r.stderr
	case <-time.After(2 * time.Minute): // a hang, not a timing: the run takes a second
		t.Fatalf("%v: still blocked after 2 minutes", args)
	}
	return 0, ""
}

// TestFIFOInputsRefused is issue 37: a named pipe where a file is expected
// (NAME.manifest.json beside an export, a table or the manifest of a
// dataset) blocked the run forever. Each is refused before it is opened:
// exit 2, one line naming the path and what it is.
func TestFIFOInputsRefused(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(fixture.Get(t, "eager_graph_small").SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "run.sqlite")
	if err := os.WriteFile(export, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ds := filepath.Join(dir, "ds")
	if code, _, stderr := runMain(t, "analyze", "--no-stats", "--quiet", "--out", ds, export); code != 0 {
		t.Fatalf("analyze --out: exit %d: %s", code, stderr)
	}
	if makeFIFO(t, filepath.Join(dir, "run.manifest.json")) == "" {
		t.Skip("no named pipes")
	}
	check := func(args []string, want string) {
		t.Helper()
		code, stderr := runMainBounded(t, args...)
		if code != cli.ExitInput || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "named pipe") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming %s as a named pipe", args, code, stderr, want)
		}
	}
	check([]string{"analyze", "--no-stats", export}, "run.manifest.json")
	check([]string{"inventory", export}, "run.manifest.json")
	for _, table := range []string{"phase_instances.parquet", "_dataset.json"} {
		p := filepath.Join(ds, table)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		makeFIFO(t, p)
		check([]string{"analyze", "--no-stats", "--from", ds}, table)
	}
}

// TestFIFOExportStopsOnSIGTERM is issue 37: a .sqlite.xz that is a named
// pipe nobody writes to blocked in open, and the first SIGTERM did not stop
// the run. A pipe is still read (the input may be piped in), but a signal
// stops the wait at once: exit 143, one line.
func TestFIFOExportStopsOnSIGTERM(t *testing.T) {
	in := makeFIFO(t, filepath.Join(t.TempDir(), "run.sqlite.xz"))
	if in == "" {
		t.Skip("no named pipes")
	}
	for _, args := range [][]string{{"info", in}, {"analyze", "--arm", "a=" + in}} {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		time.Sleep(300 * time.Millisecond) // pacing only: the signal may come before or during the open
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitTerminated {
				t.Errorf("%v: %v, want exit %d; stderr %q", args, err, cli.ExitTerminated, stderr.String())
			}
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("%v: the first SIGTERM did not stop the run", args)
		}
	}
}
