package dataset

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/phases"
)

// TestInstancesTableCells: every cell of phase_instances, filled column by
// column, is the field of its instance, nulls included; a range of rows is
// the same rows of the whole table.
func TestInstancesTableCells(t *testing.T) {
	d := analyseFixture(t, "sharing_mps_1", pointOptions(2))
	tab := InstancesTable(d)
	if tab.Len() != d.Store().Len() || tab.Len() == 0 {
		t.Fatalf("%d rows for %d instances", tab.Len(), d.Store().Len())
	}
	col := func(name string) int {
		i := tab.ColumnIndex(name)
		if i < 0 {
			t.Fatalf("no column %s", name)
		}
		return i
	}
	str := func(r int, name string) string { v, _ := tab.String(r, col(name)); return v }
	num := func(r int, name string) int64 { v, _ := tab.Int64(r, col(name)); return v }
	flag := func(r int, name string) bool { v, _ := tab.Bool(r, col(name)); return v }
	nulls := 0
	for r, x := range d.Store().All() {
		if str(r, "file") != x.File || str(r, "thread") != x.Thread || str(r, "arm") != x.Arm || str(r, "block_label") != x.Unit.String() || str(r, "phase") != x.Phase ||
			num(r, "pid") != x.Pid || num(r, "tid") != x.Tid || num(r, "block") != int64(x.Block) || num(r, "step") != int64(x.Step) ||
			flag(r, "is_step") != x.IsStep || num(r, "depth") != int64(x.Depth) || flag(r, "warmup") != x.Warmup ||
			num(r, "start_ns") != x.Start || num(r, "end_ns") != x.End {
			t.Fatalf("row %d: keys differ from %+v", r, x)
		}
		for m := range phases.NumMetrics() {
			if got := num(r, m.Name()); got != x.M[m] {
				t.Fatalf("row %d %s: %d, want %d", r, m.Name(), got, x.M[m])
			}
		}
		q, qok := tab.Float64(r, col("queue_mean_ns"))
		if qok != x.HasQueue || (qok && q != x.QueueMeanNs) {
			t.Fatalf("row %d queue_mean_ns %v %v, want %v %v", r, q, qok, x.QueueMeanNs, x.HasQueue)
		}
		g, gok := tab.Int64(r, col("phase_gap_ns"))
		u, uok := tab.Int64(r, col("unattributed_kernel_ns"))
		if gok != x.HasStepOnly || uok != x.HasStepOnly || (gok && (g != x.PhaseGapNs || u != x.UnattrKerNs)) {
			t.Fatalf("row %d step-only cells %v/%v %v/%v, want %v/%v %v", r, g, gok, u, uok, x.PhaseGapNs, x.UnattrKerNs, x.HasStepOnly)
		}
		if !gok {
			nulls++
		}
	}
	if nulls == 0 {
		t.Error("no phase rows: the null path is untested")
	}
	part := InstancesRows(d, 10, 20)
	for r := range 10 {
		for c := range tab.NumColumns() {
			if part.Value(r, c) != tab.Value(10+r, c) {
				t.Fatalf("rows [10,20) row %d column %d: %v, want %v", r, c, part.Value(r, c), tab.Value(10+r, c))
			}
		}
	}
}

// TestInstancesFillConcurrentSameAsSerial: a table big enough to be filled
// by several goroutines has the cells, and the Parquet bytes (so the string
// dictionaries too), of the same table filled by one. Run it with -race.
func TestInstancesFillConcurrentSameAsSerial(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 4 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	}
	base := analyseFixture(t, "sharing_mps_1", pointOptions(2))
	xs := phases.NewStore()
	for rep := 0; xs.Len() < 3*fillRowsPerWorker; rep++ {
		for _, x := range base.Store().All() {
			x.Block += rep // new units, so block_label changes along the rows
			x.M[phases.Wall] += int64(rep)
			xs.Append(&x)
		}
	}
	got := instancesRows(xs, 0, xs.Len())
	want := instancesRows(xs, 0, 0)
	fillInstanceColumnsOn(want.AppendRows(xs.Len()), xs, 0, xs.Len(), 1)
	if got.Len() != want.Len() {
		t.Fatalf("%d rows, want %d", got.Len(), want.Len())
	}
	for r := range want.Len() {
		for c := range want.NumColumns() {
			if g, w := got.Value(r, c), want.Value(r, c); g != w {
				t.Fatalf("row %d column %s: %v, want %v", r, want.Column(c).Name, g, w)
			}
		}
	}
	var gotPq, wantPq bytes.Buffer
	if err := export.Write(&gotPq, got, export.FormatParquet, export.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := export.Write(&wantPq, want, export.FormatParquet, export.Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotPq.Bytes(), wantPq.Bytes()) {
		t.Error("the Parquet files of the two tables differ")
	}
}
