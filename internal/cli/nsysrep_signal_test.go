//go:build unix

package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
)

// TestNsysRepSignalStopsExport is the signal half of issue 24 case 16: the
// first SIGTERM during a hung `nsys export` was ignored, and the second
// left nsys running and an export-* directory in the cache. One SIGTERM now
// ends the run (143), kills nsys and its children, and removes the partial
// export.
func TestNsysRepSignalStopsExport(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	exports := nsysScript(t, dir, copyOut+`echo partial > "$out"
sleep 1000 &
echo $$ $! > `+pids+`.tmp
mv `+pids+`.tmp `+pids+`
wait
`)
	rep := report(t, dir, "run.nsys-rep")
	cmd := exec.Command(os.Args[0], "info", rep)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	waitFor(t, exited, func() bool { _, err := os.Stat(pids); return err == nil })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitTerminated {
		t.Errorf("exit %v, want %d after one SIGTERM; stderr: %s", err, cli.ExitTerminated, stderr.String())
	}
	b, _ := os.ReadFile(pids)
	for _, f := range strings.Fields(string(b)) {
		if st, err := os.ReadFile("/proc/" + f + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
			t.Errorf("process %s (nsys or its child) still runs: %s", f, st)
			if pid, perr := strconv.Atoi(f); perr == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if m, _ := filepath.Glob(filepath.Join(exports, "*", "*")); len(m) != 0 {
		t.Errorf("left in the cache: %v", m)
	}
}
