package phases

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// fallbackNote is the warning of a stream that gave way to the memory
// source, saying why; "" when it did not.
func fallbackNote(res *Result) string {
	for _, w := range res.Warnings {
		if w := w.Message; strings.HasSuffix(w, ": the activity tables were read whole, which takes about as much memory as the export") {
			return w
		}
	}
	return ""
}

// sameResult compares two results; API indexes of call records are
// compared by name (class numbering follows reading order).
//
// reflect.DeepEqual decides first: where it finds the results equal, so
// does cmp (the results hold no Equal methods, and cmp refuses their
// unexported fields but CallRecord's); cmp.Diff, which took most of
// TestSweepEqualsWholeTrace's CPU on equal results, runs only to describe
// a difference.
func sameResult(t *testing.T, got, want *Result) {
	t.Helper()
	type namedCall struct {
		CallRecord
		API string
	}
	named := func(r *Result) []namedCall {
		out := make([]namedCall, len(r.Calls))
		for i, c := range r.Calls {
			out[i] = namedCall{c, r.CallAPIs[c.API]}
			out[i].CallRecord.API = 0
		}
		return out
	}
	if w, g := named(want), named(got); !reflect.DeepEqual(w, g) {
		if d := cmp.Diff(w, g, cmp.AllowUnexported(CallRecord{})); d != "" {
			t.Errorf("calls differ (-memory +stream):\n%s", d)
		}
	}
	rest := func(r *Result) Result {
		c := *r
		c.Calls, c.CallAPIs, c.Store = nil, nil, nil
		return c
	}
	if !reflect.DeepEqual(rest(want), rest(got)) {
		if d := cmp.Diff(want, got, cmpopts.IgnoreFields(Result{}, "Calls", "CallAPIs", "Store")); d != "" {
			t.Errorf("results differ (-memory +stream):\n%s", d)
		}
	}
}

// TestSweepEqualsWholeTrace: on every fixture the engine on the stream
// source gives exactly the result it gives on the memory source (the whole
// trace, one window), without falling back — with the default windows and
// with windows of a few milliseconds read in parts of 512 rows, which puts
// most instances near a window edge. Both window settings are compared with
// one memory-source result per fixture and options. The large fixture runs
// once, with the default windows (several of them on its trace) and calls
// (plain is the same engine without the call recorder); tiny windows, 2,000
// parts of 512 rows on it, are covered by every other fixture.
func TestSweepEqualsWholeTrace(t *testing.T) {
	params := []struct {
		name string
		cfg  engineConfig
	}{
		{"default", engineConfig{}},
		{"tiny", engineConfig{span: 2_000_000, margin: 50_000_000, partRows: 512}},
	}
	opts := []struct {
		name string
		opt  Options
	}{
		{"plain", Options{}},
		{"calls-depth2", Options{Calls: true, Depth: 2}},
	}
	for _, fx := range fixture.WithExtra(t) {
		f := openFixture(t, fx)
		for _, o := range opts {
			if fx.Name == fixture.LargeName && o.name == "plain" {
				continue
			}
			var whole *Result // the memory source's, computed by the first subtest that runs
			var errWhole error
			done := false
			for _, p := range params {
				if fx.Name == fixture.LargeName && (p.name == "tiny" || !fixture.Long()) {
					continue // the large export's stream/whole cross-check: make test-long
				}
				t.Run(fx.Name+"/"+p.name+"/"+o.name, func(t *testing.T) {
					if !done {
						mem := o.opt
						mem.engine = engineConfig{inMemory: true}
						whole, errWhole = Segment(f, mem)
						done = true
					}
					opt := o.opt
					opt.engine = p.cfg
					swept, err := Segment(f, opt)
					if fmt.Sprint(err) != fmt.Sprint(errWhole) {
						t.Fatalf("stream error %v, memory error %v", err, errWhole)
					}
					if err != nil {
						t.Skipf("no steps to compare: %v", err)
					}
					if note := fallbackNote(swept); note != "" {
						t.Errorf("the stream fell back: %s", note)
					}
					sameResult(t, swept, whole)
				})
			}
		}
	}
}

// alteredCopy copies fixture fx to a temporary export and runs sql on it.
func alteredCopy(t *testing.T, fx fixture.Fixture, sql string) *nsys.File {
	t.Helper()
	dst := filepath.Join(t.TempDir(), fx.Name+".sqlite")
	src, err := sqlite.OpenConn("file:"+fx.SQLite(t)+"?mode=ro&immutable=1", sqlite.OpenReadOnly|sqlite.OpenURI)
	if err != nil {
		t.Fatal(err)
	}
	err = sqlitex.ExecuteTransient(src, "VACUUM INTO '"+dst+"'", nil)
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	w, err := sqlite.OpenConn(dst, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlitex.ExecuteScript(w, sql, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f, err := nsys.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestSweepFallsBack: on exports that break the stream's assumptions (API
// rows out of start order; a kernel starting long after its launch), the
// engine must notice, give way to the memory source, and give the same
// result as the memory source from the start.
func TestSweepFallsBack(t *testing.T) {
	fx := fixture.Get(t, "interleaved_graph")
	tiny := engineConfig{span: 1_000_000, margin: 20_000_000, partRows: 512} // 1 ms windows, 20 ms margin
	cases := []struct{ name, sql, why string }{
		{"api-out-of-order", `UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET rowid = -1 WHERE rowid = 20000;
UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET rowid = 20000 WHERE rowid = 20100;
UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET rowid = 20100 WHERE rowid = -1;`, "CUDA API rows are not in start order"},
		// The kernel of a call 180 ms before the trace's end, moved to the
		// end of the table and of the trace.
		{"late-kernel", `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = (SELECT max(rowid) + 1 FROM CUPTI_ACTIVITY_KIND_KERNEL),
  start = (SELECT max(start) FROM CUPTI_ACTIVITY_KIND_KERNEL) + 1000,
  end = end - start + (SELECT max(start) FROM CUPTI_ACTIVITY_KIND_KERNEL) + 1000
WHERE rowid = 15000;`, "a GPU operation starts more than the sweep margin after its launch"},
		// The launch call of a kernel moved to the end of the table and of
		// the trace: its kernel was let go, matching no call (an orphan)
		// when the call arrives.
		{"late-call", `UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET rowid = (SELECT max(rowid) + 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME),
  end = (SELECT max(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + 2000 + end - start,
  start = (SELECT max(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + 2000
WHERE correlationId = (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = 15000);`, "a GPU operation starts before its launch call"},
		// A second call with the id of a kernel's launch, at the end: the
		// kernel was attributed and let go when the repeated id arrives.
		{"repeated-late-call", `CREATE TEMP TABLE late AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME
  WHERE correlationId = (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = 15000);
UPDATE late SET end = (SELECT max(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + 2000 + end - start,
  start = (SELECT max(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + 2000;
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM late;`, "a GPU operation starts before its launch call"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := alteredCopy(t, fx, c.sql)
			swept, err := Segment(f, Options{Calls: true, engine: tiny})
			if err != nil {
				t.Fatal(err)
			}
			// The fallback is reported among the warnings, first of the
			// trace's own, with why; otherwise the result is the memory
			// source's.
			note := f.Path + ": " + c.why + ": the activity tables were read whole, which takes about as much memory as the export"
			if got := fallbackNote(swept); got != note {
				t.Fatalf("fallback warning %q, want %q (warnings %q)", got, note, swept.Warnings)
			}
			i := slices.IndexFunc(swept.Warnings, func(w nsys.Warning) bool { return w.Message == note && w.Code == nsys.WarnWholeRead })
			if swept.Warnings = slices.Delete(swept.Warnings, i, i+1); len(swept.Warnings) == 0 {
				swept.Warnings = nil // as the memory source leaves it
			}
			whole, err := Segment(f, Options{Calls: true, engine: engineConfig{inMemory: true}})
			if err != nil {
				t.Fatal(err)
			}
			sameResult(t, swept, whole)
		})
	}
}

// TestGPUUseFromSQL: each process's busy time and the time two processes'
// GPU work overlapped, as the sweep accounts them slab by slab, equal the
// union and intersection of the ops' intervals computed here from plain
// SQL rows (sorted and merged in one pass), on the MPS exports, where the
// overlap is milliseconds, and on one without MPS, where it is zero.
func TestGPUUseFromSQL(t *testing.T) {
	for _, name := range []string{"sharing_mps_1", "sharing_mps_2", "sharing_null_1"} {
		t.Run(name, func(t *testing.T) {
			fx := fixture.Get(t, name)
			conn, err := sqlite.OpenConn("file:"+fx.SQLite(t)+"?mode=ro&immutable=1", sqlite.OpenReadOnly|sqlite.OpenURI)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Ops without a correlation id belong to no call and are not counted.
			byPid := map[int64][]interval{}
			err = sqlitex.ExecuteTransient(conn, `SELECT globalPid, start, end FROM (
  SELECT globalPid, start, end, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL
  UNION ALL SELECT globalPid, start, end, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY
  UNION ALL SELECT globalPid, start, end, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET)
WHERE end > start AND correlationId >= 0 ORDER BY start`, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
				pid := nsys.Pid(st.ColumnInt64(0))
				byPid[pid] = append(byPid[pid], interval{st.ColumnInt64(1), st.ColumnInt64(2)})
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if len(byPid) != 2 {
				t.Fatalf("%d processes with GPU work, want 2", len(byPid))
			}
			var lists [][]interval
			want := map[int64]int64{}
			for pid, iv := range byPid {
				merged := iv[:1]
				for _, x := range iv[1:] {
					if last := &merged[len(merged)-1]; x.start <= last.end {
						last.end = max(last.end, x.end)
					} else {
						merged = append(merged, x)
					}
				}
				for _, x := range merged {
					want[pid] += x.end - x.start
				}
				lists = append(lists, merged)
			}
			var wantOverlap int64
			for i, j := 0, 0; i < len(lists[0]) && j < len(lists[1]); {
				a, b := lists[0][i], lists[1][j]
				wantOverlap += max(0, min(a.end, b.end)-max(a.start, b.start))
				if a.end < b.end {
					i++
				} else {
					j++
				}
			}
			res, err := Segment(openFixture(t, fx), Options{})
			if err != nil {
				t.Fatal(err)
			}
			in := res.Inputs[0]
			got := map[int64]int64{}
			for _, u := range in.GPUUse {
				for k, pid := range u.Pids {
					got[pid] += u.BusyNs[k]
				}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("busy ns per process (-SQL +sweep):\n%s", d)
			}
			if in.CrossProcessOverlapNs != wantOverlap {
				t.Errorf("cross-process overlap %d ns, SQL %d ns", in.CrossProcessOverlapNs, wantOverlap)
			}
			t.Logf("busy %v ns, overlap %d ns", want, wantOverlap)
		})
	}
}
