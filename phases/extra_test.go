package phases_test

import (
	"slices"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

func extra(t *testing.T, name string) fixture.Fixture {
	t.Helper()
	for _, fx := range fixture.Extra(t) {
		if fx.Name == name {
			return fx
		}
	}
	t.Skipf("extra fixture %s absent", name)
	return fixture.Fixture{}
}

func segmentFixture(t *testing.T, fx fixture.Fixture, opt phases.Options) (*phases.Result, *nsys.File) {
	t.Helper()
	f, err := nsys.Open(fx.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	res, err := phases.Segment(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res, f
}

// TestNVTXDomainsAndRegisteredStrings: a CUDA C++ program with an NVTX3
// domain, registered strings (textId only) and arm ranges inside the domain.
func TestNVTXDomainsAndRegisteredStrings(t *testing.T) {
	res, _ := segmentFixture(t, extra(t, "nvtx_streams"), phases.Options{})
	if res.StepName != "pipeline:step" {
		t.Fatalf("step %q, want pipeline:step (a registered string in domain pipeline)", res.StepName)
	}
	if !slices.Equal(res.Arms, []string{"streams1", "streams4"}) {
		t.Fatalf("arms %v: arm ranges inside a named domain must match the arm pattern", res.Arms)
	}
	blocks, steps, phasesOf := blocksByArm(res)
	for _, arm := range res.Arms {
		if len(blocks[arm]) != 3 || steps[arm] != 90 {
			t.Errorf("arm %s: %d blocks %d steps, want 3 blocks of 30", arm, len(blocks[arm]), steps[arm])
		}
		for _, p := range []string{"pipeline:upload", "pipeline:compute", "pipeline:readback", "pipeline:reset"} {
			if !phasesOf[arm][p] {
				t.Errorf("arm %s lacks phase %s", arm, p)
			}
		}
	}
	if res.Excluded.CrossThreadEnded != 185 {
		t.Errorf("%d ranges ended on another thread, want the 185 inflight ranges", res.Excluded.CrossThreadEnded)
	}
	// reset launches GPU work only every 4th step.
	withOps, all := 0, 0
	for _, x := range res.Instances {
		if x.Phase == "pipeline:reset" {
			all++
			if x.M[phases.GPUOps] > 0 {
				withOps++
			}
		}
	}
	if all == 0 || withOps*4 < all-4 || withOps*4 > all+4 {
		t.Errorf("reset: %d of %d instances with GPU ops, want about a quarter", withOps, all)
	}
}

// TestBacktraceRowsNotDoubled: with --cudabacktrace every traced call has a
// second, wrapping eventClass 67 row with the same correlation id; it must
// not double the call's time or GPU work.
func TestBacktraceRowsNotDoubled(t *testing.T) {
	res, f := segmentFixture(t, extra(t, "collector_backtrace"), phases.Options{})
	kernels, err := f.RowCount(nsys.TableKernel)
	if err != nil {
		t.Fatal(err)
	}
	var stepKernels, graphs int64
	for _, x := range res.Instances {
		if x.IsStep {
			stepKernels += x.M[phases.KernelCount]
			graphs += x.M[phases.GraphLaunches]
		}
		if x.M[phases.Launches] > x.M[phases.GPUOps] {
			t.Fatalf("%s: %d launches but %d ops", x.Phase, x.M[phases.Launches], x.M[phases.GPUOps])
		}
	}
	if stepKernels == 0 || stepKernels > kernels {
		t.Fatalf("steps hold %d kernels, the export %d: backtrace rows doubled them", stepKernels, kernels)
	}
	// Every eager step launches about 90 work items; doubled rows would show ~180.
	for _, x := range res.Instances {
		if x.IsStep && x.Arm == "eager" && !x.Warmup && (x.M[phases.Launches] < 60 || x.M[phases.Launches] > 130) {
			t.Fatalf("eager step %d: %d launches", x.Step, x.M[phases.Launches])
		}
	}
	if graphs == 0 {
		t.Error("graph arm launched no graphs")
	}
}

// TestTwoGPUs: one process per GPU; their concurrent kernels are on
// different GPUs, so there is no cross-process overlap.
func TestTwoGPUs(t *testing.T) {
	res, _ := segmentFixture(t, extra(t, "dist_allreduce_2gpu"), phases.Options{})
	in := res.Inputs[0]
	if len(in.GPUUse) != 2 || len(in.GPUUse[0].Pids) != 1 || len(in.GPUUse[1].Pids) != 1 || in.GPUUse[0].Pids[0] == in.GPUUse[1].Pids[0] {
		t.Fatalf("GPU use %+v, want two GPUs with one process each", in.GPUUse)
	}
	if in.CrossProcessOverlapNs != 0 {
		t.Errorf("cross-process overlap %d ns across different GPUs", in.CrossProcessOverlapNs)
	}
	pids := map[int64]bool{}
	var allreduce int64
	for _, x := range res.Instances {
		pids[x.Pid] = true
		if x.Phase == "allreduce" {
			allreduce += x.M[phases.KernelSum]
		}
	}
	if len(pids) != 2 || allreduce <= 0 {
		t.Errorf("%d ranks, allreduce kernel time %d ns; want 2 ranks with NCCL kernels in allreduce", len(pids), allreduce)
	}
	if !slices.Equal(res.Arms, []string{"sync", "overlap"}) {
		t.Errorf("arms %v", res.Arms)
	}
}
