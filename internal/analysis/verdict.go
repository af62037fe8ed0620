package analysis

import (
	"fmt"
	"strings"

	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// Decision is the verdict of `nsysphase verdict` on capturing a region.
type Decision string

// Verdicts of `nsysphase verdict`.
const (
	VerdictGo           Decision = "go"
	VerdictNoGo         Decision = "no-go"
	VerdictInconclusive Decision = "inconclusive"
)

// ArmGain is the measured step-wall gain of an arm over the verdict's arm,
// from the same comparison analyze reports (phase = the step, wall_ns mean).
type ArmGain struct {
	Arm      string      `json:"arm"`
	Baseline string      `json:"baseline"`
	Gain     *float64    `json:"gain"` // 1 − arm/baseline mean step wall: 0.25 = 25% shorter steps
	GainCI   *[2]float64 `json:"gain_ci"`
	DiffNs   float64     `json:"diff_ns"` // arm − baseline mean step wall, ns per step (negative: shorter)
	DiffCI   *[2]float64 `json:"diff_ci"`
	stats.RatioEstimate
	Significant bool   `json:"significant"`
	Method      string `json:"method"`
	NUnits      int    `json:"n_units"`
}

// Verdict is the result of `nsysphase verdict`.
type Verdict struct {
	Inputs      []string      `json:"inputs"`
	Step        string        `json:"step"`
	Phases      []string      `json:"phases"`
	Arm         string        `json:"arm"` // where the overhead was measured
	MinGain     float64       `json:"min_gain"`
	Verdict     Decision      `json:"verdict"`
	Reason      string        `json:"reason"`
	Removable   Share         `json:"removable_share"` // Σ removable_ns / Σ step wall_ns over the kept steps
	RemovableNs Estimate      `json:"removable_ns"`    // the bounded saving per step (Bound.RemovableNs)
	StepWallNs  Estimate      `json:"step_wall_ns"`
	Bound       *CaptureBound `json:"bound"` // the bound's parts, phases and replay cost
	// HostUpperNs is launch_ns + cpu_other_ns of every region phase per
	// step (boundary's saving_ns): the estimate before the bound.
	HostUpperNs Estimate  `json:"host_upper_ns"`
	Definition  string    `json:"definition"`
	Capturable  bool      `json:"capturable"` // the region has no blocker in this arm
	Blockers    []Blocker `json:"blockers"`
	ArmGains    []ArmGain `json:"arm_gains"`
	Settings    Settings  `json:"settings"`
	Mismatches  []string  `json:"mismatches"`
	Warnings    []Warning `json:"warnings"`
}

// BuildVerdict decides whether capturing the region is worth at least
// minGain of step wall, from the bounded saving (BoundDefinition):
// go when the CI's lower bound reaches it, no-go when the upper bound stays
// below it, inconclusive otherwise. The overhead is measured in the arm
// o.Baseline, else in the first arm that has the phases.
func BuildVerdict(files []*FileResult, frames Frames, region []string, minGain float64, o Options) (*Verdict, error) {
	b, err := BuildBoundary(files, frames, region, o)
	if err != nil {
		return nil, err
	}
	arm := b.ArmOrder[0]
	if o.Baseline != "" {
		if b.Arms[o.Baseline] == nil {
			return nil, &UsageError{Err: fmt.Errorf("--baseline %q has none of the phases %s (arms with them: %s)", o.Baseline, strings.Join(region, ","), strings.Join(b.ArmOrder, ", "))}
		}
		arm = o.Baseline
	}
	ba := b.Arms[arm]
	if ba.Bound == nil {
		return nil, &UsageError{Err: fmt.Errorf("--phases %s: arm %s has no kept step to measure (lower --skip-steps)", strings.Join(region, ","), arm)}
	}
	v := &Verdict{Inputs: b.Inputs, Step: b.Step, Phases: b.Phases, Arm: arm, MinGain: minGain, Removable: ba.Bound.RemovableShare,
		RemovableNs: ba.Bound.RemovableNs, StepWallNs: ba.Bound.StepWallNs, Bound: ba.Bound, HostUpperNs: ba.SavingNs,
		Definition: "removable_share = Σ removable_ns / Σ step wall_ns over the kept steps; " + BoundDefinition,
		Capturable: ba.Capturable, Blockers: []Blocker{}, ArmGains: []ArmGain{}, Settings: b.Settings, Mismatches: b.Mismatches, Warnings: b.Warnings}
	for _, bl := range b.Blockers {
		if bl.Arm == arm {
			v.Blockers = append(v.Blockers, bl)
		}
	}
	v.Verdict, v.Reason = decide(v, b.Settings.Confidence)
	gains, err := armGains(files, b.unitStart, b.Step, arm, &o)
	if err != nil {
		return nil, err
	}
	v.ArmGains = gains
	return v, nil
}

// ArmName is an arm's name for a sentence: "the run" for the one arm of
// inputs without arm ranges or file arms (phases.SingleArm).
func ArmName(arm string) string {
	if arm == "" || arm == phases.SingleArm {
		return "the run"
	}
	return arm
}

// decide applies the rule to the share's CI and says why in one sentence.
func decide(v *Verdict, confidence float64) (Decision, string) {
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	what := fmt.Sprintf("capturing %s removes at most %s of %s's step wall", strings.Join(v.Phases, ","), pct(v.Removable.Value), ArmName(v.Arm))
	const how = "the host time of its phases that launch GPU work and hold no blocker, within step wall − GPU floor − graph replay"
	if b := v.Bound; b != nil && b.Steps > 0 && b.RemovableNs.Mean == 0 {
		// removable_ns ≥ 0 in every step, so a zero mean is zero in each:
		// measured, without spread, below any minimum gain.
		var why []string
		for _, ph := range b.Phases {
			switch ph.Status {
			case CaptureNoLaunch:
				why = append(why, ph.Phase+" launches nothing")
			case CaptureBlocked:
				why = append(why, ph.Phase+" holds "+strings.Join(ph.Blockers, ", "))
			}
		}
		if len(why) == 0 {
			why = append(why, "the GPU floor and the replay leave no room")
		}
		// The sentence says what is removable now (nothing, below the
		// minimum gain) before what fixing the blockers would make
		// removable: never a share next to "below the minimum" that is above it.
		fixed := ""
		if b.RemovableIfFixedNs.Mean > 0 && b.StepWallNs.Mean > 0 {
			fixed = fmt.Sprintf("; fix the blockers first: then %.1f µs per step (%s of the mean step wall) would be removable", b.RemovableIfFixedNs.Mean/1e3, pct(b.RemovableIfFixedNs.Mean/b.StepWallNs.Mean))
		}
		return VerdictNoGo, fmt.Sprintf("capturing %s removes nothing in %s as it stands, in any of its %d %s (%s): 0%%, below the %s minimum gain%s",
			strings.Join(v.Phases, ","), ArmName(v.Arm), b.Steps, plural.Of(b.Steps, "step", "steps"), strings.Join(why, "; "), pct(v.MinGain), fixed)
	}
	ci := v.Removable.CI
	if ci == nil {
		return VerdictInconclusive, fmt.Sprintf("%s (%s), but there is no confidence interval (%s): %s to decide against the %s minimum gain", what, how, v.Removable.Method, moreData(v), pct(v.MinGain))
	}
	level := fmt.Sprintf("%g%% CI %s–%s; %s", 100*confidence, pct(ci[0]), pct(ci[1]), how)
	switch {
	case ci[0] >= v.MinGain:
		return VerdictGo, fmt.Sprintf("%s (%s): even the lower bound reaches the %s minimum gain", what, level, pct(v.MinGain))
	case ci[1] < v.MinGain:
		return VerdictNoGo, fmt.Sprintf("%s (%s): even the upper bound stays below the %s minimum gain", what, level, pct(v.MinGain))
	}
	return VerdictInconclusive, fmt.Sprintf("%s (%s): the interval straddles the %s minimum gain; record more blocks to decide", what, level, pct(v.MinGain))
}

// moreData is the advice that can give a verdict an interval: the unit is
// the block or the profile, so with one of them more steps cannot help.
func moreData(v *Verdict) string {
	if b := v.Bound; b != nil && b.Units < 2 {
		return fmt.Sprintf("%d %s, and more steps cannot give an interval between them: record more runs (profiles) or arm blocks", b.Units, plural.Of(b.Units, "block or profile", "blocks or profiles"))
	}
	return "record more blocks or runs"
}

// armGains compares every other arm's step wall with arm's, as analyze does
// for the step (same units, options and random streams).
func armGains(files []*FileResult, unitStart map[phases.UnitID]int64, step, arm string, o *Options) ([]ArmGain, error) {
	out := []ArmGain{}
	arms := map[string]bool{}
	for _, fr := range files {
		st := fr.Result.InstanceStore()
		for i := range st.Len() {
			arms[st.Arm(i)] = true
		}
	}
	if len(arms) < 2 {
		return out, nil
	}
	units := Units(allInstances(files), []string{step}, unitStart).Units(0)
	opt := o.statsOptions(arm, []int{int(phases.Wall)}, true)
	opt.Decompose = &stats.Decomposition{Total: int(phases.Wall), Parts: wallPartInts()}
	res, err := stats.Analyze(step, MetricNames(), units, opt)
	if err != nil {
		return nil, fmt.Errorf("statistics of step %q: %w", step, err)
	}
	for _, c := range res.Comparisons {
		if c.Metric != phases.Wall.Name() || c.Stat != stats.StatMean {
			continue
		}
		g := ArmGain{Arm: c.Arm, Baseline: c.Baseline, RatioEstimate: c.RatioEstimate, DiffNs: c.Diff, DiffCI: c.DiffCI,
			Significant: c.Significant, Method: c.Method, NUnits: c.NUnits}
		if c.Ratio != nil {
			v := 1 - *c.Ratio
			g.Gain = &v
		}
		if c.RatioCI != nil {
			g.GainCI = &[2]float64{1 - c.RatioCI[1], 1 - c.RatioCI[0]}
		}
		out = append(out, g)
	}
	return out, nil
}
