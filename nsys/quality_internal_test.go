package nsys

import (
	"reflect"
	"testing"

	"github.com/nsysphase/nsysphase/internal/badgen"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestAuditedTimesTiling: the audited counts stand for a table only when its
// parts tile the rowids exactly once; otherwise CheckTimes reads again.
func TestAuditedTimesTiling(t *testing.T) {
	const lo, hi = -1 << 63, 1<<63 - 1
	part := func(a, b int64) Part { return Part{lo: a, hi: b, bounded: true} }
	cases := []struct {
		name  string
		parts map[Part][2]int64
		want  [2]int64
		ok    bool
	}{
		{"none", nil, [2]int64{}, false},
		{"whole", map[Part][2]int64{AllRows: {2, 1}}, [2]int64{2, 1}, true},
		{"whole beside parts", map[Part][2]int64{AllRows: {2, 1}, part(lo, 10): {9, 9}}, [2]int64{2, 1}, true},
		{"tiled", map[Part][2]int64{part(lo, 10): {1, 0}, part(11, 99): {2, 3}, part(100, hi): {0, 1}}, [2]int64{3, 4}, true},
		{"gap", map[Part][2]int64{part(lo, 10): {1, 0}, part(12, hi): {2, 3}}, [2]int64{}, false},
		{"overlap", map[Part][2]int64{part(lo, 10): {1, 0}, part(5, hi): {2, 3}}, [2]int64{}, false},
		{"open end", map[Part][2]int64{part(lo, 10): {1, 0}, part(11, 50): {2, 3}}, [2]int64{}, false},
		{"open start", map[Part][2]int64{part(0, hi): {1, 0}}, [2]int64{}, false},
		{"beyond the end", map[Part][2]int64{part(lo, hi): {1, 0}, part(5, 6): {2, 3}}, [2]int64{}, false},
	}
	for _, c := range cases {
		f := &File{audits: map[string]map[Part][2]int64{TableKernel: c.parts}}
		got, ok := f.auditedTimes(TableKernel)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: auditedTimes = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// TestScansAuditTimes: reading a table in parts leaves counts that
// CheckTimes takes, equal to its own pass; a scan stopped early leaves none.
func TestScansAuditTimes(t *testing.T) {
	base := fixture.Get(t, badgen.BaseFixture).SQLite(t)
	path, err := badgen.Build("end_before_start", t.TempDir(), base)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range f.KernelsCoreIn(AllRows) {
		break // stopped early: no audit
	}
	if _, ok := f.auditedTimes(TableKernel); ok {
		t.Fatal("a scan stopped after one row left an audit")
	}
	parts := f.SplitTable(TableRuntime, 3, 1)
	if len(parts) < 2 {
		t.Fatalf("%s came back in %d part; the test needs several", TableRuntime, len(parts))
	}
	for _, r := range parts {
		for _, err := range f.APICallsCoreIn(r) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	got, ok := f.auditedTimes(TableRuntime)
	if !ok {
		t.Fatalf("%d parts of %s read whole left no usable audit", len(parts), TableRuntime)
	}
	if got != [2]int64{4, 0} {
		t.Errorf("audited %s: %v, want 4 rows ending before they start", TableRuntime, got)
	}
	fresh, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	q := &Quality{}
	if err := fresh.CheckTimes(q); err != nil {
		t.Fatal(err)
	}
	if q.EndBeforeStart[TableRuntime] != got[0] {
		t.Errorf("CheckTimes' own pass: %d, audit %d", q.EndBeforeStart[TableRuntime], got[0])
	}
}

// TestCheckTimesAhead: the sync table counted ahead (as the analysis does
// beside the engine) gives the findings CheckQuality gives, and CheckTimes
// takes them from the recorded count instead of reading the table again.
func TestCheckTimesAhead(t *testing.T) {
	base := fixture.Get(t, badgen.BaseFixture).SQLite(t)
	path, err := badgen.Derive(t.TempDir(), base, "sync_times", `
UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET "end" = start - 5 WHERE rowid % 7 = 0;
UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET start = 'x' WHERE rowid = 3;`)
	if err != nil {
		t.Fatal(err)
	}
	open := func() *File {
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	want, err := open().CheckQuality()
	if err != nil {
		t.Fatal(err)
	}
	if want.EndBeforeStart[TableSync] == 0 || want.NonIntegerTimes[TableSync] != 1 {
		t.Fatalf("the derived export's sync findings: %d end before start, %d text times; want some and 1",
			want.EndBeforeStart[TableSync], want.NonIntegerTimes[TableSync])
	}
	f := open()
	got, err := f.CheckRanges()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckTimesAhead(TableSync, TableOSRT, TableStrings); err != nil {
		t.Fatal(err)
	}
	c, ok := f.auditedTimes(TableSync)
	if !ok || c != [2]int64{want.EndBeforeStart[TableSync], 1} {
		t.Fatalf("recorded count of %s: %v, %v; want %d and 1", TableSync, c, ok, want.EndBeforeStart[TableSync])
	}
	if _, ok := f.auditedTimes(TableStrings); ok {
		t.Errorf("%s has no times but was counted", TableStrings)
	}
	// CheckTimes takes the record: a doctored one shows it was not read again.
	f.addTimeAudit(TableSync, AllRows, c[0]+100, c[1])
	if err := f.CheckTimes(got); err != nil {
		t.Fatal(err)
	}
	if got.EndBeforeStart[TableSync] != c[0]+100 {
		t.Errorf("CheckTimes counted %d in %s, not the recorded %d: it read the table again", got.EndBeforeStart[TableSync], TableSync, c[0]+100)
	}
	got.EndBeforeStart[TableSync] = c[0]
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings with the sync table ahead:\n%+v\nwant\n%+v", got, want)
	}
}
