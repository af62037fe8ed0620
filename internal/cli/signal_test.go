//go:build unix

package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestSignalCleansUp is issue 16 case 9: SIGTERM (unlike SIGINT) left the
// decompressed copy of an .xz input in the temp dir. Both now cancel the
// run: every deferred cleanup runs and the exit status is 128 + the signal.
//
// The run must be caught mid-work without a race, so the .sqlite.xz input
// is a FIFO fed by the test: half the compressed bytes at once (the private
// copy now exists in TMPDIR), then, after the signal, a few bytes at a time
// so that the decompression keeps returning to its cancellation check. The
// process can only stop by noticing the signal, or the test runs out of
// bytes and fails.
func TestSignalCleansUp(t *testing.T) {
	data, err := os.ReadFile(fixture.Get(t, "eager_graph_small").XZ)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, cli.ExitTerminated}, {syscall.SIGINT, cli.ExitInterrupted}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			tmp := filepath.Join(dir, "tmp")
			outParent := filepath.Join(dir, "results")
			for _, d := range []string{tmp, outParent} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			in := makeFIFO(t, filepath.Join(dir, "run.sqlite.xz"))
			// --arm, not a positional input: positional inputs are hashed
			// for the dataset by a second reader, which would split the pipe.
			cmd := exec.Command(os.Args[0], "analyze", "--arm", "a="+in, "--out", filepath.Join(outParent, "res"),
				"--format", "json", "-o", filepath.Join(outParent, "report.json"))
			cmd.Env = append(os.Environ(), runMainEnv+"=1", "TMPDIR="+tmp)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			w := openWriter(t, in, exited)
			defer w.Close()
			if _, err := w.Write(data[:len(data)/2]); err != nil {
				t.Fatal(err)
			}
			waitFor(t, exited, func() bool { return len(glob(t, tmp, "nsysphase-*")) > 0 })
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			rest := data[len(data)/2 : len(data)-1024] // never the whole file
			var waitErr error
		feed:
			for {
				select {
				case waitErr = <-exited:
					break feed
				default:
				}
				if len(rest) == 0 {
					t.Fatalf("the run read the whole input without stopping for %v; stderr: %s", tc.sig, stderr.String())
				}
				n := min(len(rest), 256)
				if _, err := w.Write(rest[:n]); err != nil {
					if errors.Is(err, syscall.EPIPE) {
						waitErr = <-exited
						break feed
					}
					t.Fatal(err)
				}
				rest = rest[n:]
				time.Sleep(2 * time.Millisecond) // pacing only: nothing here is timed
			}
			var ee *exec.ExitError
			if !errors.As(waitErr, &ee) || ee.ExitCode() != tc.code {
				t.Errorf("exit %v, want %d; stderr: %s", waitErr, tc.code, stderr.String())
			}
			if got := stderr.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "stopped by") {
				t.Errorf("stderr %q: want one line saying the run was stopped", got)
			}
			if left := glob(t, tmp, "*"); len(left) > 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
			if left := glob(t, outParent, "*"); len(left) > 0 {
				t.Errorf("left beside --out and -o: %v", left)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout: %.200s", stdout.String())
			}
		})
	}
}

// openWriter opens the FIFO for writing once the process has opened it for
// reading (a non-blocking open fails with ENXIO until then).
func openWriter(t *testing.T, fifo string, exited chan error) *os.File {
	t.Helper()
	var fd int
	waitFor(t, exited, func() bool {
		var err error
		fd, err = unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		return err == nil
	})
	if err := unix.SetNonblock(fd, false); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fd), fifo)
}

// waitFor polls cond until it holds; the process exiting first fails the test.
func waitFor(t *testing.T, exited chan error, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the process exited (%v) before the test could catch it mid-run", err)
		case <-time.After(time.Millisecond):
		}
	}
}

// glob lists the entries of dir matching pattern (hidden ones included).
func glob(t *testing.T, dir, pattern string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if ok, _ := filepath.Match(pattern, e.Name()); ok || (pattern == "*" && strings.HasPrefix(e.Name(), ".")) {
			out = append(out, e.Name())
		}
	}
	return out
}
