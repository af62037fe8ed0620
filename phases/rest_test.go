package phases

import (
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// TestWholeStepAddsUp: on the bundled PyTorch loop (torch.profiler's
// ProfilerStep#N with record_function phases and emit_nvtx), every step's
// depth-1 rows of its own thread — the phases and (unannotated) — add up to
// the step, metric by metric; the backward pass, run on PyTorch's autograd
// thread, has a row of its own with the kernels and GPU busy time that no
// phase of the main thread holds.
func TestWholeStepAddsUp(t *testing.T) {
	var path string
	for _, fx := range fixture.Extra(t) {
		if fx.Name == "profiler_step" {
			path = fx.SQLite(t)
		}
	}
	if path == "" {
		t.Fatal("the bundled profiler_step export is missing")
	}
	res := segmentPath(t, path, Options{})
	if res.StepName != "ProfilerStep#N" {
		t.Fatalf("step %q, want ProfilerStep#N", res.StepName)
	}
	steps, rest, autograd := 0, 0, 0
	for i := 0; i < len(res.Instances); {
		st := &res.Instances[i]
		if !st.IsStep {
			t.Fatalf("instance %d (%s) is not a step", i, st.Phase)
		}
		steps++
		var sum [MaxMetrics]int64
		j := i + 1
		for ; j < len(res.Instances) && !res.Instances[j].IsStep; j++ {
			x := &res.Instances[j]
			switch {
			case x.Depth != 1:
			case x.OtherThread:
				if x.Phase != "backward (autograd thread)" || !strings.HasPrefix(x.Thread, "pt_autograd") {
					t.Errorf("step %d: other-thread row %q on thread %q", st.Step, x.Phase, x.Thread)
				}
				if x.M[KernelSum] <= 0 || x.M[GPUBusy] <= 0 || x.Start < st.Start || x.End > st.End {
					t.Errorf("step %d: autograd row kernel_sum %d gpu_busy %d [%d, %d] outside the step [%d, %d]", st.Step, x.M[KernelSum], x.M[GPUBusy], x.Start, x.End, st.Start, st.End)
				}
				autograd++
			default:
				if x.Phase == Unannotated {
					rest++
					for _, m := range nonAdditive() {
						if !x.IsNull(m) {
							t.Errorf("(unannotated) %s is not null", m.Name())
						}
					}
				}
				for m := range NumMetrics() {
					sum[m] += x.M[m]
				}
			}
		}
		for m := range NumMetrics() {
			if st.IsNull(m) || isSplit(m) {
				continue
			}
			if sum[m] != st.M[m] {
				t.Errorf("step %d: depth-1 rows' %s sum to %d, the step has %d", st.Step, m.Name(), sum[m], st.M[m])
			}
		}
		i = j
	}
	if steps < 39 || rest != steps || autograd != steps {
		t.Errorf("%d steps, %d (unannotated) rows, %d autograd rows; want one of each per step", steps, rest, autograd)
	}
}

func isSplit(m Metric) bool { return !m.Info().Additive }

// nonAdditive are the metrics the (unannotated) row leaves null.
func nonAdditive() []Metric {
	var out []Metric
	for m := range NumMetrics() {
		if isSplit(m) {
			out = append(out, m)
		}
	}
	return out
}

// TestAbsentMask: a table not in the export makes its metrics null.
func TestAbsentMask(t *testing.T) {
	x := Instance{Null: absentMask([]string{"CUPTI_ACTIVITY_KIND_KERNEL"})}
	for _, m := range []Metric{KernelSum, KernelCount, GPUBusy, Proj, GPUOps, SyncNoGPU, GPUIdle} {
		if !x.IsNull(m) {
			t.Errorf("no kernel table: %s not null", m.Name())
		}
	}
	for _, m := range []Metric{Wall, CPUOther, Launch, SyncAPI, H2DNs} {
		if x.IsNull(m) {
			t.Errorf("no kernel table: %s null", m.Name())
		}
	}
	y := Instance{Null: absentMask([]string{"CUPTI_ACTIVITY_KIND_RUNTIME"})}
	if !y.IsNull(CPUOther) || !y.IsNull(Launch) || !y.IsNull(KernelSum) || y.IsNull(Wall) {
		t.Errorf("no CUDA API table: null mask %b", y.Null)
	}
}

// TestWarmupPerProcess: two ranks in one arm block each skip their own
// first --skip-steps steps (dist_allreduce_2gpu: 2 arms × 2 blocks × 2
// processes), not only the block's first step of whichever came first.
func TestWarmupPerProcess(t *testing.T) {
	var path string
	for _, fx := range fixture.Extra(t) {
		if fx.Name == "dist_allreduce_2gpu" {
			path = fx.SQLite(t)
		}
	}
	if path == "" {
		t.Fatal("the bundled dist_allreduce_2gpu export is missing")
	}
	res := segmentPath(t, path, Options{SkipSteps: 1})
	perProc := map[[2]int64]int{} // (pid, block unit) → warm-up steps
	for _, x := range res.Instances {
		if x.IsStep && x.Warmup {
			perProc[[2]int64{x.Pid, int64(x.Block)}]++
		}
	}
	if res.Excluded.SkippedSteps != 8 || len(perProc) != 4 {
		t.Errorf("%d skipped steps over %v, want 8: one per process, block and arm", res.Excluded.SkippedSteps, perProc)
	}
}

// TestWarmupKeepsFewSteps: a process with no more steps in its block than
// --skip-steps keeps them (one step per rank stays a row), with a warning.
func TestWarmupKeepsFewSteps(t *testing.T) {
	var path string
	for _, fx := range fixture.Extra(t) {
		if fx.Name == "dist_allreduce_2gpu" {
			path = fx.SQLite(t)
		}
	}
	if path == "" {
		t.Fatal("the bundled dist_allreduce_2gpu export is missing")
	}
	res := segmentPath(t, path, Options{SkipSteps: 1000})
	warm, steps := 0, 0
	for _, x := range res.Instances {
		if x.IsStep {
			steps++
			if x.Warmup {
				warm++
			}
		}
	}
	codes := map[string]bool{}
	for _, w := range res.Warnings {
		codes[w.Code] = true
	}
	if warm != 0 || steps == 0 || res.Excluded.SkippedSteps != 0 || !codes[nsys.WarnFewSteps] {
		t.Errorf("--skip-steps 1000: %d of %d steps warm-up, %d skipped, warnings %v", warm, steps, res.Excluded.SkippedSteps, codes)
	}
}

// TestOtherThreadRowsLongRange: another thread's long top-level range that
// began before the step, with short ranges nested in it, still gives the
// step a row (a search over all ranges by end is not monotone; over the
// top-level ones it is).
func TestOtherThreadRowsLongRange(t *testing.T) {
	const pid = 7
	main := synthThreads(pid<<24|1, synthRange{"", "step", 50, 60})
	other := synthThreads(pid<<24|2, synthRange{"", "loader", 0, 100}, synthRange{"", "read", 1, 2}, synthRange{"", "loader", 200, 300})
	tr := &trace{threadNm: map[int64]string{pid<<24 | 2: "worker"}}
	rows := tr.otherThreadRows([]*threadRanges{main, other}, main, 50, 60)
	if len(rows) != 1 || rows[0].start != 50 || rows[0].end != 60 || rows[0].name != "loader (thread worker)" {
		t.Errorf("rows %+v, want loader (thread worker) over [50, 60]", rows)
	}
}
