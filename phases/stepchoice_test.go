package phases

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"testing"
)

// synth builds one thread's range tree from (domain, text, start, end).
type synthRange struct {
	domain, text string
	start, end   int64
}

func synthThreads(gtid int64, rs ...synthRange) *threadRanges {
	names := map[[2]string]*rangeName{}
	t := &threadRanges{gtid: gtid}
	for _, r := range rs {
		k := [2]string{r.domain, r.text}
		nm := names[k]
		if nm == nil {
			text := PayloadName(StripTorchIDs(r.text))
			name := text
			if r.domain != "" {
				name = r.domain + ":" + text
			}
			nm = &rangeName{name: name, family: FamilyOf(name), text: text, phase: PhaseName(name), warmup: isWarmupName(text), lib: IsLibraryRange(r.domain, r.text)}
			names[k] = nm
		}
		t.ranges = append(t.ranges, rng{start: r.start, end: r.end, gtid: gtid, nm: nm, parent: -1})
	}
	slices.SortFunc(t.ranges, func(a, b rng) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end)) })
	linkParents(t)
	return t
}

func chooseOn(threads ...*threadRanges) choice {
	return newChooser(threads, nil, defaultArmPattern()).choose()
}

// TestStepChoiceByEvidence: the rules a person applies, on the shapes the
// public exports show.
func TestStepChoiceByEvidence(t *testing.T) {
	const us = 1000
	t.Run("library ranges are never the step", func(t *testing.T) {
		// MPI+CUDA: MPI's own domain repeats most; the program's saxpy is the step.
		var rs []synthRange
		for i := range int64(10) {
			rs = append(rs, synthRange{"MPI", "MPI_Send", i * 100 * us, i*100*us + 50*us})
		}
		for i := range int64(5) {
			rs = append(rs, synthRange{"", "saxpy", 2000*us + i*100*us, 2000*us + i*100*us + 10*us})
		}
		ch := chooseOn(synthThreads(1<<24|1, rs...))
		if ch.name != "saxpy" || ch.mode != StepRepeated {
			t.Errorf("step %q (%s), want saxpy", ch.name, ch.mode)
		}
		// Coverage: 5 × 10 µs of the process's traced span, 0 to 2,410 µs.
		if sc := ch.stepChoice(); sc.Coverage != round3(50.0/2410) || sc.RunnerUp != "" {
			t.Errorf("coverage %v, runner-up %q; want %v and none (MPI's ranges are a library's)", sc.Coverage, sc.RunnerUp, round3(50.0/2410))
		}
		// Only aten:: op ranges: no step.
		rs = nil
		for i := range int64(50) {
			rs = append(rs, synthRange{"", "aten::mul, seq = 3, op_id = 9", i * 10 * us, i*10*us + 5*us})
		}
		if ch := chooseOn(synthThreads(1<<24|1, rs...)); ch.name != "" {
			t.Errorf("step %q from aten:: ranges alone, want none", ch.name)
		}
	})
	t.Run("a fixed cycle is one implicit step", func(t *testing.T) {
		// DDP: distributed_training > warmup, then forward pass / backward
		// pass alternating, NCCL's ranges inside.
		rs := []synthRange{{"", "distributed_training", 0, 100000 * us}, {"", "warmup", 10, 999 * us}}
		for i := range int64(20) {
			s := 1000*us + i*4000*us
			rs = append(rs, synthRange{"", "forward pass", s, s + 1000*us}, synthRange{"", "backward pass", s + 1100*us, s + 3000*us},
				synthRange{"NCCL", "ncclAllReduce", s + 1200*us, s + 1300*us}, synthRange{"NCCL", "ncclAllReduce", s + 1400*us, s + 1500*us})
		}
		ch := chooseOn(synthThreads(1<<24|1, rs...))
		if ch.name != "forward pass … backward pass" || ch.mode != StepCycle || ch.n != 20 {
			t.Errorf("step %q (%s, %d), want the forward pass … backward pass cycle, 20 steps", ch.name, ch.mode, ch.n)
		}
		// A frame: the cycle starts after its long pause, wherever the trace starts.
		rs = nil
		names := []string{"bbox_head", "post_processing", "reader", "3D_backbone", "find_centers", "poolformer_forward"}
		at := int64(0)
		for i := range 3 * 6 {
			n := names[i%6]
			if n == "reader" {
				at += 2000 * us
			}
			rs = append(rs, synthRange{"", n, at, at + 100*us})
			at += 110 * us
		}
		ch = chooseOn(synthThreads(1<<24|1, rs...))
		if ch.name != "reader … post_processing" || ch.n != 2 {
			t.Errorf("step %q (%d), want reader … post_processing, 2 complete cycles", ch.name, ch.n)
		}
	})
	t.Run("an outer loop hands the step down", func(t *testing.T) {
		var rs []synthRange
		for i := range int64(3) {
			s := i * 20000 * us
			rs = append(rs, synthRange{"", "Steps", s, s + 10000*us})
			for k := range int64(10) {
				rs = append(rs, synthRange{"", "step", s + k*1000*us, s + k*1000*us + 900*us})
			}
		}
		if ch := chooseOn(synthThreads(1<<24|1, rs...)); ch.name != "step" || ch.mode != StepNested || ch.n != 30 {
			t.Errorf("step %q (%s, %d), want step (nested, 30)", ch.name, ch.mode, ch.n)
		}
	})
	t.Run("a numbered family is the step", func(t *testing.T) {
		var rs []synthRange
		for i := range int64(4) {
			s := i * 10000 * us
			rs = append(rs, synthRange{"", "token_" + string(rune('0'+i)) + "_processing", s, s + 9000*us})
			for k := range int64(6) {
				rs = append(rs, synthRange{"", "layer_" + string(rune('0'+k)) + "_token_" + string(rune('0'+i)), s + k*1000*us, s + k*1000*us + 900*us})
			}
		}
		ch := chooseOn(synthThreads(1<<24|1, rs...))
		if ch.name != "token_N_processing" || ch.mode != StepFamily {
			t.Errorf("step %q (%s), want token_N_processing", ch.name, ch.mode)
		}
		if got := PhaseName("layer_12_token_3"); got != "layer_N_token_N" {
			t.Errorf("PhaseName = %q", got)
		}
	})
}

// TestStepChoiceCoverageFirst: a range that repeats cannot win over one
// that covers far more (issue 36's classes).
func TestStepChoiceCoverageFirst(t *testing.T) {
	const us = 1000
	t.Run("a short repeated range loses to the loop that covers the program", func(t *testing.T) {
		// OpenMP playground: per variant, Initialize (tiny) then Steps
		// holding 10 step ranges; both names repeat equally often.
		var rs []synthRange
		for v, variant := range []string{"team loop", "parallel for", "loop collapse", "sequential"} {
			s := int64(v) * 20000 * us
			rs = append(rs, synthRange{"", variant, s, s + 19000*us}, synthRange{"", "Initialize", s + 10, s + 20*us},
				synthRange{"", "Steps", s + 100*us, s + 18000*us})
			for k := range int64(10) {
				rs = append(rs, synthRange{"", "step", s + 100*us + k*1700*us, s + 100*us + (k+1)*1700*us})
			}
		}
		ch := chooseOn(synthThreads(1<<24|1, rs...))
		if ch.name != "step" || ch.mode != StepNested {
			t.Errorf("step %q (%s), want step (nested in Steps), not Initialize", ch.name, ch.mode)
		}
	})
	t.Run("a layer repeated inside one iteration yields to its container", func(t *testing.T) {
		// profile > forward pass (12 × attention, 5% each), backward pass,
		// optimizer step: the container is the step, measured once.
		rs := []synthRange{{"", "profile", 0, 1000 * us}, {"", "forward pass", 10, 300 * us}, {"", "backward pass", 300 * us, 800 * us},
			{"", "optimizer step", 800 * us, 999 * us}}
		for k := range int64(12) {
			rs = append(rs, synthRange{"", "scaled dot product attention", 20*us + k*20*us, 20*us + k*20*us + 4*us})
		}
		ch := chooseOn(synthThreads(1<<24|1, rs...))
		if ch.name != "profile" || ch.mode != StepSingleRange || ch.over != "scaled dot product attention" {
			t.Errorf("step %q (%s, over %q), want profile, the container", ch.name, ch.mode, ch.over)
		}
		if why := ch.stepChoice().Why; !strings.Contains(why, "less than a quarter") {
			t.Errorf("why %q does not say the rule", why)
		}
	})
	t.Run("the loop inside a container is the step", func(t *testing.T) {
		// main holds 10 iterations covering 40% of it: a quarter or more.
		rs := []synthRange{{"", "main", 0, 1000 * us}, {"", "setup", 10, 590 * us}}
		for k := range int64(10) {
			rs = append(rs, synthRange{"", "iteration", 600*us + k*40*us, 600*us + (k+1)*40*us})
		}
		if ch := chooseOn(synthThreads(1<<24|1, rs...)); ch.name != "iteration" {
			t.Errorf("step %q (%s), want iteration", ch.name, ch.mode)
		}
	})
	t.Run("a range that only wraps one library call is not the step", func(t *testing.T) {
		var rs []synthRange
		for k := range int64(10) {
			s := k * 100 * us
			rs = append(rs, synthRange{"", "compute", s, s + 35*us})
			for j := range int64(2) {
				a := s + 40*us + j*30*us
				rs = append(rs, synthRange{"", "allreduce", a, a + 30*us}, synthRange{"NCCL", "ncclAllReduce", a + 1*us, a + 29*us})
			}
		}
		ch := chooseOn(synthThreads(1<<24|1, rs...))
		if ch.name != "compute" {
			t.Errorf("step %q (%s), want compute: allreduce only wraps ncclAllReduce", ch.name, ch.mode)
		}
	})
	t.Run("warm-up is never the step", func(t *testing.T) {
		var rs []synthRange
		for k := range int64(5) {
			rs = append(rs, synthRange{"", "Warm-up Step " + string(rune('0'+k)), k * 100 * us, (k + 1) * 100 * us})
		}
		rs = append(rs, synthRange{"", "Benchmark Forward Only", 600 * us, 1000 * us})
		for k := range int64(10) {
			rs = append(rs, synthRange{"", "Forward", 600*us + k*40*us, 600*us + k*40*us + 35*us})
		}
		if ch := chooseOn(synthThreads(1<<24|1, rs...)); ch.name != "Forward" {
			t.Errorf("step %q (%s), want Forward, not the warm-up", ch.name, ch.mode)
		}
		for _, n := range []string{"warmup", "Warm-up Step 3", "WARM_UP", "warm up iters"} {
			if !isWarmupName(n) {
				t.Errorf("isWarmupName(%q) = false", n)
			}
		}
	})
}

func TestAnnotationRules(t *testing.T) {
	for _, c := range []struct {
		domain, text string
		lib          bool
	}{
		{"NCCL", "ncclAllReduce", true}, {"", "ncclAllReduce", true}, {"MPI", "MPI_Send", true}, {"libcudf", "null_count", true},
		{"myelin-exec", "myelinTensorGetMemory", true}, {"STDPAR", "for_each", true}, {"", "aten::mul", true},
		{"", "autograd::engine::evaluate_function: PermuteBackward0", true}, {"", "Optimizer.step#SGD.step", true},
		{"", "AddmmBackward0, seq = 12, op_id = 99", true}, {"", "{'traceMarker': ['x.py:3'], 'mod': 'Tensor', 'op': 'cuda'}", true},
		{"", "forward, op_id = 12", false}, {"", "ProfilerStep#3", false}, {"", "ProfilerStep#3, op_id = 1", false},
		// By shape (issue 36): a library's Python domain, in-place and
		// framework operators with an op_id, input sizes, C++-qualified
		// names and source locations.
		{"cudf_python", "DATAFRAME_SETITEM", true}, {"", "detach_, op_id = 7", true}, {"", "detach, op_id = 7", true},
		{"", "record_param_comms, op_id = 5", true}, {"", "flash_attn::_flash_attn_forward, op_id = 9", true},
		{"", "aten::mm, op_id = 4, sizes = [[2, 3], [3, 4]]", true}, {"", "KernelExecutor::compileFusion", true},
		{"", "transform_replay.cpp::getMatchedLeafPosWithoutReplayCasP", true}, {"", "IrContainer clear", false},
		{"", "train_step", false}, {"", "scaled dot product attention", false},
		{"", "collector_step", false}, {"", "saxpy", false}, {"pipeline", "step", false},
	} {
		if got := IsLibraryRange(c.domain, c.text); got != c.lib {
			t.Errorf("IsLibraryRange(%q, %q) = %v, want %v", c.domain, c.text, got, c.lib)
		}
		// Only the qualified code sections stay phases.
		qual := c.lib && (strings.HasPrefix(c.text, "KernelExecutor::") || strings.HasPrefix(c.text, "transform_replay.cpp::"))
		if got := IsQualifiedRange(c.domain, c.text); got != qual {
			t.Errorf("IsQualifiedRange(%q, %q) = %v, want %v", c.domain, c.text, got, qual)
		}
	}
	for in, want := range map[string]string{
		"{'traceMarker': ['a.py:1'], 'mod': 'torch.nn.functional', 'op': 'conv2d', 'args': []}": "F.conv2d",
		"{'mod': 'Tensor', 'op': 'cuda'}": "Tensor.cuda",
		"plain":                           "plain",
	} {
		if got := PayloadName(in); got != want {
			t.Errorf("PayloadName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"3D_backbone": "ND_backbone", "conv2d": "conv2d", "blocks.10.attn": "blocks.N.attn", "fp16": "fp16"} {
		if got := PhaseName(in); got != want {
			t.Errorf("PhaseName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestShareNeverReadsZero: a coverage that is not 0 keeps two significant
// digits below 0.1% (data) and below 1% (words), so a short repeated range
// in a long program is never "0% of traced time" (hpcgroup's saxpy step
// covers 0.011%).
func TestShareNeverReadsZero(t *testing.T) {
	for _, c := range []struct {
		in    float64
		round float64
		pct   string
	}{{0, 0, "0%"}, {0.000114, 0.00011, "0.011%"}, {0.0049, 0.005, "0.49%"}, {0.1764, 0.176, "18%"}, {1, 1, "100%"}} {
		if got := roundShare(c.in); math.Abs(got-c.round) > 1e-12 {
			t.Errorf("roundShare(%v) = %v, want %v", c.in, got, c.round)
		}
		if got := SharePct(c.in); got != c.pct {
			t.Errorf("SharePct(%v) = %q, want %q", c.in, got, c.pct)
		}
	}
}
