package cli

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/phases"
)

// SegmentOptions are the flags of every command that segments exports into
// arms, blocks, steps and phases; Files are the command's arguments.
type SegmentOptions struct {
	Files      []string
	Step       string
	Depth      int
	ArmPattern string
	SkipSteps  int
	Config     string
	Arms       []string
	ArmKey     string
	Manifest   string
	Jobs       int

	rules   *phases.Rules          // --config, loaded by validate, less what merge took
	changed func(flag string) bool // whether a flag was given on the command line
}

// Bounds of the numeric flags, checked before any input is read: a value
// outside them is a usage error (exit 2), never clamped, so that the value
// a report echoes is the value used.
const (
	maxDepth     = 100       // --depth: NVTX nesting below the step
	maxSkipSteps = 1_000_000 // --skip-steps: more steps than any capture holds
	maxJobs      = 1024      // --jobs: files read in parallel
	minResamples = 1999      // --resamples: stable 95% interval endpoints
	maxResamples = 1_000_000 // --resamples: beyond, time and memory grow with no gain
	// maxConfidence leaves at least one resample in each tail at the
	// smallest B: (1 − 0.999)/2 × (1999 + 1) = 1.
	maxConfidence = 0.999
)

// addSegmentFlags registers the flags shared by every command that segments exports.
func addSegmentFlags(cmd *cobra.Command, o *SegmentOptions) {
	f := cmd.Flags()
	f.StringVar(&o.Step, "step", "", "step range name (default: the name that repeats most inside arm blocks, or at top level)")
	f.IntVar(&o.Depth, "depth", 1, fmt.Sprintf("phase depth below the step (1: direct children; at most %d)", maxDepth))
	f.StringVar(&o.ArmPattern, "arm-pattern", phases.DefaultArmPattern, "regexp of arm block ranges; group 1 = arm (required), group 2 = block")
	f.IntVar(&o.SkipSteps, "skip-steps", 1, "warm-up: steps at the start of each block left out of the statistics (kept in phase_instances, flagged)")
	f.StringVar(&o.Config, "config", "", "rules file (TOML or YAML): step, phases, renames, process/thread selection")
	f.StringArrayVar(&o.Arms, "arm", nil, "NAME=GLOB: files matching GLOB form arm NAME, one block each (repeatable)")
	f.StringVar(&o.ArmKey, "arm-key", "", "dotted key of the run manifest beside each export that names its arm, e.g. training.cuda_process_sharing")
	f.StringVar(&o.Manifest, "manifest", "", "run manifest for a single input (default: NAME.manifest.json beside it)")
	f.IntVarP(&o.Jobs, "jobs", "j", 0, fmt.Sprintf("files read in parallel, at most %d (default: number of CPUs)", maxJobs))
	o.changed = func(name string) bool {
		fl := f.Lookup(name)
		return fl != nil && fl.Changed
	}
}

func (o *SegmentOptions) validate() error {
	if len(o.Files) == 0 && len(o.Arms) == 0 {
		return usageErr("no input: pass export files (or --arm NAME=GLOB)")
	}
	if o.Depth < 1 || o.Depth > maxDepth {
		return usageErr("--depth %d: want 1 to %d", o.Depth, maxDepth)
	}
	if o.SkipSteps < 0 || o.SkipSteps > maxSkipSteps {
		return usageErr("--skip-steps %d: want 0 to %d", o.SkipSteps, maxSkipSteps)
	}
	if o.Jobs < 0 || o.Jobs > maxJobs {
		return usageErr("--jobs %d: want 0 (one per CPU) to %d", o.Jobs, maxJobs)
	}
	if err := checkArmPattern("--arm-pattern", o.ArmPattern); err != nil {
		return err
	}
	if o.Manifest != "" {
		if err := checkInputFile("--manifest", o.Manifest); err != nil {
			return err
		}
	}
	if o.Config != "" {
		if err := checkInputFile("--config", o.Config); err != nil {
			return err
		}
		rules, err := phases.LoadRules(o.Config)
		if err != nil {
			return &ExitError{Code: ExitInput, Err: fmt.Errorf("%s: %w", o.Config, err)}
		}
		if rules.ArmPattern != "" {
			if err := checkArmPattern(o.Config+": arm_pattern", rules.ArmPattern); err != nil {
				return err
			}
		}
		if rules.Depth > maxDepth {
			return usageErr("%s: depth %d: want 1 to %d", o.Config, rules.Depth, maxDepth)
		}
		if rules.SkipSteps != nil && *rules.SkipSteps > maxSkipSteps {
			return usageErr("%s: skip_steps %d: want 0 to %d", o.Config, *rules.SkipSteps, maxSkipSteps)
		}
		o.mergeRules(rules)
	}
	return nil
}

// mergeRules merges the rules file's depth, arm_pattern and skip_steps
// into the options, once: a flag given on the command line wins, else the
// rules file's value, else the flag's default. The merged value is the one
// used and the one reports print (--skip-steps 0 used to print 0 while a
// rule skipped 3, and the flag's default 1 hid skip_steps = 3).
func (o *SegmentOptions) mergeRules(rules *phases.Rules) {
	given := func(name string) bool { return o.changed != nil && o.changed(name) }
	if rules.SkipSteps != nil && !given("skip-steps") {
		o.SkipSteps = *rules.SkipSteps
	}
	if rules.Depth > 0 && !given("depth") {
		o.Depth = rules.Depth
	}
	if rules.ArmPattern != "" && !given("arm-pattern") {
		o.ArmPattern = rules.ArmPattern
	}
	o.rules = rules.WithoutOptions()
}

// checkArmPattern refuses an arm pattern that does not compile or has no
// capture group: group 1 names the arm.
func checkArmPattern(what, pattern string) error {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return usageErr("%s: %v", what, err)
	}
	if re.NumSubexp() < 1 {
		return usageErr("%s %q has no capture group: group 1 must capture the arm name, e.g. %s", what, pattern, phases.DefaultArmPattern)
	}
	return nil
}

// checkInputFile refuses a file flag naming a directory, FIFO or device:
// reading a FIFO would wait forever for a writer.
func checkInputFile(flag, path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil // the reader names a missing or unreadable file
	}
	if !st.Mode().IsRegular() {
		return usageErr("%s %s is not a regular file: pass a file", flag, path)
	}
	return nil
}

// config turns flags into the analysis configuration.
func (o *SegmentOptions) config() (analysis.Config, error) {
	pat, err := regexp.Compile(o.ArmPattern)
	if err != nil {
		return analysis.Config{}, usageErr("--arm-pattern: %v", err)
	}
	seg := phases.Options{ArmPattern: pat, Step: o.Step, Depth: o.Depth, SkipSteps: o.SkipSteps}
	if o.Config != "" {
		rules := o.rules
		if rules == nil { // validate not run (a caller building options by hand)
			var err error
			if rules, err = phases.LoadRules(o.Config); err != nil {
				return analysis.Config{}, &ExitError{Code: ExitInput, Err: fmt.Errorf("%s: %w", o.Config, err)}
			}
		}
		seg.Rules = rules
	}
	var arms []analysis.FileArm
	for _, a := range o.Arms {
		name, glob, ok := strings.Cut(a, "=")
		if !ok || name == "" || glob == "" {
			return analysis.Config{}, usageErr("--arm %q: want NAME=GLOB", a)
		}
		arms = append(arms, analysis.FileArm{Name: name, Glob: glob})
	}
	return analysis.Config{Files: o.Files, FileArms: arms, ArmKey: o.ArmKey, Manifest: o.Manifest, Segment: seg, Jobs: o.Jobs}, nil
}

// StatsOptions are the statistics flags.
type StatsOptions struct {
	Baseline   string
	Confidence float64
	Resamples  int
	Seed       uint64
	Quantiles  bool
}

// addStatsFlags registers the statistics flags; quantiles adds --quantiles.
func addStatsFlags(cmd *cobra.Command, o *StatsOptions, quantiles bool) {
	f := cmd.Flags()
	f.StringVar(&o.Baseline, "baseline", "", "baseline arm of comparisons (default: the arm of the earliest block)")
	f.Float64Var(&o.Confidence, "confidence", 0.95, fmt.Sprintf("two-sided confidence level, above 0.5 and at most %g", maxConfidence))
	f.IntVar(&o.Resamples, "resamples", 9999, fmt.Sprintf("bootstrap resamples B (%d to %d)", minResamples, maxResamples))
	f.Uint64Var(&o.Seed, "seed", 1, "random seed: output is byte-identical for a seed")
	if quantiles {
		f.BoolVar(&o.Quantiles, "quantiles", false, "also p90/p99 CIs of wall_ns where the data allow them")
	}
}

func (o *StatsOptions) validate() error {
	if o.Resamples < minResamples {
		return usageErr("--resamples %d: at least %d are needed for stable 95%% interval endpoints", o.Resamples, minResamples)
	}
	if o.Resamples > maxResamples {
		return usageErr("--resamples %d: at most %d (more add time and memory, not precision)", o.Resamples, maxResamples)
	}
	if !(o.Confidence > 0.5 && o.Confidence <= maxConfidence) {
		return usageErr("--confidence %v: want a level above 0.5 and at most %g, e.g. 0.95", o.Confidence, maxConfidence)
	}
	return nil
}

func (o *StatsOptions) statsConfig(off bool) analysis.StatsConfig {
	return analysis.StatsConfig{Confidence: o.Confidence, Resamples: o.Resamples, Seed: o.Seed, Baseline: o.Baseline, Quantiles: o.Quantiles, Off: off}
}
