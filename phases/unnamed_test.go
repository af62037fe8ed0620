package phases

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// TestNamelessCallsClassifiedByGPUSide: with the nameIds of the calls that
// the GPU side classifies made dangling (stream synchronize: its
// SYNCHRONIZATION record; async copies and memsets: their MEMCPY and
// MEMSET rows, pageable copies blocking; kernel and graph launches: their
// kernels and graph records), every instance's metrics and every recorded
// call's category, wait kind and flags are what they are with the names:
// on the memory source and on tiny stream windows, where a nameless call
// is often the anchor whose ops were let go.
func TestNamelessCallsClassifiedByGPUSide(t *testing.T) {
	const edit = `UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 2000000000 + nameId
WHERE nameId IN (SELECT id FROM StringIds WHERE value IN ('cudaStreamSynchronize_v3020',
  'cudaMemcpyAsync_v3020', 'cudaMemsetAsync_v3020', 'cudaLaunchKernel_v7000', 'cudaGraphLaunch_v10000'))`
	tiny := engineConfig{span: 2_000_000, margin: 50_000_000, partRows: 512}
	// Node-traced graphs, whole-graph records, memsets and two processes.
	for _, name := range []string{"eager_graph_small", "graph_whole", "sharing_mps_1"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fx := fixture.Get(t, name)
			opt := Options{Depth: 2, Calls: true}
			want, err := Segment(openFixture(t, fx), opt)
			if err != nil {
				t.Fatal(err)
			}
			f := alteredCopy(t, fx, edit)
			for _, cfg := range []engineConfig{{inMemory: true}, tiny} {
				opt.engine = cfg
				got, err := Segment(f, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(warningText(got, nsys.WarnDanglingAPIName), "CUDA API calls name a nameId that StringIds lacks") {
					t.Errorf("no dangling_api_name warning: %v", got.Warnings)
				}
				sameMetrics(t, got, want)
			}
		})
	}
}

// warningText joins the messages of r's warnings with code.
func warningText(r *Result, code string) string {
	var out []string
	for _, w := range r.Warnings {
		if w.Code == code {
			out = append(out, w.Message)
		}
	}
	return strings.Join(out, "|")
}

// sameMetrics compares the instances' metrics and the recorded calls of
// two results but the calls' API names.
func sameMetrics(t *testing.T, got, want *Result) {
	t.Helper()
	gs, ws := got.InstanceStore(), want.InstanceStore()
	if gs.Len() != ws.Len() || gs.Len() == 0 {
		t.Fatalf("%d instances, %d with the names", gs.Len(), ws.Len())
	}
	var g, w [MaxMetrics]int64
	bad := 0
	for i := range gs.Len() {
		gn, wn := gs.Metrics(i, &g), ws.Metrics(i, &w)
		if g != w || gn != wn {
			for m := range NumMetrics() {
				if g[m] != w[m] && bad < 10 {
					t.Errorf("instance %d (%s): %s %d, with the names %d", i, gs.Phase(i), m.Name(), g[m], w[m])
					bad++
				}
			}
		}
	}
	if len(got.Calls) != len(want.Calls) {
		t.Fatalf("%d calls recorded, %d with the names", len(got.Calls), len(want.Calls))
	}
	for i := range got.Calls {
		gc, wc := got.Calls[i], want.Calls[i]
		gc.API, wc.API = 0, 0
		if gc != wc && bad < 20 {
			t.Errorf("call %d (%s): %+v, with the names %+v", i, want.CallAPIs[want.Calls[i].API], gc, wc)
			bad++
		}
	}
}

// TestSyncEvidenceNamesNoEvent: of the SYNCHRONIZATION records, those that
// name no event classify a nameless call: eager_graph_small's 713
// cudaStreamSynchronize records (syncType 2 in nsys 2025.3, no event) say
// stream_sync; its 2 cudaStreamWaitEvent records, syncType 2 too but with
// an event, say nothing (the call does not block).
func TestSyncEvidenceNamesNoEvent(t *testing.T) {
	fx := fixture.Get(t, "eager_graph_small")
	f := openFixture(t, fx)
	ev, err := readSyncEvidence(f)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqlite.OpenConn("file:"+fx.SQLite(t)+"?mode=ro&immutable=1", sqlite.OpenReadOnly|sqlite.OpenURI)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got := map[string]map[SyncKind]int{}
	err = sqlitex.ExecuteTransient(conn, `SELECT s.value, r.globalTid, r.correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME r
JOIN StringIds s ON s.id = r.nameId
WHERE r.correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)`, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
		name := st.ColumnText(0)
		if got[name] == nil {
			got[name] = map[SyncKind]int{}
		}
		got[name][ev.kind(f.JoinPid(st.ColumnInt64(1)), int32(st.ColumnInt64(2)))]++
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[SyncKind]int{
		"cudaStreamSynchronize_v3020": {SyncStream: 713},
		"cudaStreamWaitEvent_v3020":   {SyncNone: 2},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("evidence by API name (-want +got):\n%s", d)
	}
}
