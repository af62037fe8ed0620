package phases

import (
	"fmt"
	"regexp"
	"strings"
)

// torchIDs are the per-call ids PyTorch's emit_nvtx and record_function add
// to range names ("aten::copy_, seq = 12, op_id = 991065", ", sizes = [[2,
// 3]]"): every call gets new ones, so phases are grouped without them.
var torchIDs = regexp.MustCompile(`,?\s*\b(?:seq|op_id)\s*=\s*\d+|,?\s*\b(?:input_op_ids|sizes)\s*=\s*\[.*\]`)

// StripTorchIDs removes PyTorch's per-call ids from a range name.
func StripTorchIDs(name string) string {
	if !strings.Contains(name, "=") {
		return name
	}
	return strings.TrimSpace(torchIDs.ReplaceAllString(name, ""))
}

// familyNumber is a number that indexes a range name: a digit run that
// stands alone (after a space, '#', '_', '-', '=', ':' or at the start; before
// the end, a space or punctuation), as in "ProfilerStep#12", "iteration 12",
// "step_5", "Inner Level 3", "Batch 7", "epoch 2 step 40". Digits inside a
// word ("conv2d", "fp16", "layer1") are part of the name.
var familyNumber = regexp.MustCompile(`(^|[\s#_\-=:])\d+($|[\s,;:)\]/_\-])`)

// FamilyOf returns the numbered-family name of a range name, every
// standalone number replaced by N ("ProfilerStep#12" → "ProfilerStep#N"),
// or the name itself when it holds no such number.
func FamilyOf(name string) string {
	if !strings.ContainsAny(name, "0123456789") {
		return name
	}
	// Twice: adjacent matches share a separator ("epoch 2 3").
	out := familyNumber.ReplaceAllString(name, "${1}N${2}")
	return familyNumber.ReplaceAllString(out, "${1}N${2}")
}

// Step choice modes (StepChoice.Mode).
const (
	StepGiven        = "given"         // --step or the rules file named it
	StepRepeated     = "repeated"      // the range name that repeats most
	StepFamily       = "family"        // a numbered family ("ProfilerStep#N") that repeats most
	StepSingleShot   = "single_shot"   // no range repeats: each range is a phase with n = 1
	StepWholeProcess = "whole_process" // no NVTX ranges: each process's CUDA activity is one phase
)

// WholeProcess is the step name of the single-shot and no-NVTX fallbacks:
// one instance per thread (single shot) or per process (no NVTX ranges).
const WholeProcess = "whole process"

// StepChoice says how the step was chosen, so a user can correct it.
type StepChoice struct {
	Mode  string `json:"mode"`  // one of the Step* modes
	Step  string `json:"step"`  // the step name or family
	Count int    `json:"count"` // instances of the step that decided the choice
	Why   string `json:"why"`   // one sentence, ending with how to override
}

func (c StepChoice) String() string { return c.Why }

func choiceRepeated(step string, n int, family, inArms bool) StepChoice {
	where := "at the top of a thread's range tree"
	if inArms {
		where = "inside arm blocks"
	}
	if family {
		return StepChoice{Mode: StepFamily, Step: step, Count: n,
			Why: fmt.Sprintf("step %q: the numbered range family that repeats most %s (%d instances; each keeps its own name as step_label); override with --step NAME", step, where, n)}
	}
	return StepChoice{Mode: StepRepeated, Step: step, Count: n,
		Why: fmt.Sprintf("step %q: the range name that repeats most %s (%d instances); override with --step NAME", step, where, n)}
}
