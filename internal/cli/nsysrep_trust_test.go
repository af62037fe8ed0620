package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// nsysScript installs body as the nsys that NSYS names, with a private
// cache, and returns the cache's exports directory.
func nsysScript(t *testing.T, dir, body string) (exports string) {
	t.Helper()
	bin := filepath.Join(dir, "nsys.sh")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NSYS", bin)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("HOME", dir)
	return filepath.Join(dir, "cache", "nsysphase", "exports")
}

// copyOut is the shell that copies $1 to the --output argument.
const copyOut = `out=""
prev=""
for a in "$@"; do
  if [ "$prev" = "--output" ]; then out="$a"; fi
  prev="$a"
done
`

func report(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("a report"), 0o444); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNsysRepNameNotAnOption is issue 24 case 14: a report named
// "--force-overwrite=false.nsys-rep" was passed to nsys export as a bare
// last argument, which nsys may read as an option. It is passed as an
// absolute path.
func TestNsysRepNameNotAnOption(t *testing.T) {
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	args := filepath.Join(dir, "args.log")
	nsysScript(t, dir, copyOut+`for a in "$@"; do echo "$a" >> `+args+`; done
cp `+fx+` "$out"
`)
	report(t, dir, "--force-overwrite=false.nsys-rep")
	t.Chdir(dir)
	if out, errs, code := run(t, "info", "--", "--force-overwrite=false.nsys-rep"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	b, _ := os.ReadFile(args)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	last := lines[len(lines)-1]
	if want := filepath.Join(dir, "--force-overwrite=false.nsys-rep"); last != want {
		t.Errorf("last argument %q, want the absolute path %q (args %q)", last, want, lines)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "--force-overwrite=") {
			t.Errorf("an argument reads as an option: %q", l)
		}
	}
}

// TestNsysRepBadExportNotCached is issue 24 case 15: an nsys that once
// wrote a bad export (exit 0) poisoned the cache for good. An export is
// cached only once it opens; a cached export that does not open is
// exported again.
func TestNsysRepBadExportNotCached(t *testing.T) {
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls.log")
	good := filepath.Join(dir, "good")
	exports := nsysScript(t, dir, copyOut+`echo export >> `+calls+`
if [ -e `+good+` ]; then cp `+fx+` "$out"; else echo "not an export" > "$out"; fi
`)
	rep := report(t, dir, "run.nsys-rep")
	_, errs, code := run(t, "info", rep)
	if code != cli.ExitInput || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, rep) || !strings.Contains(errs, "unusable export") {
		t.Fatalf("bad export: exit %d, stderr %q; want exit 2 naming the report and the unusable export", code, errs)
	}
	if m, _ := filepath.Glob(filepath.Join(exports, "*", "*")); len(m) != 0 {
		t.Fatalf("the bad export or its temp dir was cached: %v", m)
	}
	if err := os.WriteFile(good, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := run(t, "info", rep); code != 0 {
		t.Fatalf("after nsys recovered: exit %d\n%s%s", code, out, errs)
	}
	// Damage the cached export: the next run exports again.
	m, _ := filepath.Glob(filepath.Join(exports, "*", "run.sqlite"))
	if len(m) != 1 {
		t.Fatalf("cache: %v", m)
	}
	if err := os.WriteFile(m[0], []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := run(t, "info", rep); code != 0 {
		t.Fatalf("damaged cache: exit %d\n%s%s", code, out, errs)
	}
	b, _ := os.ReadFile(calls)
	if n := strings.Count(string(b), "export"); n != 3 {
		t.Errorf("nsys export ran %d times, want 3 (bad, good, after the damage)", n)
	}
}

// TestNsysRepHungExportStopped is issue 24 case 16: an nsys that hangs held
// the run forever, ignored the first SIGTERM, and outlived the second,
// leaving an export-* directory in the cache. The export is bounded by
// NSYSPHASE_EXPORT_TIMEOUT; nsys and its children are killed and the
// partial output removed.
func TestNsysRepHungExportStopped(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	// The shell and a child that never ends, both recorded.
	exports := nsysScript(t, dir, copyOut+`echo partial > "$out"
echo $$ >> `+pids+`
sleep 1000 &
echo $! >> `+pids+`
wait
`)
	t.Setenv("NSYSPHASE_EXPORT_TIMEOUT", "1s")
	rep := report(t, dir, "run.nsys-rep")
	_, errs, code := run(t, "info", rep)
	if code != cli.ExitInput || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "did not finish within 1s") {
		t.Fatalf("hung nsys: exit %d, stderr %q", code, errs)
	}
	if m, _ := filepath.Glob(filepath.Join(exports, "*", "*")); len(m) != 0 {
		t.Errorf("left in the cache: %v", m)
	}
	b, _ := os.ReadFile(pids)
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		// Reap nothing of ours: a killed process may stay a zombie of
		// its parent for a moment, so look at its state, not its pid; on a
		// loaded machine a killed process may take a moment to die.
		alive := func() ([]byte, bool) {
			st, err := os.ReadFile("/proc/" + f + "/stat")
			return st, err == nil && !strings.Contains(string(st), ") Z ")
		}
		st, ok := alive()
		for deadline := time.Now().Add(5 * time.Second); ok && time.Now().Before(deadline); st, ok = alive() {
			time.Sleep(20 * time.Millisecond)
		}
		if ok {
			t.Errorf("process %d still runs: %s", pid, st)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	t.Setenv("NSYSPHASE_EXPORT_TIMEOUT", "soon")
	if _, errs, code := run(t, "info", rep); code != cli.ExitInput || !strings.Contains(errs, "NSYSPHASE_EXPORT_TIMEOUT") {
		t.Errorf("bad timeout: exit %d: %s", code, errs)
	}
}
