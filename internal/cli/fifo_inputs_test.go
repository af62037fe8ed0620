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
	code, _, stderr = runMainBounded3(t, args...)
	return code, stderr
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

// TestPipedExports: an export piped in under any name (`analyze
// /dev/stdin`, `<(xz -dc run.sqlite.xz)`) is read whether it is SQLite or
// xz: its first bytes say which, and it is copied to a private file since
// SQLite cannot read a pipe. It was refused as an "empty file", and with
// --out the input's hash read the pipe beside the reader, which then saw
// a truncated stream. A pipe of something else, or of nothing, is one
// line and exit 2.
func TestPipedExports(t *testing.T) {
	fx := fixture.Get(t, "eager_graph_small")
	xzBytes, err := os.ReadFile(fx.XZ)
	if err != nil {
		t.Fatal(err)
	}
	sqliteBytes, err := os.ReadFile(fx.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	_, want, _ := runMain(t, "info", fx.SQLite(t))
	dir := t.TempDir()
	pipe := func(name string, content []byte) string {
		p := makeFIFO(t, filepath.Join(dir, name))
		if p == "" {
			t.Skip("no named pipes")
		}
		// The writer is there before the reader, as a shell's pipe is: a
		// named pipe nobody has opened for writing reads as empty. O_RDWR
		// opens it without waiting for a reader.
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer f.Close()
			_, _ = f.Write(content) // the reader may stop early (a refusal)
		}()
		return p
	}
	for _, c := range []struct {
		name    string
		content []byte
	}{{"sqlite_in", sqliteBytes}, {"xz_in", xzBytes}} {
		p := pipe(c.name, c.content)
		code, out, stderr := runMainBounded3(t, "info", p)
		if code != 0 || strings.ReplaceAll(out, p, fx.SQLite(t)) != want {
			t.Errorf("%s: exit %d %s; info differs from the file's:\n%s", c.name, code, stderr, out)
		}
	}
	// A regular file of xz under another name (a shell's `< run.sqlite.xz`
	// seen as /dev/stdin) is decompressed too.
	renamed := filepath.Join(dir, "run_export")
	if err := os.WriteFile(renamed, xzBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runMain(t, "info", renamed); code != 0 || strings.ReplaceAll(out, renamed, fx.SQLite(t)) != want {
		t.Errorf("xz named %s: exit %d %s; info differs from the file's:\n%s", renamed, code, stderr, out)
	}
	ds := filepath.Join(dir, "ds")
	if code, _, stderr := runMainBounded3(t, "analyze", "--no-stats", "--quiet", "--out", ds, pipe("out_in", xzBytes)); code != 0 {
		t.Errorf("analyze --out of a pipe: exit %d: %s", code, stderr)
	}
	inputs := map[string]string{"text_in": pipe("text_in", []byte("hello, not an export\n")), "empty_in": pipe("empty_in", nil),
		"no_writer": makeFIFO(t, filepath.Join(dir, "no_writer"))} // refused at once, never waited on
	for name, p := range inputs {
		code, _, stderr := runMainBounded3(t, "info", p)
		if code != cli.ExitInput || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, name) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2, one line naming the pipe", name, code, stderr)
		}
	}
}

// runMainBounded3 is runMainBounded with the standard output too.
func runMainBounded3(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code        int
		out, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, stderr := runMain(t, args...)
		done <- result{code, out, stderr}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.stderr
	case <-time.After(2 * time.Minute): // a hang, not a timing
		t.Fatalf("%v: still blocked after 2 minutes", args)
	}
	return 0, "", ""
}
