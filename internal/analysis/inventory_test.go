package analysis

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/phases"
)

// readCalls reads one export with per-call recording.
func readCalls(t *testing.T, path string, skipSteps int) ([]*FileResult, Frames) {
	t.Helper()
	files, frames, err := ReadCalls(context.Background(), Config{Files: []string{path}, Segment: phases.Options{SkipSteps: skipSteps}})
	if err != nil {
		t.Fatal(err)
	}
	return files, frames
}

// TestInventoryCollectorInteractions asserts, step by step, the host
// interactions collector.py makes (testdata/recording/collector.py):
// termination (bool(done.any())), metrics (.item()) and replay_publish
// (.cpu()) read once per step; reset_mask's nonzero() reads once in every
// step with a reset, and packed_reset then copies three pageable scalars;
// events copies a pageable H2D every step and masked_select()s every 25
// global steps (block steps 0 and 25 of the 50-step blocks).
func TestInventoryCollectorInteractions(t *testing.T) {
	fx := fixture.Get(t, "interleaved_graph")
	files, frames := readCalls(t, fx.XZ, 0)
	res := files[0].Result
	all := res.Store.All()
	type key struct {
		inst int32
		kind string
	}
	count := map[key]int{}
	for _, it := range Interactions(res) {
		x := all[it.Instance]
		if x.IsStep {
			t.Errorf("%s step %d: %s %s outside every phase", x.Unit, x.Step, it.Kind, it.API)
		}
		if it.API != "cudaMemcpyAsync+cudaStreamSynchronize" || !it.Blocking {
			t.Errorf("%s step %d %s: unexpected %s %s (blocking %v)", x.Unit, x.Step, x.Phase, it.Kind, it.API, it.Blocking)
		}
		count[key{it.Instance, it.Kind}]++
	}
	resets := 0
	for i, x := range all {
		if x.IsStep {
			continue
		}
		got := map[string]int{}
		for _, k := range []string{KindScalarRead, KindDynamicShape, KindPageableH2D, KindSyncCopy, KindD2H, KindStreamSync, KindDeviceSync, KindEventSync, KindAlloc, KindFree} {
			if n := count[key{int32(i), k}]; n > 0 {
				got[k] = n
			}
		}
		want := map[string]int{}
		switch x.Phase {
		case "termination", "metrics", "replay_publish":
			want[KindScalarRead] = 1
		case "reset_mask":
			if x.M[phases.GPUOps] > 0 { // some env finished: nonzero ran
				want[KindDynamicShape] = 1
				resets++
			}
		case "packed_reset":
			if x.M[phases.GPUOps] > 0 {
				want[KindPageableH2D] = 3
			}
		case "events":
			want[KindPageableH2D] = 1
			if x.Step%25 == 0 {
				want[KindDynamicShape] = 1
			}
		}
		if !mapsEqual(got, want) {
			t.Errorf("%s step %d %s: interactions %v, want %v", x.Unit, x.Step, x.Phase, got, want)
		}
	}
	if resets < 290 { // 300 steps; nonzero is skipped only when no env finished
		t.Errorf("reset_mask read in %d of 300 steps", resets)
	}

	inv := BuildInventory(files, frames, Options{})
	if inv.StepsByArm["eager"] != 150 || inv.StepsByArm["graph"] != 150 || inv.Backtraces {
		t.Fatalf("steps %v, backtraces %v", inv.StepsByArm, inv.Backtraces)
	}
	find := func(arm, phase, kind string) *InventoryItem {
		for i := range inv.Items {
			if it := &inv.Items[i]; it.Arm == arm && it.Phase == phase && it.Kind == kind {
				return it
			}
		}
		t.Fatalf("no %s %s item in arm %s", phase, kind, arm)
		return nil
	}
	for _, arm := range []string{"eager", "graph"} {
		for _, c := range []struct {
			phase, kind, cadence, disposition string
			perStep                           float64
		}{
			{"termination", KindScalarRead, CadenceHot, DispCounter, 1},
			{"metrics", KindScalarRead, CadenceHot, DispCounter, 1},
			{"replay_publish", KindScalarRead, CadenceHot, DispInterval, 1},
			{"events", KindPageableH2D, CadenceHot, DispPrealloc, 1},
			{"events", KindDynamicShape, CadenceInterval, DispFixedShape, 6.0 / 150},
		} {
			it := find(arm, c.phase, c.kind)
			if it.PerStep != c.perStep || it.Cadence != c.cadence || it.Disposition != c.disposition || it.Owner != "collector_step/"+c.phase || it.Frame != NoFrame {
				t.Errorf("%s %s %s: per_step %v cadence %s disposition %q owner %s frame %q", arm, c.phase, c.kind, it.PerStep, it.Cadence, it.Disposition, it.Owner, it.Frame)
			}
		}
		if it := find(arm, "events", KindDynamicShape); it.Period == nil || *it.Period != 25 {
			t.Errorf("%s events dynamic_shape: period %v, want 25", arm, it.Period)
		}
		if it := find(arm, "packed_reset", KindPageableH2D); it.Calls != 3*int64(it.StepsWith) || it.Cadence != CadenceHot || *it.Bytes != 4*it.Calls {
			t.Errorf("%s packed_reset: %d calls in %d steps, %d bytes", arm, it.Calls, it.StepsWith, *it.Bytes)
		}
		if it := find(arm, "reset_mask", KindDynamicShape); it.Calls != int64(it.StepsWith) || it.PerStep < 0.95 {
			t.Errorf("%s reset_mask: %d calls in %d steps", arm, it.Calls, it.StepsWith)
		}
	}
	if len(inv.Items) != 14 {
		t.Errorf("%d items, want 7 per arm: %+v", len(inv.Items), inv.Items)
	}
	for i := 1; i < len(inv.Items); i++ {
		if inv.Items[i].NsPerStep > inv.Items[i-1].NsPerStep {
			t.Fatalf("items not ranked by ns_per_step at %d", i)
		}
	}
}

func mapsEqual(a, b map[string]int) bool {
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

// TestInventoryBacktraces checks the kinds against ground truth: the CUDA
// backtraces of collector_backtrace name the PyTorch operation of each read.
func TestInventoryBacktraces(t *testing.T) {
	path := filepath.Join(fixture.Root(), "testdata", "nsys-2025.3-h200-extra", "collector_backtrace.sqlite.xz")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not present", path)
	}
	files, frames := readCalls(t, path, 0)
	inv := BuildInventory(files, frames, Options{})
	if !inv.Backtraces {
		t.Fatal("backtraces not found")
	}
	want := map[[2]string]string{
		{"termination", KindScalarRead}:    "THPVariable_is_nonzero", // bool(done.any())
		{"metrics", KindScalarRead}:        "THPVariable_item",       // .item()
		{"replay_publish", KindScalarRead}: "THPVariable_cpu",        // .cpu()
		{"reset_mask", KindDynamicShape}:   "THPVariable_nonzero",
		{"events", KindDynamicShape}:       "THPVariable_masked_select",
		{"events", KindPageableH2D}:        "THPVariable_to",      // torch.randn(CMD).to(dev)
		{"packed_reset", KindPageableH2D}:  "THPVariable_setitem", // q[ids] = 0.0
	}
	seen := 0
	for _, it := range inv.Items {
		w, ok := want[[2]string{it.Phase, it.Kind}]
		if !ok {
			t.Errorf("unexpected item %s %s %s (%s)", it.Arm, it.Phase, it.Kind, it.Frame)
			continue
		}
		seen++
		if !strings.Contains(it.Frame, "torch::autograd::"+w+" ") {
			t.Errorf("%s %s %s: frame %q, want %s", it.Arm, it.Phase, it.Kind, it.Frame, w)
		}
	}
	if seen != 2*len(want) {
		t.Errorf("%d items matched, want %d", seen, 2*len(want))
	}
}

// TestInventorySyntheticBacktrace adds a CUDA_CALLCHAINS table with a
// Python frame to a copy of a real export: the Python frame is the owner.
func TestInventorySyntheticBacktrace(t *testing.T) {
	fx := fixture.Get(t, "eager_graph_small")
	src, err := os.ReadFile(fx.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "with_backtraces.sqlite")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	script := `
CREATE TABLE CUDA_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL, unresolved INTEGER, originalIP INTEGER, stackDepth INTEGER NOT NULL);
INSERT INTO StringIds (id, value) VALUES (900001, '0x7f00'), (900002, '/usr/lib/libcuda.so.1'), (900003, 'cudaStreamSynchronize'), (900004, '/usr/lib/libcudart.so.13'),
  (900005, 'reset_envs'), (900006, '/app/collector.py'), (900007, '_PyEval_EvalFrameDefault'), (900008, '/usr/bin/python3.12');
INSERT INTO CUDA_CALLCHAINS VALUES (1, 900001, 900002, 1, 1, 0), (1, 900003, 900004, NULL, 2, 1), (1, 900005, 900006, NULL, 3, 2), (1, 900007, 900008, NULL, 4, 3);
UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET callchainId = 1 WHERE nameId IN (SELECT id FROM StringIds WHERE value LIKE 'cudaStreamSynchronize%');`
	if err := sqlitex.ExecuteScript(c, script, nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	files, frames := readCalls(t, path, 0)
	inv := BuildInventory(files, frames, Options{})
	if !inv.Backtraces || len(inv.Items) == 0 {
		t.Fatalf("backtraces %v, %d items", inv.Backtraces, len(inv.Items))
	}
	for _, it := range inv.Items {
		// Every item here is a copy completed by a stream sync; only the
		// sync has a backtrace, and it speaks for the pair.
		if it.Frame != "reset_envs (collector.py)" {
			t.Errorf("%s %s %s: frame %q", it.Arm, it.Phase, it.Kind, it.Frame)
		}
	}
}

func TestTopUserFrame(t *testing.T) {
	cupti := frame{symbol: "0x7f48", module: "/opt/nvidia/libcupti.so.13.0", unresolved: true}
	cudart := frame{symbol: "cudaStreamSynchronize", module: "/x/site-packages/nvidia/cu13/lib/libcudart.so.13"}
	torch := frame{symbol: "at::native::copy_(at::Tensor&, at::Tensor const&, bool)", module: "/x/site-packages/torch/lib/libtorch_cpu.so"}
	binding := frame{symbol: "torch::autograd::THPVariable_item(_object*, _object*)", module: "/x/site-packages/torch/lib/libtorch_python.so"}
	interp := frame{symbol: "_PyEval_EvalFrameDefault", module: "/usr/bin/python3.12"}
	libc := frame{symbol: "__libc_start_main", module: "/usr/lib/x86_64-linux-gnu/libc.so.6"}
	app := frame{symbol: "Pipeline::readback(int)", module: "/work/nvtx_streams"}
	py := frame{symbol: "collector_step", module: "/app/collector.py"}
	for _, c := range []struct {
		frames []frame
		want   string
	}{
		{[]frame{cupti, cudart, torch, binding, interp, libc}, "torch::autograd::THPVariable_item (libtorch_python.so; no Python frames)"},
		{[]frame{cupti, cudart, torch, binding, py, interp, libc}, "collector_step (collector.py)"},
		{[]frame{cupti, cudart, app, libc}, "Pipeline::readback (nvtx_streams)"},
		{[]frame{cupti, cudart}, ""},
	} {
		if got := topUserFrame(c.frames); got != c.want {
			t.Errorf("topUserFrame = %q, want %q", got, c.want)
		}
	}
	for in, want := range map[string]string{
		"_object* torch::autograd::TypeError_to_NotImplemented_<&torch::autograd::THPVariable_matmul>(_object*, _object*, _object*)": "torch::autograd::TypeError_to_NotImplemented_<&torch::autograd::THPVariable_matmul>",
		"at::(anonymous namespace)::wrapper_CUDA_add(at::Tensor const&)":                                                             "at::{anonymous}::wrapper_CUDA_add",
		"main": "main",
	} {
		if got := shortSymbol(in); got != want {
			t.Errorf("shortSymbol(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCadence(t *testing.T) {
	occ := func(units ...[]int) map[string]map[int]bool {
		m := map[string]map[int]bool{}
		for i, steps := range units {
			s := map[int]bool{}
			for _, x := range steps {
				s[x] = true
			}
			m[string(rune('a'+i))] = s
		}
		return m
	}
	for _, c := range []struct {
		occ    map[string]map[int]bool
		n      int
		want   string
		period float64
	}{
		{occ([]int{0, 1, 2, 3}), 6, CadenceHot, 0},
		{occ([]int{0, 25}, []int{0, 25}, []int{0, 25}), 150, CadenceInterval, 25},
		{occ([]int{0}, []int{0}, []int{0}), 150, CadenceInterval, 50},
		{occ([]int{3}), 150, CadenceCold, 0},
		{occ([]int{1, 7, 40}), 150, CadenceCold, 0},
		{occ([]int{4}, []int{9}), 80, CadenceCold, 0},
	} {
		got, period := cadence(c.occ, c.n)
		if got != c.want || (period == nil) != (c.period == 0) || (period != nil && *period != c.period) {
			t.Errorf("cadence(%v, %d) = %s %v, want %s %v", c.occ, c.n, got, period, c.want, c.period)
		}
	}
	if !slices.Contains([]string{DispEager}, disposition(KindScalarRead, CadenceCold, false)) || disposition(KindScalarRead, CadenceHot, true) != DispInterval ||
		disposition(KindScalarRead, CadenceHot, false) != DispCounter || disposition(KindStreamSync, CadenceHot, false) != DispOutside {
		t.Error("dispositions differ from docs/inventory.md")
	}
}
