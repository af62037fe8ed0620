package phases

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

func TestFamilyOf(t *testing.T) {
	for in, want := range map[string]string{
		"ProfilerStep#12":   "ProfilerStep#N",
		"iteration 12":      "iteration N",
		"step_5":            "step_N",
		"Inner Level 3":     "Inner Level N",
		"Batch 7":           "Batch N",
		"epoch 2 step 40":   "epoch N step N",
		"A-Task 0":          "A-Task N",
		"iter=3":            "iter=N",
		"collector_step":    "collector_step",
		"aten::conv2d":      "aten::conv2d",
		"layer1/fp16_gemm":  "layer1/fp16_gemm",
		"arm=graph block=1": "arm=graph block=N",
		"12":                "N",
	} {
		if got := FamilyOf(in); got != want {
			t.Errorf("FamilyOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStripTorchIDs(t *testing.T) {
	for in, want := range map[string]string{
		"aten::matmul, seq = 0, op_id = 1":               "aten::matmul",
		"aten::copy_, op_id = 991065":                    "aten::copy_",
		"aten::addmm, seq = 7, sizes = [[2, 3], [3, 4]]": "aten::addmm",
		"ncclSend":          "ncclSend",
		"arm=graph block=1": "arm=graph block=1",
	} {
		if got := StripTorchIDs(in); got != want {
			t.Errorf("StripTorchIDs(%q) = %q, want %q", in, got, want)
		}
	}
}

// editedCopy copies a bundled fixture and runs script on the copy.
func editedCopy(t *testing.T, name, script string) string {
	t.Helper()
	src := fixture.Get(t, name).SQLite(t)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), name+".sqlite")
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := sqlite.OpenConn(dst, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := sqlitex.ExecuteScript(c, script, nil); err != nil {
		t.Fatal(err)
	}
	return dst
}

func segmentPath(t *testing.T, path string, opt Options) *Result {
	t.Helper()
	f, err := nsys.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Segment(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

const dropArms = `DELETE FROM NVTX_EVENTS WHERE text LIKE 'arm=%';`

// TestProfilerStepFamily is what torch.profiler + emit_nvtx produce (no
// public export has it): the collector fixture with its arm ranges removed
// and each collector_step renamed ProfilerStep#0…#N in time order. Zero-config
// analysis must pick the family ProfilerStep#N, keep each instance's own name
// as its step label, and measure exactly what --step collector_step measures
// on the same ranges.
func TestProfilerStepFamily(t *testing.T) {
	renamed := editedCopy(t, "eager_graph_small", dropArms+`
CREATE TABLE steps AS SELECT rowid AS r, row_number() OVER (ORDER BY start) - 1 AS k FROM NVTX_EVENTS WHERE text = 'collector_step';
UPDATE NVTX_EVENTS SET text = 'ProfilerStep#' || (SELECT k FROM steps WHERE r = NVTX_EVENTS.rowid) WHERE rowid IN (SELECT r FROM steps);
DROP TABLE steps;`)
	plain := editedCopy(t, "eager_graph_small", dropArms)

	got := segmentPath(t, renamed, Options{})
	want := segmentPath(t, plain, Options{Step: "collector_step"})
	if got.StepName != "ProfilerStep#N" || got.StepChoice.Mode != StepFamily || got.StepChoice.Count < 2 {
		t.Fatalf("step %q, choice %+v; want the family ProfilerStep#N", got.StepName, got.StepChoice)
	}
	if len(got.Instances) != len(want.Instances) {
		t.Fatalf("%d instances, --step collector_step gives %d", len(got.Instances), len(want.Instances))
	}
	label := regexp.MustCompile(`^ProfilerStep#\d+$`)
	var labels []string
	for i, g := range got.Instances {
		w := want.Instances[i]
		if g.Phase != w.Phase && !(g.IsStep && w.IsStep) || g.Start != w.Start || g.End != w.End || g.M != w.M {
			t.Fatalf("instance %d: %s [%d, %d] differs from %s [%d, %d]", i, g.Phase, g.Start, g.End, w.Phase, w.Start, w.End)
		}
		if g.IsStep {
			if !label.MatchString(g.StepLabel) {
				t.Errorf("step %d: label %q", i, g.StepLabel)
			}
			labels = append(labels, g.StepLabel)
		} else if g.StepLabel != "" {
			t.Errorf("phase %q has a step label %q", g.Phase, g.StepLabel)
		}
	}
	if n := len(labels); n == 0 || len(slices.Compact(slices.Sorted(slices.Values(labels)))) != n {
		t.Errorf("step labels not one per step: %v", labels)
	}
	if !slices.Contains(got.PhaseOrder, "physics_step") {
		t.Errorf("phases %v lack physics_step", got.PhaseOrder)
	}
}

// TestEmitNvtxIDsStripped: on the emit_nvtx fixture every aten op carries
// new seq/op_id numbers; phases group by the op name alone.
func TestEmitNvtxIDsStripped(t *testing.T) {
	res := segmentPath(t, fixture.Get(t, "emit_nvtx").SQLite(t), Options{Depth: 3})
	ids := regexp.MustCompile(`op_id|seq =`)
	for _, p := range res.PhaseOrder {
		if ids.MatchString(p) {
			t.Errorf("phase %q keeps PyTorch ids", p)
		}
	}
}

// TestSingleShotAndWholeProcess: with every range renamed to be unique the
// program is single shot (each range a phase, n = 1 per thread); with no
// ranges at all each process's CUDA activity is one whole-process step that
// measures the same API calls as the process's busiest thread holds.
func TestSingleShotAndWholeProcess(t *testing.T) {
	single := editedCopy(t, "eager_graph_small", dropArms+`
UPDATE NVTX_EVENTS SET text = coalesce(text, (SELECT value FROM StringIds WHERE id = textId)) || ' @' || rowid, textId = NULL WHERE eventType IN (59, 60, 70, 71);`)
	res := segmentPath(t, single, Options{})
	if res.StepChoice.Mode != StepSingleShot || res.StepName != WholeProcess {
		t.Fatalf("choice %+v, want single shot", res.StepChoice)
	}
	seen := map[string]int{}
	for _, x := range res.Instances {
		if !x.IsStep {
			seen[x.Phase]++
		}
	}
	for p, n := range seen {
		if n != 1 {
			t.Errorf("phase %q: %d instances, want 1", p, n)
		}
	}

	none := editedCopy(t, "eager_graph_small", `DELETE FROM NVTX_EVENTS;`)
	res = segmentPath(t, none, Options{})
	if res.StepChoice.Mode != StepWholeProcess || res.StepName != WholeProcess {
		t.Fatalf("choice %+v, want whole process", res.StepChoice)
	}
	f, err := nsys.Open(none)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ext, err := f.APIExtents()
	if err != nil {
		t.Fatal(err)
	}
	pids := map[int64]bool{}
	for _, e := range ext {
		pids[nsys.Pid(e.GlobalTid)] = true
	}
	if len(res.Instances) != len(pids) {
		t.Fatalf("%d instances, want one per process with CUDA calls (%d)", len(res.Instances), len(pids))
	}
	for _, x := range res.Instances {
		var calls int64
		for _, e := range ext {
			if nsys.Pid(e.GlobalTid) == x.Pid && nsys.Tid(e.GlobalTid) == x.Tid {
				calls = e.Calls
			}
		}
		if x.M[Wall] <= 0 || x.M[APICalls] == 0 || x.M[APICalls] > calls || x.Warmup {
			t.Errorf("whole-process instance of pid %d: wall %d, %d top-level calls of %d, warm-up %v", x.Pid, x.M[Wall], x.M[APICalls], calls, x.Warmup)
		}
	}
}

// TestProfilerStepRealExport: a real PyTorch run recorded on the H200
// (testdata/nsys-2025.3-h200-extra/profiler_step: emit_nvtx, steps opened as
// "ProfilerStep#1, op_id = 1" … "#40", no arm ranges). Zero-config must
// pick the family ProfilerStep#N — not the autograd thread's AccumulateGrad
// ranges, which repeat six times a step at the top of their thread — with
// the phases the loop opens and each step's own label.
func TestProfilerStepRealExport(t *testing.T) {
	fx := fixture.ExtraNamed(t, "profiler_step")
	res := segmentPath(t, fx.SQLite(t), Options{})
	if res.StepName != "ProfilerStep#N" || res.StepChoice.Mode != StepFamily || res.StepChoice.Count != 40 {
		t.Fatalf("step %q, choice %+v; want the family ProfilerStep#N with 40 instances", res.StepName, res.StepChoice)
	}
	for _, p := range []string{"data", "forward", "backward", "optimizer"} {
		if !slices.Contains(res.PhaseOrder, p) {
			t.Errorf("phases %v lack %s", res.PhaseOrder, p)
		}
	}
	var labels []string
	for _, x := range res.Instances {
		if x.IsStep {
			labels = append(labels, x.StepLabel)
		}
	}
	if len(labels) != 40 || labels[0] != "ProfilerStep#1" || labels[39] != "ProfilerStep#40" {
		t.Errorf("step labels %d: first %q last %q, want ProfilerStep#1 … #40", len(labels), labels[0], labels[len(labels)-1])
	}
}
