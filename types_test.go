package nsysphase

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/dataset"
	"github.com/nsysphase/nsysphase/phases"
)

const (
	testSmall       = "testdata/nsys-2025.3-h200/eager_graph_small.sqlite.xz"
	testInterleaved = "testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz"
)

// sameJSON fails t unless got and want marshal to the same bytes.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s: the package's JSON differs from the pipeline's\n got %.400s\nwant %.400s", what, g, w)
	}
}

// TestRowsAreThePipelines: every row type of the package carries all of
// its pipeline row (the same JSON, field for field, nulls included), and
// an analysis marshals to the document the command prints.
func TestRowsAreThePipelines(t *testing.T) {
	a, err := Analyze(context.Background(), []string{testInterleaved}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	d := a.doc
	if len(d.Comparisons) == 0 || len(d.Decomposition) == 0 || len(d.Warnings) == 0 {
		t.Fatalf("fixture too thin: %d comparisons, %d parts, %d warnings", len(d.Comparisons), len(d.Decomposition), len(d.Warnings))
	}
	sameJSON(t, "summary", a.Summary(), d.Summary)
	sameJSON(t, "comparisons", a.Comparisons(), d.Comparisons)
	sameJSON(t, "decomposition", a.Decomposition(), d.Decomposition)
	sameJSON(t, "warnings", a.Warnings(), d.Warnings)
	sameJSON(t, "excluded", a.Excluded(), d.Excluded)

	nulls := 0
	for _, r := range a.Summary() {
		for _, m := range r.Metrics {
			if m == nil {
				nulls++
			}
		}
	}
	if nulls == 0 {
		t.Error("no metric summary is null: the (unannotated) row's gpu_busy_ns should be")
	}

	var buf bytes.Buffer
	if err := Render(&buf, a, "json"); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, compact.Bytes()) {
		t.Error("json.Marshal(analysis) is not the document Render (and analyze --format json) writes, compacted")
	}
}

// TestInstancesAreThePipelines: every field and metric of each instance,
// nulls as nulls.
func TestInstancesAreThePipelines(t *testing.T) {
	o := DefaultOptions()
	o.NoStats = true
	a, err := Analyze(context.Background(), []string{testSmall}, o)
	if err != nil {
		t.Fatal(err)
	}
	want := a.doc.Instances()
	got := a.Instances()
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("%d instances, want %d", len(got), len(want))
	}
	var nulls, queues, steps int
	for i := range got {
		g, w := &got[i], &want[i]
		back := phases.Instance{File: g.File, Pid: g.Pid, Tid: g.Tid, Thread: g.Thread, Arm: g.Arm, Block: g.Block, BlockStart: w.BlockStart, Unit: w.Unit,
			Step: g.Step, StepLabel: g.StepLabel, Phase: g.Phase, IsStep: g.IsStep, Depth: g.Depth, Start: g.StartNs, End: g.EndNs, Warmup: g.Warmup,
			OtherThread: g.OtherThread, QueueMeanNs: deref(g.QueueMeanNs), HasQueue: g.QueueMeanNs != nil,
			PhaseGapNs: deref(g.PhaseGapNs), UnattrKerNs: deref(g.UnattributedKernelNs), HasStepOnly: g.PhaseGapNs != nil, GPUStart: deref(g.GPUStartNs), HasGPUStart: g.GPUStartNs != nil, Rank: deref(g.Rank), HasRank: g.Rank != nil}
		if (g.PhaseGapNs == nil) != (g.UnattributedKernelNs == nil) {
			t.Fatalf("instance %d: phase gap and unattributed kernel time not both null or both set", i)
		}
		for m := range phases.NumMetrics() {
			v, ok := g.Metric(m.Name())
			if ok == w.IsNull(m) || g.IsNull(m.Name()) != w.IsNull(m) {
				t.Fatalf("instance %d: metric %s null %v, want %v", i, m.Name(), !ok, w.IsNull(m))
			}
			if ok {
				back.M[m] = v
			} else {
				back.M[m] = w.M[m] // the pipeline keeps a value under its null bit
				back.Null |= 1 << uint(m)
				nulls++
			}
		}
		if !reflect.DeepEqual(back, *w) {
			t.Fatalf("instance %d:\n got %+v\nwant %+v", i, back, *w)
		}
		if g.BlockLabel != w.Unit.String() {
			t.Fatalf("instance %d: block label %q, want %q", i, g.BlockLabel, w.Unit.String())
		}
		if g.QueueMeanNs != nil {
			queues++
		}
		if g.IsStep {
			steps++
		}
	}
	if nulls == 0 || queues == 0 || steps == 0 {
		t.Errorf("fixture too thin: %d null metrics, %d queue means, %d steps", nulls, queues, steps)
	}
	if _, ok := got[0].Metric("no_such_metric"); ok || !got[0].IsNull("no_such_metric") {
		t.Error("an unknown metric name reads as measured")
	}
	if n := len(Metrics()); n != int(phases.NumMetrics()) || Metrics()[0].Name != "wall_ns" || Metrics()[0].Unit != "ns" {
		t.Errorf("Metrics: %d, first %+v", n, Metrics()[0])
	}
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

// TestProvenanceIsThePipelines: the flat provenance row holds what the
// document's provenance and inputs say.
func TestProvenanceIsThePipelines(t *testing.T) {
	o := DefaultOptions()
	o.NoStats = true
	a, err := Analyze(context.Background(), []string{testSmall}, o)
	if err != nil {
		t.Fatal(err)
	}
	rows := a.Provenance()
	if len(rows) != 1 {
		t.Fatalf("%d provenance rows, want 1", len(rows))
	}
	r, p, in := rows[0], a.doc.Provenance[0], a.doc.Inputs[0]
	if r.File != p.File || r.NsysVersion != p.Provenance.NsysVersion || r.ExportSchemaVersion != p.Provenance.SchemaVersion ||
		r.DriverVersion != p.Provenance.DriverVersion || r.CUDADriverVersion != p.Provenance.CUDADriverVersion || r.OS != p.Provenance.OS ||
		r.GraphTraceMode != p.Provenance.GraphTraceMode || r.MPSActive != p.Evidence.MPSActive ||
		r.CrossProcessGPUOverlapNs != p.Evidence.CrossProcessGPUOverlapNs || r.Step != in.Step || r.Steps != in.Steps {
		t.Errorf("provenance row %+v does not match %+v / %+v", r, p, in)
	}
	if len(r.GPUs) != len(p.Provenance.GPUs) || len(r.GPUs) == 0 || r.GPUs[0].Name != p.Provenance.GPUs[0].Name || r.GPUs[0].UUID != p.Provenance.GPUs[0].UUID {
		t.Errorf("GPUs %+v, want %+v", r.GPUs, p.Provenance.GPUs)
	}
	if len(r.Processes) != len(p.Provenance.Processes) || r.Manifest == nil || r.Steps == 0 {
		t.Errorf("processes %d (want %d), manifest %v, steps %d", len(r.Processes), len(p.Provenance.Processes), r.Manifest != nil, r.Steps)
	}
	sameJSON(t, "mismatches", r.Mismatches, p.Mismatches)
	sameJSON(t, "graph launches", r.GraphLaunchesByArm, p.Evidence.GraphLaunchesByArm)
	sameJSON(t, "absent tables", r.AbsentActivityTables, in.Absent)
	sameJSON(t, "manifest", r.Manifest, p.Manifest)
}

// TestHistoryRowsAreThePipelines: a history comparison, field for field.
func TestHistoryRowsAreThePipelines(t *testing.T) {
	ctx := context.Background()
	o := DefaultOptions()
	o.NoStats = true
	var dirs []string
	for _, run := range []string{"sharing_null_1", "sharing_null_2", "sharing_mps_1"} {
		a, err := Analyze(ctx, []string{"testdata/nsys-2025.3-h200/" + run + ".sqlite.xz"}, o)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), run)
		if err := a.WriteDataset(dir); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	a, err := Analyze(ctx, []string{"testdata/nsys-2025.3-h200/sharing_mps_2.sqlite.xz"}, o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.CompareWithHistory(ctx, dirs, o)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := dataset.LoadHistory(ctx, dirs, a.doc.Options(), Version)
	if err != nil {
		t.Fatal(err)
	}
	want, err := a.doc.CompareWithHistory(h, a.doc.Phases, "wall_ns", "mean", "", 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0].Ratio == nil || len(got[0].History) != 3 {
		t.Fatalf("history rows too thin: %+v", got)
	}
	sameJSON(t, "history", got, want)
}

// TestReportsMarshalAsRendered: each command's result marshals to the JSON
// Render writes (compacted).
func TestReportsMarshalAsRendered(t *testing.T) {
	ctx := context.Background()
	region := []string{"action_apply", "physics_step"}
	inv, err := Inventory(ctx, []string{testInterleaved}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Boundary(ctx, []string{testInterleaved}, DefaultOptions(), region)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Verdict(ctx, []string{testInterleaved}, DefaultOptions(), region, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(ctx, []string{testInterleaved}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.Check(CheckSpec{Limit: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []any{inv, b, v, c} {
		var buf, compact bytes.Buffer
		if err := Render(&buf, r, "json"); err != nil {
			t.Fatal(err)
		}
		if err := json.Compact(&compact, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		m, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(m, compact.Bytes()) {
			t.Errorf("%T: json.Marshal differs from Render json", r)
		}
	}
}

// TestSchemaVersion: the package's constant is the pipeline's.
func TestSchemaVersion(t *testing.T) {
	if SchemaVersion != analysis.SchemaVersion {
		t.Errorf("SchemaVersion %q, the pipeline writes %q", SchemaVersion, analysis.SchemaVersion)
	}
}
