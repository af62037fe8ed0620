package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/badgen"
	"github.com/nsysphase/nsysphase/internal/base/budget"
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
	t.Parallel()
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
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	if code, _, stderr := runMain(t, "analyze", "--no-stats", "--quiet", "--out", ds, fx); code != 0 {
		t.Fatalf("dataset: exit %d: %s", code, stderr)
	}
	alias := filepath.Join(dir, "alias")
	if err := os.Symlink("ds", alias); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	for _, o := range []string{filepath.Join(ds, "phase_summary.parquet"), filepath.Join(alias, "phase_summary.parquet"), filepath.Join(ds, "new", "report.md")} {
		wantRefused(t, dir, before, []string{"analyze", "--from", "--no-stats", "--format", "parquet", "-o", o, ds}, "inside the input directory")
	}
	wantRefused(t, dir, before, []string{"analyze", "--from", "--no-stats", "--out", filepath.Join(ds, "sub"), ds}, "inside the input directory")
	// Beside the dataset is fine.
	if code, _, stderr := runMain(t, "analyze", "--from", "--no-stats", "--format", "parquet", "-o", filepath.Join(dir, "summary.parquet"), ds); code != 0 {
		t.Fatalf("-o beside the dataset: exit %d: %s", code, stderr)
	}
}

// analyzed is the part of analyze's JSON the issue 24 tests read.
type analyzed struct {
	Summary []struct {
		Arm   string `json:"arm"`
		Phase string `json:"phase"`
		N     int    `json:"n"`
	} `json:"summary"`
	Warnings []struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"warnings"`
}

func analyzed24(t *testing.T, args ...string) analyzed {
	t.Helper()
	args = append([]string{"analyze", "--no-stats", "--format", "json"}, args...)
	code, stdout, stderr := runMain(t, args...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	var a analyzed
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// warning returns the message of a's warning with code that contains
// want, "" when none does.
func (a analyzed) warning(code, want string) string {
	for _, w := range a.Warnings {
		if w.Code == code && strings.Contains(w.Message, want) {
			return w.Message
		}
	}
	return ""
}

func (a analyzed) n(phase string) int {
	n := 0
	for _, s := range a.Summary {
		if s.Phase == phase {
			n += s.N
		}
	}
	return n
}

func derive(t *testing.T, name, sql string) string {
	t.Helper()
	p, err := badgen.Derive(t.TempDir(), fixture.Get(t, "eager_graph_small").SQLite(t), name, sql)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBackwardRangesLeftOut is issue 24 case 3: NVTX ranges with end <
// start were kept as zero-length instances, lowering their phase's mean,
// with no warning in analyze. They are left out, with a warning.
func TestBackwardRangesLeftOut(t *testing.T) {
	t.Parallel()
	base := analyzed24(t, fixture.Get(t, "eager_graph_small").SQLite(t))
	p := derive(t, "backward", `UPDATE NVTX_EVENTS SET "end" = start - 1 WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE eventType = 59 AND text = 'metrics' ORDER BY start LIMIT 4 OFFSET 40);`)
	a := analyzed24(t, p)
	if a.warning("end_before_start", "4 NVTX ranges end before they start and were left out") == "" {
		t.Errorf("no warning about the 4 backward ranges: %+v", a.Warnings)
	}
	if got, want := a.n("metrics"), base.n("metrics")-4; got != want {
		t.Errorf("metrics instances: %d, want %d (4 fewer than the base's)", got, want)
	}
}

// TestUnmatchedKernelsWarned is issue 24 case 4: kernels whose
// correlationId matches no API call were dropped from every total without
// a word.
func TestUnmatchedKernelsWarned(t *testing.T) {
	t.Parallel()
	p := derive(t, "unmatched", `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = correlationId + 100000000 WHERE rowid IN (SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 20 OFFSET 500);`)
	a := analyzed24(t, p)
	if a.warning("unmatched_ops", "20 GPU operations have a correlationId that matches no CUDA API call") == "" {
		t.Errorf("no warning about the 20 unmatched kernels: %+v", a.Warnings)
	}
	if base := analyzed24(t, fixture.Get(t, "eager_graph_small").SQLite(t)); len(base.Warnings) != 0 {
		t.Errorf("the base export warns: %+v", base.Warnings)
	}
}

// TestDuplicateCorrelationWarned is issue 24 case 5: API calls repeating a
// correlationId made their kernels count twice; only info warned.
func TestDuplicateCorrelationWarned(t *testing.T) {
	t.Parallel()
	p, err := badgen.Build("duplicate_correlation", t.TempDir(), fixture.Get(t, "eager_graph_small").SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	if a := analyzed24(t, p); a.warning("duplicate_correlation", "5 CUDA API calls share their (process, correlationId)") == "" {
		t.Errorf("no warning about the 5 calls: %+v", a.Warnings)
	}
}

// TestAnalyzeReportsQuality is issue 24 case 6: push/pop ranges that cross
// made phase walls add up to more than the step while analyze was silent
// (only info warned). analyze reports the export's quality findings as
// coded warnings, as info does.
func TestAnalyzeReportsQuality(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	for name, want := range map[string][2]string{
		"unbalanced_push_pop": {"unbalanced_range", "1 NVTX push/pop range overlaps an enclosing range"},
		"other_thread_end":    {"other_thread_end", "10 NVTX start/end ranges ended on another thread"},
		"textid_dangling":     {"dangling_text_id", "3 NVTX rows name a textId that StringIds lacks"},
		"text_timestamps":     {"non_integer_time", "2 rows of CUPTI_ACTIVITY_KIND_KERNEL have a start or end stored as text"},
	} {
		p, err := badgen.Build(name, t.TempDir(), fx)
		if err != nil {
			t.Fatal(err)
		}
		if a := analyzed24(t, p); a.warning(want[0], want[1]) == "" {
			t.Errorf("%s: no %s warning %q: %+v", name, want[0], want[1], a.Warnings)
		}
	}
}

// TestNegativeTimestampsValid is issue 24 case 20: a kernel starting at
// −1632 ns, first in its table, made analyze exit 2 with "GPU operation
// rows are not in start order" (false, and naming no file).
func TestNegativeTimestampsValid(t *testing.T) {
	t.Parallel()
	p := derive(t, "negative_start", `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -1632 WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);`)
	a := analyzed24(t, p)
	base := analyzed24(t, fixture.Get(t, "eager_graph_small").SQLite(t))
	if len(a.Warnings) != 0 {
		t.Errorf("warnings: %+v (want none: the stream engine reads it, no fallback)", a.Warnings)
	}
	if got, want := a.n("collector_step"), base.n("collector_step"); got != want || got == 0 {
		t.Errorf("collector_step instances: %d, want the base's %d", got, want)
	}
}

// TestSkipStepsOneMerge is issue 24 case 10: with a rules file holding
// skip_steps = 3, the flag's default 1 silently won, and --skip-steps 0
// printed 0 while 3 steps per block were skipped. Flags and rules are
// merged once: a flag given wins, else the rule, else the default; the
// value used is the value printed.
func TestSkipStepsOneMerge(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	rules := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(rules, []byte("skip_steps = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// eager_graph_small: 4 blocks; skipped steps = 4 × the value used.
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 1},
		{[]string{"--config", rules}, 3},
		{[]string{"--config", rules, "--skip-steps", "0"}, 0},
		{[]string{"--config", rules, "--skip-steps", "1"}, 1},
		{[]string{"--config", rules, "--skip-steps", "2"}, 2},
	} {
		args := append(append([]string{"analyze", "--no-stats", "--format", "json"}, c.args...), fx)
		code, stdout, stderr := runMain(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		var doc struct {
			Settings struct {
				SkipSteps int `json:"skip_steps"`
			} `json:"settings"`
			Excluded struct {
				SkippedSteps int `json:"skipped_steps"`
			} `json:"excluded"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Settings.SkipSteps != c.want || doc.Excluded.SkippedSteps != 4*c.want {
			t.Errorf("%v: settings.skip_steps %d, %d steps skipped; want %d and %d", c.args, doc.Settings.SkipSteps, doc.Excluded.SkippedSteps, c.want, 4*c.want)
		}
		args[3] = "table"
		_, text, _ := runMain(t, args...)
		if c.want > 0 && !strings.Contains(text, fmt.Sprintf("%d skipped (--skip-steps %d)", 4*c.want, c.want)) {
			t.Errorf("%v: the report does not say %d skipped (--skip-steps %d):\n%s", c.args, 4*c.want, c.want, text)
		}
	}
}

// TestIdenticalInputsRefused is issue 24 case 8: one export passed under
// several names (byte-identical copies) counted as several profiles: a CI
// of zero width and check's exit 1. Identical inputs are refused, naming
// both.
func TestIdenticalInputsRefused(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	a := copyFixture(t, fx, dir, "run1.sqlite")
	b := copyFixture(t, fx, dir, "run2.sqlite")
	if err := os.Symlink("run1.sqlite", filepath.Join(dir, "link.sqlite")); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	wantRefused(t, dir, before, []string{"analyze", "--no-stats", a, b}, a, b, "same export")
	wantRefused(t, dir, before, []string{"analyze", "--no-stats", filepath.Join(dir, "*.sqlite")}, "same export")
	wantRefused(t, dir, before, []string{"analyze", "--no-stats", "--arm", "x=" + a, "--arm", "y=" + b}, "same export")
	wantRefused(t, dir, before, []string{"inventory", a, filepath.Join(dir, "link.sqlite")}, "same export")
	// Different exports of equal size are not confused: the hash decides.
	other := derive(t, "other", `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + 1 WHERE rowid = 1;`)
	if st1, _ := os.Stat(a); st1 != nil {
		if st2, _ := os.Stat(other); st2 == nil || st2.Size() != st1.Size() {
			t.Fatalf("the derived export changed size")
		}
	}
	if code, _, stderr := runMain(t, "analyze", "--no-stats", a, other); code != 0 {
		t.Fatalf("two exports of equal size: exit %d: %s", code, stderr)
	}
}

// TestParquetDirImportsOnlyNeededTables is issue 24 case 18: a parquetdir
// with an unrelated large JUNK.parquet was imported whole before failing on
// a missing table. The required table is checked first, and only the tables
// nsysphase reads are imported.
func TestParquetDirImportsOnlyNeededTables(t *testing.T) {
	var xzPath string
	for _, fx := range fixture.Extra(t) {
		if fx.Name == "nvtx_streams" {
			xzPath = filepath.Join(filepath.Dir(fx.XZ), "nvtx_streams.parquetdir.tar.xz")
		}
	}
	if xzPath == "" {
		t.Skip("nvtx_streams absent")
	}
	dir := t.TempDir()
	fixture.UntarXZ(t, xzPath, dir)
	pq := filepath.Join(dir, "nvtx_streams.parquetdir")
	// JUNK.parquet is not even Parquet: were it imported, the run would fail.
	if err := os.WriteFile(filepath.Join(pq, "JUNK.parquet"), bytes.Repeat([]byte("junk"), 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runMain(t, "info", pq)
	if code != 0 || strings.Contains(stdout, "JUNK") {
		t.Fatalf("info with JUNK.parquet: exit %d: %s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "CUPTI_ACTIVITY_KIND_KERNEL") {
		t.Errorf("info lacks the kernel table:\n%s", stdout)
	}
	// Without StringIds: refused before any import, naming the table.
	if err := os.Remove(filepath.Join(pq, "StringIds.parquet")); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	code, _, stderr = runMain(t, "info", pq)
	if code != cli.ExitInput || !strings.Contains(stderr, "missing table StringIds") || !strings.Contains(stderr, pq) {
		t.Errorf("without StringIds: exit %d: %s", code, stderr)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in the temporary directory: %v", entries)
	}
}

// TestHugeNamesBounded is issue 24 case 19: one 100 MB range name took
// 130 s and 2.6 GB, and wrote 4.7 GB of CSV. A name is bounded where it is
// read (budget.NameBytes, 1 MiB, with its length and hash so that long
// names stay distinct) and shortened on screen (budget.DisplayNameBytes):
// every output stays small. (Issue 37: the bound was 4 KiB, which cut real
// cuDNN names; machine formats now carry up to 1 MiB of a name.)
func TestHugeNamesBounded(t *testing.T) {
	t.Parallel()
	p := built(t, "huge_strings")
	for _, args := range [][]string{
		{"analyze", "--no-stats", "--format", "csv"},
		{"analyze", "--no-stats", "--format", "json"},
		{"analyze", "--no-stats", "--wide"},
		{"info"},
		{"info", "--format", "json"},
		{"ranges", "--format", "csv"},
		{"ranges"},
		{"inventory", "--format", "json"},
	} {
		code, stdout, stderr := runMain(t, append(args, p)...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
			continue
		}
		// The three huge names (16 MiB, 4 MiB, 1 MiB) cost at most
		// budget.NameBytes each wherever they are printed.
		maxLine, maxOut := 64<<10, 1<<20
		if f := formatOf(args); f == "csv" || f == "json" {
			maxLine, maxOut = budget.NameBytes+1<<10, 8*budget.NameBytes
		}
		if len(stdout) > maxOut {
			t.Errorf("%v: %d bytes of output (a 16 MiB name printed whole?)", args, len(stdout))
		}
		for _, l := range strings.Split(stdout, "\n") {
			if len(l) > maxLine {
				t.Errorf("%v: a %d-byte line", args, len(l))
				break
			}
		}
	}
	_, stdout, _ := runMain(t, "ranges", "--format", "csv", p)
	if !strings.Contains(stdout, "huge_000") || !strings.Contains(stdout, "…[16777221 bytes, sha256 ") {
		t.Errorf("the huge range's bounded name (its start, length and hash) is not in ranges' CSV")
	}
}

// TestSameOSPidTwoHosts is issue 24 case 7: two processes with one OS pid
// on two hosts (different globalPid) each got both processes' kernels,
// matched by the 24-bit pid (97 → 195 kernels per step). The engine joins
// on the full globalPid: a copy of the export's processes on a second host
// leaves every process's GPU totals as they were.
func TestSameOSPidTwoHosts(t *testing.T) {
	t.Parallel()
	const host = "281474976710656" // 1 << 48: the host bits of a globalTid
	var sql strings.Builder
	for _, tc := range [][2]string{
		{"CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid"}, {"CUPTI_ACTIVITY_KIND_KERNEL", "globalPid"},
		{"CUPTI_ACTIVITY_KIND_MEMCPY", "globalPid"}, {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "globalPid"},
		{"CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "globalPid"}, {"NVTX_EVENTS", "globalTid"},
		{"ThreadNames", "globalTid"}, {"PROCESSES", "globalPid"},
	} {
		fmt.Fprintf(&sql, "CREATE TEMP TABLE x AS SELECT * FROM %s;\nUPDATE x SET %s = %s + %s;\n", tc[0], tc[1], tc[1], host)
		if tc[0] == "NVTX_EVENTS" {
			fmt.Fprintf(&sql, "UPDATE x SET endGlobalTid = endGlobalTid + %s WHERE endGlobalTid IS NOT NULL;\n", host)
		}
		fmt.Fprintf(&sql, "INSERT INTO %s SELECT * FROM x;\nDROP TABLE x;\n", tc[0])
	}
	p := derive(t, "two_hosts", sql.String())
	code, stdout, stderr := runMain(t, "analyze", "--no-stats", "--format", "json", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, baseOut, _ := runMain(t, "analyze", "--no-stats", "--format", "json", fixture.Get(t, "eager_graph_small").SQLite(t))
	kernels := func(out string) float64 {
		var d struct {
			Summary []struct {
				Arm, Phase string
				Metrics    map[string]struct {
					Mean float64 `json:"mean"`
				} `json:"metrics"`
			} `json:"summary"`
			Warnings []struct {
				Code string `json:"code"`
			} `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		for _, w := range d.Warnings {
			if w.Code == "duplicate_correlation" || w.Code == "unmatched_ops" {
				t.Errorf("warning %s: the two processes' ids are joined as one process's", w.Code)
			}
		}
		for _, s := range d.Summary {
			if s.Arm == "eager" && s.Phase == "collector_step" {
				return s.Metrics["kernels"].Mean
			}
		}
		t.Fatal("no eager collector_step")
		return 0
	}
	got, want := kernels(stdout), kernels(baseOut)
	if want < 90 || got < want-1 || got > want+1 {
		t.Errorf("kernels per eager collector_step: %.1f, want the single-host export's %.1f (doubled when the pid alone joins)", got, want)
	}
}

// TestThreadNamesBoundedInTotal: one 1 MiB name given to every thread of an
// export (and to its process) is listed once per thread by info; before
// budget.OSNameBytes, `info --format json` wrote 594 MB with 1.8 GB of
// memory. Thread and process names keep 4 KiB, with their length and hash.
func TestThreadNamesBoundedInTotal(t *testing.T) {
	t.Parallel()
	base := fixture.Get(t, "eager_graph_small").SQLite(t)
	name := strings.Repeat("thread-", (1<<20)/7+1)
	p := hostileExport(t, t.TempDir(), base, map[string]string{}, name, name, "k")
	code, stdout, stderr := runMain(t, "info", "--format", "json", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(stdout) > 4*budget.NameBytes {
		t.Errorf("info --format json wrote %d bytes for one 1 MiB thread name", len(stdout))
	}
	if !strings.Contains(stdout, "bytes, sha256 ") {
		t.Error("the shortened thread name lacks its length and hash")
	}
}
