package nsys_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"

	"github.com/nsysphase/nsysphase/internal/badgen"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// readAll opens path and reads everything the reader offers: Describe, the
// quality checks and every iterator to its end. It returns the first error.
func readAll(path string) (*nsys.Info, *nsys.Quality, error) {
	f, err := nsys.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	in, err := f.Describe()
	if err != nil {
		return nil, nil, err
	}
	q, err := f.CheckQuality()
	if err != nil {
		return nil, nil, err
	}
	drain := func(seq func(func(any, error) bool)) error {
		var first error
		seq(func(_ any, err error) bool {
			if err != nil && first == nil {
				first = err
			}
			return true
		})
		return first
	}
	seqs := []func(func(any, error) bool){
		adapt(f.Kernels()), adapt(f.Memcpys()), adapt(f.Memsets()), adapt(f.Syncs()),
		adapt(f.APICalls()), adapt(f.GraphTraces()), adapt(f.NVTXEvents()), adapt(f.OSRuntimeCalls()),
	}
	for _, s := range seqs {
		if err := drain(s); err != nil {
			return nil, nil, err
		}
	}
	strs, err := f.Strings()
	if err != nil {
		return nil, nil, err
	}
	if _, err := f.Threads(strs); err != nil {
		return nil, nil, err
	}
	for _, t := range f.Tables() {
		if strings.HasPrefix(t, "ENUM_") {
			if _, err := f.Enum(t); err != nil {
				return nil, nil, err
			}
		}
	}
	return in, q, nil
}

func adapt[T any](seq func(func(T, error) bool)) func(func(any, error) bool) {
	return func(yield func(any, error) bool) {
		seq(func(v T, err error) bool { return yield(v, err) })
	}
}

// checkInputError fails unless err is an *InputError about path that says
// what is wrong.
func checkInputError(t *testing.T, err error, path string) *nsys.InputError {
	t.Helper()
	var ie *nsys.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("error %v (%T) is not an *nsys.InputError", err, err)
	}
	if ie.Path != path || ie.Problem == "" {
		t.Fatalf("InputError %+v: want Path %s and a Problem", ie, path)
	}
	if strings.Contains(ie.Error(), "\n") {
		t.Errorf("error is not one line: %q", ie.Error())
	}
	return ie
}

// checkAccounted checks that every row of the kernel and API tables is
// either summarised or counted as skipped: no row is silently lost.
func checkAccounted(t *testing.T, in *nsys.Info) {
	t.Helper()
	for table, n := range map[string]int64{nsys.TableKernel: in.Kernels.Count, nsys.TableRuntime: in.API.Count} {
		if got := n + in.SkippedRows[table]; got != in.Tables[table] {
			t.Errorf("%s: %d summarised + %d skipped rows, want the table's %d", table, n, in.SkippedRows[table], in.Tables[table])
		}
	}
}

// TestCorpusReader runs every uncompressed corpus case through the reader:
// a case that commands must refuse fails with an *InputError naming the
// file; a usable one reads completely, with every row accounted for.
func TestCorpusReader(t *testing.T) {
	corpusDir := badgen.CorpusDir(fixture.Root())
	cases, err := badgen.LoadCases(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	base := fixture.Get(t, badgen.BaseFixture).SQLite(t)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Slow() && testing.Short() {
				t.Skip("slow generator; run without -short")
			}
			t.Parallel() // each case reads its own copy
			path, err := badgen.Materialize(c, corpusDir, t.TempDir(), base)
			if err != nil {
				t.Fatal(err)
			}
			in, _, err := readAll(path)
			if c.Expect.Exit != 0 {
				if err == nil {
					t.Fatal("read without error; want an *InputError")
				}
				checkInputError(t, err, path)
				return
			}
			if err != nil {
				t.Fatalf("want a usable export, got %v", err)
			}
			checkAccounted(t, in)
		})
	}
}

// TestQualityCounts checks the exact counts behind each warning.
func TestQualityCounts(t *testing.T) {
	base := fixture.Get(t, badgen.BaseFixture).SQLite(t)
	type counts struct {
		q    nsys.Quality
		dups int64 // ActivitySummary.DuplicateCorrelations
	}
	want := map[string]counts{
		"nvtx_null_end":         {q: nsys.Quality{UnclosedRanges: 5}},
		"end_before_start":      {q: nsys.Quality{EndBeforeStart: map[string]int64{nsys.TableKernel: 3, nsys.TableRuntime: 4, nsys.TableNVTX: 2}}},
		"text_timestamps":       {q: nsys.Quality{NonIntegerTimes: map[string]int64{nsys.TableKernel: 2}}},
		"unbalanced_push_pop":   {q: nsys.Quality{UnclosedRanges: 2, CrossedRanges: 1}},
		"other_thread_end":      {q: nsys.Quality{OtherThreadEnds: 10}},
		"duplicate_correlation": {dups: 5},
		"textid_dangling":       {q: nsys.Quality{DanglingTextIDs: 3}},
		"unnamed_ranges":        {q: nsys.Quality{UnnamedRanges: 4}},
		"textid_only":           {},
		"whole_file_range":      {},
		"zero_steps":            {},
		"schema_3_11":           {},
		"huge_strings":          {},
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			path, err := badgen.Build(name, t.TempDir(), base)
			if err != nil {
				t.Fatal(err)
			}
			f := openExport(t, path)
			q, err := f.CheckQuality()
			if err != nil {
				t.Fatal(err)
			}
			checkQuality(t, *q, w.q)
			// The same counts through SQLite's aggregate queries, and after
			// the tables were read whole or in parts: CheckTimes then takes
			// what those page scans counted instead of reading again.
			viaSQL := openExport(t, path)
			viaSQL.ScanThroughSQLite(true)
			if q, err = viaSQL.CheckQuality(); err != nil {
				t.Fatal(err)
			}
			checkQuality(t, *q, w.q)
			for _, parts := range []int{1, 3} {
				read := openExport(t, path)
				readTimedTables(t, read, parts)
				if q, err = read.CheckQuality(); err != nil {
					t.Fatal(err)
				}
				checkQuality(t, *q, w.q)
			}
			strs, err := f.Strings()
			if err != nil {
				t.Fatal(err)
			}
			act, err := f.SummarizeActivity(strs)
			if err != nil {
				t.Fatal(err)
			}
			if act.DuplicateCorrelations != w.dups {
				t.Errorf("DuplicateCorrelations %d, want %d", act.DuplicateCorrelations, w.dups)
			}
		})
	}
}

// readTimedTables reads the activity and NVTX tables of f to their ends,
// each cut into up to n parts, as the engine's decoders do.
func readTimedTables(t *testing.T, f *nsys.File, n int) {
	t.Helper()
	for _, tbl := range []string{nsys.TableKernel, nsys.TableMemcpy, nsys.TableMemset, nsys.TableRuntime, nsys.TableGraphTrace, nsys.TableNVTX} {
		for _, r := range f.SplitTable(tbl, n, 1) {
			var err error
			switch tbl {
			case nsys.TableKernel:
				err = drain(f.KernelsCoreIn(r))
			case nsys.TableMemcpy:
				err = drain(f.MemcpysIn(r))
			case nsys.TableMemset:
				err = drain(f.MemsetsIn(r))
			case nsys.TableRuntime:
				err = drain(f.APICallsCoreIn(r))
			case nsys.TableGraphTrace:
				err = drain(f.GraphTracesIn(r))
			case nsys.TableNVTX:
				err = drain(f.NVTXEventsCoreIn(r))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

func drain[T any](seq func(func(T, error) bool)) error {
	var first error
	seq(func(_ T, err error) bool {
		if err != nil && first == nil {
			first = err
		}
		return true
	})
	return first
}

func checkQuality(t *testing.T, got, want nsys.Quality) {
	t.Helper()
	if !maps.Equal(got.EndBeforeStart, orEmpty(want.EndBeforeStart)) {
		t.Errorf("EndBeforeStart %v, want %v", got.EndBeforeStart, want.EndBeforeStart)
	}
	if !maps.Equal(got.NonIntegerTimes, orEmpty(want.NonIntegerTimes)) {
		t.Errorf("NonIntegerTimes %v, want %v", got.NonIntegerTimes, want.NonIntegerTimes)
	}
	type scalars struct{ unclosed, other, crossed, unnamed, dangling, dups int64 }
	g := scalars{got.UnclosedRanges, got.OtherThreadEnds, got.CrossedRanges, got.UnnamedRanges, got.DanglingTextIDs, got.DuplicateCorrelations}
	w := scalars{want.UnclosedRanges, want.OtherThreadEnds, want.CrossedRanges, want.UnnamedRanges, want.DanglingTextIDs, want.DuplicateCorrelations}
	if g != w {
		t.Errorf("quality %+v, want %+v", got, want)
	}
}

func orEmpty(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}

// TestQualityRealFixtures: a healthy export gets no quality warning. The
// large fixture is included unless -short.
func TestQualityRealFixtures(t *testing.T) {
	for _, fx := range fixture.All(t) {
		if fx.Name == fixture.LargeName && testing.Short() {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			f := openExport(t, fx.SQLite(t))
			in, err := f.Describe()
			if err != nil {
				t.Fatal(err)
			}
			if len(in.Warnings) > 0 {
				t.Errorf("warnings on a healthy export: %q", in.Warnings)
			}
			checkAccounted(t, in)
		})
	}
}

// TestTruncatedAnywhere cuts a tiny real-derived export at every page
// boundary and inside pages: every cut is refused at Open as truncated
// (SQLite alone would read some of them as zeros without an error).
func TestTruncatedAnywhere(t *testing.T) {
	base := fixture.Get(t, badgen.BaseFixture).SQLite(t)
	dir := t.TempDir()
	tiny, err := badgen.Tiny(dir, base)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(tiny)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := readAll(tiny); err != nil {
		t.Fatalf("the whole tiny export: %v", err)
	}
	p := filepath.Join(dir, "cut.sqlite")
	for n := 16; n < len(data); n += 97 { // from the end of the 16-byte magic
		if err := os.WriteFile(p, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := readAll(p)
		if err == nil {
			t.Fatalf("cut at %d of %d bytes: read without error", n, len(data))
		}
		ie := checkInputError(t, err, p)
		if !strings.Contains(ie.Problem, "truncated") {
			t.Errorf("cut at %d: problem %q does not say truncated", n, ie.Problem)
		}
	}
}

// TestInputsUntouched opens inputs with sidecar files beside them (a stale
// -wal and -shm of a WAL session, a hot -journal) and checks that reading
// changes no byte of any file and adds none, and that the sidecars are
// ignored: the WAL session deleted every NVTX row, yet the export is read as
// it is on disk. A control opens a copy the default way and shows that the
// check would notice.
func TestInputsUntouched(t *testing.T) {
	base := fixture.Get(t, badgen.BaseFixture).SQLite(t)
	baseNVTX := rowCount(t, base, nsys.TableNVTX)
	if baseNVTX == 0 {
		t.Fatal("base export has no NVTX rows")
	}
	for _, name := range []string{"stale_wal", "hot_journal", "wal_mode", "odd_file_name"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path, err := badgen.Build(name, dir, base)
			if err != nil {
				t.Fatal(err)
			}
			before := dirSums(t, dir)
			if _, _, err := readAll(path); err != nil {
				t.Fatal(err)
			}
			if got := rowCount(t, path, nsys.TableNVTX); got != baseNVTX {
				t.Errorf("NVTX_EVENTS has %d rows, want the %d on disk (a sidecar was applied)", got, baseNVTX)
			}
			if after := dirSums(t, dir); !maps.Equal(before, after) {
				t.Errorf("reading changed the directory:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
	t.Run("control", func(t *testing.T) {
		dir := t.TempDir()
		path, err := badgen.Build("stale_wal", dir, base)
		if err != nil {
			t.Fatal(err)
		}
		before := dirSums(t, dir)
		c, err := sqlite.OpenConn(path) // read-write, WAL: what nsys must never do
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if after := dirSums(t, dir); maps.Equal(before, after) {
			t.Error("a read-write open left the directory as it was: the untouched check could not notice a change")
		}
	})
}

func rowCount(t *testing.T, path, table string) int64 {
	t.Helper()
	f := openExport(t, path)
	n, err := f.RowCount(table)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// dirSums maps each file in dir to its bytes' digest.
func dirSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			out[e.Name()] = "dir"
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		out[e.Name()] = hex.EncodeToString(sum[:])
	}
	return out
}

// TestCommittedCorpus checks that the committed small inputs are what
// badgen.WriteCommitted writes, so the corpus can be regenerated.
func TestCommittedCorpus(t *testing.T) {
	dir := badgen.CorpusDir(fixture.Root())
	for name, want := range badgen.Committed {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from badgen.Committed; run go run ./internal/badgen/cmd/badgen -committed testdata/bad", name)
		}
	}
}

// openExport opens the export at path for the test; it closes when the test
// ends.
func openExport(t testing.TB, path string) *nsys.File {
	t.Helper()
	f, err := nsys.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
