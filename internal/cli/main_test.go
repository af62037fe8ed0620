package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// runMainEnv makes the test binary act as nsysphase itself: tests that need
// a separate process (signals) run os.Args[0] with it set and the command
// line as arguments.
const runMainEnv = "NSYSPHASE_TEST_RUN_MAIN"

// runBatchEnv makes the test binary run the command lines of a batch file
// (runBatch) one after another, in its own working directory.
const runBatchEnv = "NSYSPHASE_TEST_RUN_BATCH"

// TestMain runs nsysphase itself under runMainEnv, a batch under
// runBatchEnv; otherwise it shares one decompressed copy of each fixture .xz
// among the commands the tests run (see fixture.ShareDecompressed), with a
// cache directory of its own.
//
// GOMEMLIMIT is set for the tests' process and what it starts, so that
// cli.Main leaves the collector alone (memtune.SetMemoryTarget): the
// program's targets (GOGC=400 then 50 under 256 MiB of input, a 120 MiB
// soft limit) suit one command, but in a process that runs a thousand
// commands they spent a quarter of the CPU collecting. GOGC=400 (unless
// GOGC is set) cuts another quarter for a peak of about 0.5 GB resident
// instead of 0.3. TestPathologicalMemory measures under the program's
// targets.
func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	fixture.ShareDecompressed()
	if p := os.Getenv(runBatchEnv); p != "" {
		os.Exit(runBatchMain(p))
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		os.Setenv("GOMEMLIMIT", "off")
	}
	if os.Getenv("GOGC") == "" {
		os.Setenv("GOGC", "400") // for the child processes
		debug.SetGCPercent(400)
	}
	// Hash sums remembered by the commands go to a cache of this run, not
	// the user's.
	cache, err := os.MkdirTemp("", "nsysphase-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	removeBuilt()
	os.Exit(code)
}

// batchLine is one command line of a batch: its arguments (after
// "nsysphase") and, when Stdout is set, the file its standard output goes
// to (as `> FILE`), else it is dropped. Shell, when set, is instead a
// documented `nsysphase …` line, split by shellWords (globs, "> FILE") in
// the child's working directory just before it runs.
type batchLine struct {
	Args   []string `json:"args,omitempty"`
	Stdout string   `json:"stdout,omitempty"`
	Shell  string   `json:"shell,omitempty"`
}

// batchResult is how a batchLine ended: its exit status and standard error.
// Err is set when its Stdout file could not be written.
type batchResult struct {
	Code   int    `json:"code"`
	Stderr []byte `json:"stderr"` // bytes, not a string: JSON would replace invalid UTF-8
	Err    string `json:"err,omitempty"`
}

// runBatch runs lines through cli.Main, in order, in a child process of the
// test binary whose working directory is dir and whose environment is the
// tests' plus env. Tests whose commands use relative paths or process-wide
// state (the working directory, --cpuprofile, --trace) run them so, beside
// other tests, instead of t.Chdir, which makes a test run alone.
func runBatch(t *testing.T, dir string, env []string, lines []batchLine) []batchResult {
	t.Helper()
	tmp := t.TempDir() // not dir: the commands may list or glob it
	req, resp := filepath.Join(tmp, "lines.json"), filepath.Join(tmp, "results.json")
	data, err := json.Marshal(lines)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(req, data, 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable() // not os.Args[0], which may be relative to the working directory
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), runBatchEnv+"="+req)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("batch of %d command lines in %s: %v\n%s", len(lines), dir, err, out.Bytes())
	}
	data, err = os.ReadFile(resp)
	if err != nil {
		t.Fatal(err)
	}
	var res []batchResult
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != len(lines) {
		t.Fatalf("batch: %d results for %d command lines\n%s", len(res), len(lines), out.Bytes())
	}
	return res
}

// runBatchMain is the child's side of runBatch: it reads the lines from
// path and writes the results beside it as results.json.
func runBatchMain(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var lines []batchLine
	if err := json.Unmarshal(data, &lines); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res := make([]batchResult, len(lines))
	for i, l := range lines {
		if l.Shell != "" {
			args, out, err := shellWords(l.Shell)
			if err != nil || len(args) == 0 {
				res[i].Code, res[i].Err = -1, fmt.Sprintf("split %q: %v", l.Shell, err)
				continue
			}
			l.Args, l.Stdout = args[1:], out
		}
		var stdout, stderr bytes.Buffer
		res[i].Code = cli.Main(l.Args, &stdout, &stderr)
		res[i].Stderr = stderr.Bytes()
		if l.Stdout != "" {
			if err := os.WriteFile(l.Stdout, stdout.Bytes(), 0o644); err != nil {
				res[i].Err = err.Error()
			}
		}
	}
	if data, err = json.Marshal(res); err == nil {
		err = os.WriteFile(filepath.Join(filepath.Dir(path), "results.json"), data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
