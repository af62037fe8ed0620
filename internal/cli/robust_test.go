package cli_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nsysphase/nsysphase/internal/badgen"
	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// commands are the command lines every corpus case runs through cli.Main,
// with the input path appended. "{out}" is replaced by a path in the case's
// temp dir that must not exist after a failed run (nothing written to --out).
// A case's expected outcome is its "expect" in testdata/bad/cases.json,
// unless it overrides it for the subcommand (args[0]) under "commands".
//
// To put a new command through the corpus, add its line here, e.g.
// {"analyze", "--out", "{out}"} or {"ranges", "--format", "json"}, then run
// `go test ./internal/cli -run TestCorpus` and add per-command overrides
// for the cases where its outcome differs from info's.
var commands = [][]string{
	{"info"},
	{"info", "--format", "json"},
	{"analyze", "--format", "json", "--resamples", "1999", "--out", "{out}"},
}

// exactWarnings names the subcommands whose every warning is about the input,
// so that a case's warnings list must match them exactly and "clean" means no
// warning at all. Commands that also warn about their statistics (analyze)
// are checked only for the presence of the case's warnings.
var exactWarnings = map[string]bool{"info": true}

// corpusCommands is commands plus those of NSYSPHASE_CORPUS_COMMANDS, to try
// a command on the corpus before listing it: command lines separated by
// "|", arguments by spaces, e.g.
//
//	NSYSPHASE_CORPUS_COMMANDS='analyze --out {out}|analyze --format json' go test ./internal/cli -run TestCorpus
func corpusCommands() [][]string {
	out := slices.Clone(commands)
	for line := range strings.SplitSeq(os.Getenv("NSYSPHASE_CORPUS_COMMANDS"), "|") {
		if f := strings.Fields(line); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// TestCorpus runs every case of testdata/bad through every command and checks
// the outcome: unusable input exits 2 with one stderr line that names the
// file, says what is wrong and what to do, and writes nothing to stdout or
// --out; usable input exits 0 and reports exactly the expected warnings. No
// run may panic, and no run may change or add a file beside its input.
func TestCorpus(t *testing.T) {
	t.Parallel()
	corpusDir := badgen.CorpusDir(fixture.Root())
	cases, err := badgen.LoadCases(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	base := fixture.Get(t, badgen.BaseFixture).SQLite(t)
	baseSum := hashFile(t, base)
	t.Cleanup(func() { // after the parallel cases
		if got := hashFile(t, base); got != baseSum {
			t.Errorf("base fixture %s changed while generating the corpus", base)
		}
	})
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Slow() && testing.Short() {
				t.Skip("slow generator; run without -short")
			}
			t.Parallel() // each case in its own directory; cli.Main keeps no state between runs
			dir := t.TempDir()
			inDir := filepath.Join(dir, "in")
			if err := os.Mkdir(inDir, 0o755); err != nil {
				t.Fatal(err)
			}
			var path string
			if name, ok := strings.CutPrefix(c.Input, "gen:"); ok && slices.Contains(sharedBuilds, name) {
				path = copyBuilt(t, name, inDir)
			} else {
				p, err := badgen.Materialize(c, corpusDir, inDir, base)
				if err != nil {
					t.Fatal(err)
				}
				path = p
			}
			before := snapshot(t, inDir)
			for i, line := range corpusCommands() {
				name := strings.Join(line, " ")
				t.Run(name, func(t *testing.T) {
					out := filepath.Join(dir, "out", strings.Repeat("x", i+1))
					args := make([]string, 0, len(line)+1)
					for _, a := range line {
						args = append(args, strings.ReplaceAll(a, "{out}", out))
					}
					args = append(args, path)
					var stdout, stderr bytes.Buffer
					code := cli.Main(args, &stdout, &stderr)
					checkOutcome(t, c.For(line[0]), exactWarnings[line[0]], path, out, code, stdout.String(), stderr.String())
					if after := snapshot(t, inDir); !equalSnapshots(before, after) {
						t.Errorf("the input directory changed: before %v, after %v", before, after)
					}
				})
			}
		})
	}
}

func checkOutcome(t *testing.T, want badgen.Expect, exact bool, path, out string, code int, stdout, stderr string) {
	t.Helper()
	for _, s := range []string{"internal error", "panic", "goroutine "} {
		if strings.Contains(stderr, s) {
			t.Fatalf("a panic reached cli.Main's recover:\n%s", stderr)
		}
	}
	if code != want.Exit {
		t.Fatalf("exit %d, want %d\nstderr: %s\nstdout (%d bytes): %.500s", code, want.Exit, stderr, len(stdout), stdout)
	}
	if code != 0 {
		if stdout != "" {
			t.Errorf("a failed run wrote %d bytes to stdout: %.300s", len(stdout), stdout)
		}
		if _, err := os.Lstat(out); err == nil {
			t.Errorf("a failed run created its --out %s", out)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
			t.Errorf("stderr is not exactly one line: %q", stderr)
		}
		if !strings.Contains(stderr, path) {
			t.Errorf("stderr does not name the input %s: %s", path, stderr)
		}
		for _, s := range want.Stderr {
			if !strings.Contains(stderr, s) {
				t.Errorf("stderr lacks %q: %s", s, stderr)
			}
		}
		return
	}
	warnings, others := splitWarnings(stderr)
	if len(others) > 0 {
		t.Errorf("a successful run printed non-warning lines to stderr: %q", others)
	}
	outWarnings, _ := splitWarnings(stdout)
	warnings = append(warnings, outWarnings...)
	warnings = append(warnings, jsonWarnings(stdout)...)
	for _, s := range want.Stdout {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q", s)
		}
	}
	if exact && want.Clean && len(warnings) > 0 {
		t.Errorf("want no warning, got %q", warnings)
	}
	for _, s := range want.Warnings {
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, s) }) {
			t.Errorf("no warning contains %q; warnings: %q", s, warnings)
		}
	}
	for _, w := range warnings {
		if exact && !slices.ContainsFunc(want.Warnings, func(s string) bool { return strings.Contains(w, s) }) {
			t.Errorf("unexpected warning %q (add it to the case's warnings if it is right)", w)
		}
	}
}

// splitWarnings separates warning lines ("warning: …", "nsysphase: warning: …")
// from the other non-empty lines of s.
func splitWarnings(s string) (warnings, others []string) {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "warning:"), strings.HasPrefix(line, "nsysphase: warning:"):
			warnings = append(warnings, line)
		default:
			others = append(others, line)
		}
	}
	return warnings, others
}

// jsonWarnings returns the "warnings" of a JSON object, or of each object of
// a JSON array, printed on stdout; nil when stdout is not JSON. A warning is
// a string, or an object whose string fields are joined ({"code": …,
// "message": …}).
func jsonWarnings(stdout string) []string {
	type withWarnings struct {
		Warnings []any `json:"warnings"`
	}
	var docs []withWarnings
	var one withWarnings
	if err := json.Unmarshal([]byte(stdout), &one); err == nil {
		docs = append(docs, one)
	} else if err := json.Unmarshal([]byte(stdout), &docs); err != nil {
		return nil
	}
	var out []string
	for _, d := range docs {
		for _, w := range d.Warnings {
			switch w := w.(type) {
			case string:
				out = append(out, w)
			case map[string]any:
				var parts []string
				for _, k := range slices.Sorted(maps.Keys(w)) {
					if s, ok := w[k].(string); ok && s != "" {
						parts = append(parts, s)
					}
				}
				out = append(out, strings.Join(parts, " "))
			}
		}
	}
	return out
}

// snapshot maps every entry under dir to its kind and content hash (links to
// their target), so that any change, addition or removal shows.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link " + target
		case d.IsDir():
			out[rel] = "dir"
		case !d.Type().IsRegular(): // a FIFO: reading it would block
			out[rel] = "special " + d.Type().String()
		default:
			out[rel] = "file " + hashFile(t, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalSnapshots(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func hashFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TestInfoBadAmongGood checks that one unusable file among good ones fails
// the whole run before anything is printed.
func TestInfoBadAmongGood(t *testing.T) {
	t.Parallel()
	base := fixture.Get(t, badgen.BaseFixture).SQLite(t)
	dir := t.TempDir()
	bad, err := badgen.Build("truncated_tail", dir, base)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"info", base, bad, base}, &stdout, &stderr)
	if code != cli.ExitInput || stdout.Len() != 0 || !strings.Contains(stderr.String(), bad) {
		t.Fatalf("exit %d, stdout %d bytes, stderr %q; want exit 2, nothing on stdout, the bad file named", code, stdout.Len(), stderr.String())
	}
}

// TestPathologicalMemory runs info on the pathological sizes and checks that
// its memory does not grow with them: the peak heap and anonymous memory
// (SQLite's allocations are outside the Go heap) while reading 1,000,000
// unclosed ranges stay within a fixed margin of those while reading the base
// export. Skipped with -short (it builds a 50 MB export, shared with
// TestCorpus).
func TestPathologicalMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a large export; run without -short")
	}
	// As in a process of its own: the Go defaults (TestMain set GOGC=400
	// and GOMEMLIMIT for the tests' process), or whatever targets a command
	// that tunes the collector sets (info does not).
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	})
	base := fixture.Get(t, badgen.BaseFixture).SQLite(t)
	huge, whole := built(t, "million_unclosed"), built(t, "whole_file_range")
	st, _ := os.Stat(huge)
	t.Logf("million_unclosed: %d MB", st.Size()>>20)

	run := func(p string) (heap, anon uint64) {
		t.Helper()
		runtime.GC()
		stop := make(chan struct{})
		done := make(chan struct{})
		var peakHeap, peakAnon uint64
		heap0, anon0 := memNow()
		go func() {
			defer close(done)
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				h, a := memNow()
				peakHeap, peakAnon = max(peakHeap, h), max(peakAnon, a)
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()
		var stdout, stderr bytes.Buffer
		code := cli.Main([]string{"info", "--format", "json", p}, &stdout, &stderr)
		close(stop)
		<-done
		if code != 0 {
			t.Fatalf("info %s: exit %d: %s", p, code, stderr.String())
		}
		return sub(peakHeap, heap0), sub(peakAnon, anon0)
	}
	baseHeap, baseAnon := run(base)
	for _, p := range []string{huge, whole} {
		heap, anon := run(p)
		t.Logf("%s: peak heap +%d MB (base +%d MB), peak anonymous memory +%d MB (base +%d MB)", filepath.Base(p), heap>>20, baseHeap>>20, anon>>20, baseAnon>>20)
		const margin = 64 << 20
		if heap > baseHeap+margin {
			t.Errorf("%s: peak heap grew by %d MB, more than the base's %d MB + 64 MB", p, heap>>20, baseHeap>>20)
		}
		if anon > baseAnon+margin {
			t.Errorf("%s: peak anonymous memory grew by %d MB, more than the base's %d MB + 64 MB", p, anon>>20, baseAnon>>20)
		}
	}
}

// sharedBuilds are the corpus generators whose exports several tests read:
// each is built once per test process (built), and TestCorpus runs on a
// copy. million_unclosed takes a second to build.
var sharedBuilds = []string{"million_unclosed", "whole_file_range", "huge_strings"}

var (
	builtDir  = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "nsysphase-built-") })
	builtOnce sync.Map // generator name → func() (string, error)
)

// built returns the export generator name (one of sharedBuilds) builds
// from the corpus's base, building it on first use. Tests only read it.
func built(t *testing.T, name string) string {
	t.Helper()
	if !slices.Contains(sharedBuilds, name) {
		t.Fatalf("built(%q): not in sharedBuilds", name)
	}
	base := fixture.Get(t, badgen.BaseFixture).SQLite(t)
	f, _ := builtOnce.LoadOrStore(name, sync.OnceValues(func() (string, error) {
		root, err := builtDir()
		if err != nil {
			return "", err
		}
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
		return badgen.Build(name, dir, base)
	}))
	p, err := f.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// copyBuilt copies built(name) into dir and returns the copy's path.
func copyBuilt(t *testing.T, name, dir string) string {
	t.Helper()
	src := built(t, name)
	dst := filepath.Join(dir, filepath.Base(src))
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// removeBuilt removes the shared builds (TestMain, after the tests).
func removeBuilt() {
	if dir, err := builtDir(); err == nil {
		os.RemoveAll(dir)
	}
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// memNow returns the live Go heap and the process's anonymous resident
// memory (0 where /proc is absent).
func memNow() (heap, anon uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap = ms.HeapAlloc
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return heap, 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			fields := strings.Fields(rest) // "1234 kB"
			if len(fields) == 0 {
				return heap, 0
			}
			kb, _ := strconv.ParseUint(fields[0], 10, 64)
			return heap, kb << 10
		}
	}
	return heap, 0
}

// TestCorpusDocumented checks that docs/robustness.md has a row for every
// case of the corpus.
func TestCorpusDocumented(t *testing.T) {
	t.Parallel()
	cases, err := badgen.LoadCases(badgen.CorpusDir(fixture.Root()))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(fixture.Root(), "docs", "robustness.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !bytes.Contains(doc, []byte("| `"+c.Name+"` |")) {
			t.Errorf("docs/robustness.md has no row for case %s", c.Name)
		}
	}
}
