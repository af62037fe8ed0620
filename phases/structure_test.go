package phases_test

import (
	"slices"
	"testing"

	"github.com/nsysphase/nsysphase/phases"
)

var collectorPhases = []string{"policy_action_publish", "action_apply", "physics_step", "scene_read_refresh", "observation", "reward", "termination", "metrics", "events", "reset_mask", "packed_reset", "post_reset_observation", "replay_publish"}

// blocksByArm counts the distinct blocks and the steps of each arm.
func blocksByArm(res *phases.Result) (blocks map[string]map[int]bool, steps map[string]int, phasesOf map[string]map[string]bool) {
	blocks, steps, phasesOf = map[string]map[int]bool{}, map[string]int{}, map[string]map[string]bool{}
	for _, x := range res.Instances {
		if blocks[x.Arm] == nil {
			blocks[x.Arm], phasesOf[x.Arm] = map[int]bool{}, map[string]bool{}
		}
		blocks[x.Arm][x.Block] = true
		if x.IsStep {
			steps[x.Arm]++
		} else if x.Phase != phases.Unannotated { // every step with phases has one
			phasesOf[x.Arm][x.Phase] = true
		}
	}
	return
}

func TestInterleavedGraphArms(t *testing.T) {
	res := segment(t, "interleaved_graph", phases.Options{})
	if res.StepName != "collector_step" {
		t.Fatalf("step %q, want collector_step", res.StepName)
	}
	if !slices.Equal(res.Arms, []string{"eager", "graph"}) {
		t.Fatalf("arms %v, want [eager graph]", res.Arms)
	}
	blocks, steps, phasesOf := blocksByArm(res)
	for _, arm := range res.Arms {
		if len(blocks[arm]) != 3 || steps[arm] != 150 {
			t.Errorf("arm %s: %d blocks, %d steps; want 3 blocks of 50 steps", arm, len(blocks[arm]), steps[arm])
		}
	}
	if !phasesOf["graph"]["graph_replay"] || phasesOf["eager"]["graph_replay"] {
		t.Errorf("graph_replay must be in the graph arm only: eager %v graph %v", phasesOf["eager"]["graph_replay"], phasesOf["graph"]["graph_replay"])
	}
	for _, p := range collectorPhases {
		if !phasesOf["eager"][p] {
			t.Errorf("eager lacks phase %s", p)
		}
	}
	for _, p := range []string{"action_apply", "physics_step", "scene_read_refresh", "observation", "reward"} {
		if phasesOf["graph"][p] {
			t.Errorf("graph arm has %s, which the graph replaces", p)
		}
	}
	if res.Excluded.WarmupSteps != 10 {
		t.Errorf("warm-up steps %d, want the 10 inside the warmup range", res.Excluded.WarmupSteps)
	}
	// Graph launches: every graph step launches exactly one graph in
	// graph_replay; eager steps launch none.
	for _, x := range res.Instances {
		g := x.M[phases.GraphLaunches]
		switch {
		case x.Arm == "eager" && g != 0:
			t.Fatalf("eager %s launched %d graphs", x.Phase, g)
		case x.Arm == "graph" && x.Phase == "graph_replay" && g != 1:
			t.Fatalf("graph_replay launched %d graphs, want 1", g)
		}
	}
}

// TestEmitNVTX: PyTorch emit_nvtx nests thousands of aten:: op ranges inside
// the phases; segmentation must still find the collector phases as the step's
// direct children and nothing else at depth 1.
func TestEmitNVTX(t *testing.T) {
	res := segment(t, "emit_nvtx", phases.Options{})
	if res.StepName != "collector_step" {
		t.Fatalf("step %q, want collector_step", res.StepName)
	}
	_, steps, phasesOf := blocksByArm(res)
	total := 0
	for _, n := range steps {
		total += n
	}
	if total != 15 {
		t.Errorf("%d steps, want 15 (25 minus 10 in warm-up)", total)
	}
	got := []string{}
	for _, arm := range res.Arms {
		for p := range phasesOf[arm] {
			got = append(got, p)
		}
	}
	slices.Sort(got)
	want := slices.Clone(collectorPhases)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("phases %v, want the 13 collector phases", got)
	}
	// Depth 2 reaches the aten:: op ranges below the phases.
	deep := segment(t, "emit_nvtx", phases.Options{Depth: 2})
	n := 0
	for _, x := range deep.Instances {
		if x.Depth == 2 {
			n++
		}
	}
	if n < 1000 {
		t.Errorf("depth 2 found %d op ranges, want the thousands emit_nvtx records", n)
	}
}

// TestLearnerDoesNotLeak: in large_interleaved the learner runs in another
// process with its own ranges; none may appear among the collector's phases,
// and its GPU work is not the collector's (it shows only as overlap).
func TestLearnerDoesNotLeak(t *testing.T) {
	res := segment(t, "large_interleaved", phases.Options{})
	if res.StepName != "collector_step" {
		t.Fatalf("step %q", res.StepName)
	}
	pids := map[int64]bool{}
	for _, x := range res.Instances {
		pids[x.Pid] = true
		if !x.IsStep && !slices.Contains(collectorPhases, x.Phase) && x.Phase != "graph_replay" && x.Phase != phases.Unannotated {
			t.Fatalf("phase %q is not a collector phase", x.Phase)
		}
	}
	if len(pids) != 1 {
		t.Fatalf("instances from %d processes, want the collector's only", len(pids))
	}
	blocks, steps, _ := blocksByArm(res)
	for _, arm := range []string{"eager", "graph"} {
		if len(blocks[arm]) != 8 || steps[arm] != 2000 {
			t.Errorf("arm %s: %d blocks, %d steps; want 8 blocks of 250", arm, len(blocks[arm]), steps[arm])
		}
	}
	// Without MPS the GPU time-slices the two processes: their kernels never
	// overlap, so overlap_other_process_ns is a measured zero.
	for _, x := range res.Instances {
		if x.M[phases.OverlapOtherProcess] != 0 {
			t.Fatalf("%s: overlap %d ns without MPS", x.Phase, x.M[phases.OverlapOtherProcess])
		}
	}
	if res.Inputs[0].CrossProcessOverlapNs != 0 {
		t.Errorf("cross-process overlap %d ns without MPS", res.Inputs[0].CrossProcessOverlapNs)
	}
	// The learner's steps analysed on their own: the autograd thread's
	// kernels are reported beside, never inside, the range's own.
	learner := segment(t, "large_interleaved", phases.Options{Step: "learner_update"})
	var own, other int64
	for _, x := range learner.Instances {
		if x.IsStep {
			own += x.M[phases.KernelSum]
			other += x.M[phases.OtherThreadKernelNs]
		}
	}
	if other <= 0 || own <= 0 {
		t.Fatalf("learner_update: own kernel %d ns, other-thread kernel %d ns; want both > 0", own, other)
	}
	share := float64(other) / float64(own+other)
	if share < 0.25 || share > 0.5 {
		t.Errorf("autograd-thread share of learner kernel time %.2f, want about 0.38", share)
	}
}

// TestMPSOverlap: with CUDA MPS the collector's and the learner's kernels
// overlap on the GPU; without it they never do (3.4–11 ms on the mps fixtures vs 0 on the null ones).
func TestMPSOverlap(t *testing.T) {
	for _, c := range []struct {
		name string
		mps  bool
	}{{"sharing_mps_1", true}, {"sharing_mps_2", true}, {"sharing_null_1", false}, {"sharing_null_2", false}} {
		res := segment(t, c.name, phases.Options{})
		in := res.Inputs[0]
		var phaseOverlap int64
		for _, x := range res.Instances {
			if x.IsStep {
				phaseOverlap += x.M[phases.OverlapOtherProcess]
			}
		}
		if c.mps {
			if in.CrossProcessOverlapNs < 1_000_000 || phaseOverlap <= 0 {
				t.Errorf("%s: cross-process overlap %d ns, step overlap %d ns; want > 1 ms and > 0", c.name, in.CrossProcessOverlapNs, phaseOverlap)
			}
		} else if in.CrossProcessOverlapNs != 0 || phaseOverlap != 0 {
			t.Errorf("%s: overlap %d / %d ns without MPS, want exactly 0", c.name, in.CrossProcessOverlapNs, phaseOverlap)
		}
		if len(in.GPUUse) != 1 || len(in.GPUUse[0].Pids) != 2 {
			t.Errorf("%s: GPU use %+v, want one GPU shared by 2 processes", c.name, in.GPUUse)
		}
		t.Logf("%s: cross-process overlap %d ns, steps' overlap %d ns", c.name, in.CrossProcessOverlapNs, phaseOverlap)
	}
}
