package phases

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// writableCopy copies the export at src into a temporary directory and
// opens the copy read-write (the input itself is never written).
func writableCopy(t *testing.T, src string) (string, *sqlite.Conn) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	conn, err := sqlite.OpenConn(dst, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return dst, conn
}

func exec(t *testing.T, conn *sqlite.Conn, q string, args ...any) {
	t.Helper()
	if err := sqlitex.ExecuteTransient(conn, q, &sqlitex.ExecOptions{Args: args}); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// gpuMetricsSchema is the exporter's schema of the two tables (nsys 2025.3).
const gpuMetricsSchema = `
CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
CREATE TABLE GPU_METRICS (rawTimestamp INTEGER NOT NULL, timestamp INTEGER NOT NULL, typeId INTEGER NOT NULL, metricId INTEGER NOT NULL, value INTEGER NOT NULL);`

// TestGPUMetricMeansEqualSQL adds GPU metrics with known values to a copy
// of a bundled export (the process's GPU and an unused one, written one
// GPU after another as the exporter does) and checks every instance's
// time-weighted mean against plain SQL over the samples.
func TestGPUMetricMeansEqualSQL(t *testing.T) {
	fx := fixture.Get(t, "eager_graph_small")
	src := fx.SQLite(t)
	f0, err := nsys.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	res0, err := Segment(f0, Options{})
	f0.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res0.GPUMetrics != nil || res0.Hotspots != nil {
		t.Fatal("an export without sampling tables has GPU metrics or hotspots")
	}
	st0 := res0.InstanceStore()
	lo, hi := st0.Start(0), st0.End(0)
	for i := range st0.Len() {
		lo, hi = min(lo, st0.Start(i)), max(hi, st0.End(i))
	}
	use := res0.Inputs[0].GPUUse
	if len(use) == 0 {
		t.Fatal("no GPU use in the fixture")
	}
	used := use[0].GPU
	unused := (used + 1) % 8
	dst, conn := writableCopy(t, src)
	if err := sqlitex.ExecuteScript(conn, gpuMetricsSchema, nil); err != nil {
		t.Fatal(err)
	}
	const source = int64(281479271677952)
	exec(t, conn, `BEGIN`)
	for _, g := range []int64{used, unused} {
		typ := source | g
		for id, name := range []string{"SMs Active [Throughput %]", "GPC Clock Frequency [MHz]", "Tensor Active [Throughput %]"} {
			exec(t, conn, `INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?, ?, '', ?, ?)`, typ, source, id, name)
		}
		// Metrics 0 and 1 sampled every 37 µs with known values; metric 2
		// (Tensor Active) never: it must stay null, never 0.
		const period = 37_000
		k := int64(0)
		for ts := lo - 5*period; ts <= hi+5*period; ts += period {
			k++
			exec(t, conn, `INSERT INTO GPU_METRICS VALUES (?, ?, ?, 0, ?)`, ts, ts, typ, (k*7+g*50)%101)
			exec(t, conn, `INSERT INTO GPU_METRICS VALUES (?, ?, ?, 1, ?)`, ts, ts, typ, 1_000_000+(k*13)%997)
		}
	}
	exec(t, conn, `COMMIT`)
	f, err := nsys.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Segment(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := res.GPUMetrics
	for _, w := range res.Warnings {
		if strings.Contains(w.Error(), "whole GPU") {
			t.Errorf("one process on the GPU, yet: %v", w)
		}
	}
	if g == nil || len(g.Metrics) != 3 || g.Period != 37_000 {
		t.Fatalf("GPU metrics: %+v", g)
	}
	// The clock's samples (about 1e6) cannot be MHz: it is labelled Hz.
	if units := []string{g.Metrics[0].Unit, g.Metrics[1].Unit, g.Metrics[2].Unit}; !slices.Equal(units, []string{"Throughput %", "Hz", "Throughput %"}) {
		t.Errorf("units %q, want the clock in Hz", units)
	}
	st := res.InstanceStore()
	checked := 0
	// Every instance would take minutes of SQL: a spread of them (steps
	// and phases, the first and the last) is checked.
	stride := max(1, st.Len()/60)
	spanning := 0
	for i := 0; i < st.Len(); i += stride {
		if st.Phase(i) == Unannotated {
			// The step less its phases: no GPU window of its own.
			for m := range g.Metrics {
				if v, ok := g.Mean(i, m); ok {
					t.Fatalf("instance %d (%s) has a %s mean %v, want none", i, st.Phase(i), g.Metrics[m].Name, v)
				}
			}
			spanning++
			continue
		}
		// The GPU window (checked against the vendor's projection in
		// TestInstancesMatchVendorTrace); none without GPU ops.
		lo, hi, ok := st.GPUWindow(i)
		if !ok {
			for m := range g.Metrics {
				if v, ok := g.Mean(i, m); ok {
					t.Fatalf("instance %d (%s) has no GPU ops but a %s mean %v", i, st.Phase(i), g.Metrics[m].Name, v)
				}
			}
			continue
		}
		want := map[string]float64{}
		err := sqlitex.ExecuteTransient(conn, `WITH s AS (SELECT timestamp AS t, LAG(timestamp) OVER (PARTITION BY typeId, metricId ORDER BY timestamp) AS p, typeId, metricId, value FROM GPU_METRICS)
SELECT d.metricName, SUM(s.value * (MIN(s.t, :end) - MAX(s.p, :start))) * 1.0 / SUM(MIN(s.t, :end) - MAX(s.p, :start))
FROM s JOIN TARGET_INFO_GPU_METRICS d ON d.typeId = s.typeId AND d.metricId = s.metricId
WHERE s.p IS NOT NULL AND s.t > :start AND s.p < :end AND (s.typeId & 255) = :gpu
GROUP BY d.metricName`, &sqlitex.ExecOptions{Named: map[string]any{":start": lo, ":end": hi, ":gpu": used}, ResultFunc: func(s *sqlite.Stmt) error {
			name, _ := nsys.SplitMetricName(s.ColumnText(0))
			want[name] = s.ColumnFloat(1)
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		for m, mt := range g.Metrics {
			got, ok := g.Mean(i, m)
			w, wok := want[mt.Name]
			if ok != wok || math.Abs(got-w) > 1e-9*math.Max(1, math.Abs(w)) {
				t.Fatalf("instance %d (%s) metric %q: got %v (%v), SQL %v (%v)", i, st.Phase(i), mt.Name, got, ok, w, wok)
			}
			if mt.Name == "Tensor Active" && ok {
				t.Fatalf("a metric without samples has a mean: %v", got)
			}
		}
		if hi > lo {
			checked++
		}
	}
	if checked < 10 || spanning == 0 {
		t.Fatalf("only %d instances and %d (unannotated) rows checked", checked, spanning)
	}
}

// TestHotspotsEqualSQL checks each phase's CPU samples and its functions'
// self and inclusive counts against plain SQL on every bundled export with
// CPU samples: collector_backtrace (--sample=cpu) and gloo_hw_node
// (process-tree sampling of two torchrun ranks, with GPU metrics).
func TestHotspotsEqualSQL(t *testing.T) {
	want := map[string]int64{"collector_backtrace": 2891, "gloo_hw_node": 7443} // COMPOSITE_EVENTS rows
	n := 0
	for _, fx := range fixture.Extra(t) {
		if rows, ok := want[fx.Name]; ok {
			n++
			t.Run(fx.Name, func(t *testing.T) { checkHotspotsSQL(t, fx, rows) })
		}
	}
	if n == 0 {
		t.Skip("no export with CPU samples bundled")
	}
}

func checkHotspotsSQL(t *testing.T, fx fixture.Fixture, rows int64) {
	src := fx.SQLite(t)
	f, err := nsys.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Segment(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := res.Hotspots
	if h == nil || h.Samples != rows || len(h.Phases) < 2 || h.PeriodNs <= 0 {
		t.Fatalf("hotspots: %+v", h)
	}
	_, conn := writableCopy(t, src)
	exec(t, conn, `CREATE TABLE inst (pid INTEGER, tid INTEGER, start INTEGER, "end" INTEGER, phase TEXT)`)
	st := res.InstanceStore()
	for i := range st.Len() {
		if st.Phase(i) != Unannotated {
			exec(t, conn, `INSERT INTO inst VALUES (?, ?, ?, ?, ?)`, st.Pid(i), st.Tid(i), st.Start(i), st.End(i), st.Phase(i))
		}
	}
	type key struct{ phase, fn, mod string }
	want := map[key][2]int64{}
	samples := map[string]int64{}
	err = sqlitex.ExecuteTransient(conn, `SELECT i.phase, COUNT(DISTINCT c.id) FROM COMPOSITE_EVENTS c JOIN inst i
ON ((c.globalTid >> 24) & 16777215) = i.pid AND (c.globalTid & 16777215) = i.tid AND c.start >= i.start AND c.start < i."end" GROUP BY 1`, &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
		samples[s.ColumnText(0)] = s.ColumnInt64(1)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	err = sqlitex.ExecuteTransient(conn, `WITH sp AS (SELECT DISTINCT i.phase, c.id FROM COMPOSITE_EVENTS c JOIN inst i
ON ((c.globalTid >> 24) & 16777215) = i.pid AND (c.globalTid & 16777215) = i.tid AND c.start >= i.start AND c.start < i."end")
SELECT sp.phase, s.value, m.value, SUM(f.stackDepth = 0), COUNT(DISTINCT f.id) FROM sp JOIN SAMPLING_CALLCHAINS f ON f.id = sp.id
JOIN StringIds s ON s.id = f.symbol JOIN StringIds m ON m.id = f.module GROUP BY sp.phase, f.symbol, f.module`, &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
		k := key{s.ColumnText(0), s.ColumnText(1), s.ColumnText(2)}
		v := want[k]
		want[k] = [2]int64{v[0] + s.ColumnInt64(3), v[1] + s.ColumnInt64(4)}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[key][2]int64{}
	for _, p := range h.Phases {
		if p.Samples != samples[p.Phase] {
			t.Errorf("phase %q: %d samples, SQL %d", p.Phase, p.Samples, samples[p.Phase])
		}
		for _, fn := range p.Functions {
			k := key{p.Phase, fn.Function, fn.Module}
			v := got[k]
			got[k] = [2]int64{v[0] + fn.Self, v[1] + fn.Inclusive}
		}
	}
	if len(samples) != len(h.Phases) {
		t.Errorf("%d phases with samples, SQL %d", len(h.Phases), len(samples))
	}
	if len(got) != len(want) {
		t.Fatalf("%d (phase, function) pairs, SQL %d", len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Fatalf("%+v: self, inclusive %v, SQL %v", k, got[k], w)
		}
	}
	// The first function of each phase has the most self samples.
	for _, p := range h.Phases {
		for _, fn := range p.Functions[1:] {
			if fn.Self > p.Functions[0].Self {
				t.Fatalf("phase %q: %q has more self samples than the first", p.Phase, fn.Function)
			}
		}
	}
}

// TestSamplingOnlyExport: the public GH200 export holds GPU metrics and a
// few CPU samples but no CUDA trace and no NVTX range; it is one
// whole-process phase with its GPU metrics, not refused.
func TestSamplingOnlyExport(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 38 MB export")
	}
	var fx fixture.Fixture
	for _, e := range fixture.Public(t) {
		if e.Name == "radiradev__anemoi-core__test" {
			fx = e
		}
	}
	if fx.Name == "" {
		t.Skip("anemoi export absent (../shared)")
	}
	f := openFixture(t, fx)
	res, err := Segment(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := res.InstanceStore()
	if res.StepName != WholeProcess || st.Len() != 1 || st.Pid(0) != 1253000 {
		t.Fatalf("step %q, %d instances", res.StepName, st.Len())
	}
	g := res.GPUMetrics
	if g == nil || len(g.Metrics) != 32 || g.Samples != 1274144 || len(g.GPUs) != 4 || g.Timeline == nil {
		t.Fatalf("GPU metrics: %+v", g)
	}
	for m, mt := range g.Metrics {
		v, ok := g.Mean(0, m)
		if !ok || v < 0 {
			t.Fatalf("%s: %v %v", mt.Name, v, ok)
		}
		if mt.Name == "CTC TX Throughput" && v != 1 {
			t.Fatalf("CTC TX Throughput is 1 in every sample, mean %v", v)
		}
		// The clocks are labelled [MHz] and stored in Hz: SQL's smallest
		// and largest samples (SELECT min(value), max(value) … GROUP BY
		// metricName) bound their means, and the label says Hz.
		clock := map[string][2]float64{"GPC Clock Frequency": {344878389, 855292444}, "SYS Clock Frequency": {824656110, 930357714}}
		if b, ok := clock[mt.Name]; ok && (mt.Unit != "Hz" || v < b[0] || v > b[1]) {
			t.Errorf("%s: %v %s, want Hz within SQL's samples %v", mt.Name, v, mt.Unit, b)
		}
	}
	if h := res.Hotspots; h == nil || h.Samples != 17 || len(h.Phases) != 1 || h.Phases[0].Samples != 17 {
		t.Fatalf("hotspots: %+v", res.Hotspots)
	}
}

// TestHertzUnits: a clock labelled MHz keeps its label while its samples
// can be MHz and is labelled Hz once one cannot; other units never change.
func TestHertzUnits(t *testing.T) {
	ms := []GPUMetric{{"GPC Clock Frequency", "MHz"}, {"SYS Clock Frequency", "MHz"}, {"SMs Active", "Throughput %"}, {"Idle", ""}}
	hertzUnits(ms, []int64{1_980_000_000, 1_755, 1_000_000, 0})
	got := []string{ms[0].Unit, ms[1].Unit, ms[2].Unit, ms[3].Unit}
	if want := []string{"Hz", "MHz", "Throughput %", ""}; !slices.Equal(got, want) {
		t.Errorf("units %q, want %q", got, want)
	}
}

// TestSharedGPUMetricsWarn: on gloo_hw_node two ranks share GPU 0, whose
// metrics are the whole GPU's: a gpu_metrics warning says so.
func TestSharedGPUMetricsWarn(t *testing.T) {
	fx := fixture.ExtraNamed(t, "gloo_hw_node")
	f, err := nsys.Open(fx.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Segment(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w.Error(), "GPU 0 ran work of 2 processes: GPU metrics are the whole GPU's") {
			return
		}
	}
	t.Errorf("no shared-GPU warning among %v", res.Warnings)
}

// TestOtherThreadGPUWindowEqualsSQL: an other thread's row (the autograd
// thread's backward) takes the GPU window of that thread's work during the
// step: from the first start to the last end of the GPU ops of its calls
// that start inside the row, as SQL finds them on gloo_hw_node.
func TestOtherThreadGPUWindowEqualsSQL(t *testing.T) {
	fx := fixture.ExtraNamed(t, "gloo_hw_node")
	src := fx.SQLite(t)
	f, err := nsys.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Segment(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqlite.OpenConn(src, sqlite.OpenReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, g := res.InstanceStore(), res.GPUMetrics
	checked, windows := 0, 0
	for i := range st.Len() {
		if !st.OtherThread(i) {
			continue
		}
		var lo, hi int64
		var n int
		err := sqlitex.ExecuteTransient(conn, `WITH o AS (SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL
UNION ALL SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET)
SELECT COUNT(*), MIN(o.start), MAX(o.end) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN o ON o.correlationId = r.correlationId
AND ((o.globalPid >> 24) & 16777215) = :pid WHERE ((r.globalTid >> 24) & 16777215) = :pid AND (r.globalTid & 16777215) = :tid AND r.start >= :s AND r.start < :e`,
			&sqlitex.ExecOptions{Named: map[string]any{":pid": st.Pid(i), ":tid": st.Tid(i), ":s": st.Start(i), ":e": st.End(i)}, ResultFunc: func(s *sqlite.Stmt) error {
				n, lo, hi = s.ColumnInt(0), s.ColumnInt64(1), s.ColumnInt64(2)
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		glo, ghi, ok := st.GPUWindow(i)
		if ok != (n > 0) || ok && (glo != lo || ghi != hi) {
			t.Fatalf("%s in step %d: GPU window [%d, %d] (%v), SQL [%d, %d] over %d ops", st.Phase(i), st.Step(i), glo, ghi, ok, lo, hi, n)
		}
		if _, has := g.Mean(i, 0); ok && !has {
			t.Errorf("%s in step %d: a GPU window but no %s mean", st.Phase(i), st.Step(i), g.Metrics[0].Name)
		}
		checked++
		if ok {
			windows++
		}
	}
	if checked < 10 || windows == 0 {
		t.Fatalf("only %d other-thread rows, %d with a GPU window", checked, windows)
	}
}
