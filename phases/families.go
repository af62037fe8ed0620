package phases

import (
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
	// Rule is the rule that chose the step, in words ("numbered family").
	Rule string `json:"rule"`
	// Coverage is the share of the step's processes' traced time (first to
	// last NVTX range, or CUDA call where the step is the whole process)
	// inside its instances.
	Coverage float64 `json:"coverage"`
	// RunnerUp is the best user candidate not chosen ("" when none).
	RunnerUp string `json:"runner_up"`
	// Candidates are the top candidates, best first, with their scores.
	Candidates []Candidate `json:"candidates"`
}

// RuleText names each mode's rule for people.
func RuleText(mode string) string {
	switch mode {
	case StepGiven:
		return "named by --step or the rules file"
	case StepRepeated:
		return "repeats most"
	case StepFamily:
		return "numbered family"
	case StepCycle:
		return "fixed cycle of ranges"
	case StepNested:
		return "repeated inside an outer loop"
	case StepSingleRange:
		return "one range encloses the work"
	case StepSingleShot:
		return "nothing repeats"
	case StepWholeProcess:
		return "no usable step annotation"
	}
	return mode
}

func (c StepChoice) String() string { return c.Why }

// phaseNumber is a number inside a phase name: a digit run at the start or
// after a separator, whatever follows ("layer_3_token_0", "3D_backbone",
// "blocks.10.attn"). Digits after a letter ("conv2d", "fp16", "layer1") are
// part of the name.
var phaseNumber = regexp.MustCompile(`(^|[\s#_\-=:./\[(])\d+`)

// PhaseName folds the numbers of a phase name to N, so the phases of a step
// stay few: "layer_0_token_0" … "layer_31_token_0" are one phase
// "layer_N_token_N".
func PhaseName(name string) string {
	if !strings.ContainsAny(name, "0123456789") {
		return name
	}
	return phaseNumber.ReplaceAllString(name, "${1}N")
}
