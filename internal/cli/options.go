package cli

import (
	"fmt"
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
}

// addSegmentFlags registers the flags shared by every command that segments exports.
func addSegmentFlags(cmd *cobra.Command, o *SegmentOptions) {
	f := cmd.Flags()
	f.StringVar(&o.Step, "step", "", "step range name (default: the name that repeats most inside arm blocks, or at top level)")
	f.IntVar(&o.Depth, "depth", 1, "phase depth below the step (1: direct children)")
	f.StringVar(&o.ArmPattern, "arm-pattern", phases.DefaultArmPattern, "regexp of arm block ranges; group 1 = arm, group 2 = block")
	f.IntVar(&o.SkipSteps, "skip-steps", 1, "warm-up: steps at the start of each block left out of the statistics (kept in phase_instances, flagged)")
	f.StringVar(&o.Config, "config", "", "rules file (TOML or YAML): step, phases, renames, process/thread selection")
	f.StringArrayVar(&o.Arms, "arm", nil, "NAME=GLOB: files matching GLOB form arm NAME, one block each (repeatable)")
	f.StringVar(&o.ArmKey, "arm-key", "", "dotted key of the run manifest beside each export that names its arm, e.g. training.cuda_process_sharing")
	f.StringVar(&o.Manifest, "manifest", "", "run manifest for a single input (default: NAME.manifest.json beside it)")
	f.IntVarP(&o.Jobs, "jobs", "j", 0, "files read in parallel (default: number of CPUs)")
}

func (o *SegmentOptions) validate() error {
	if len(o.Files) == 0 && len(o.Arms) == 0 {
		return usageErr("no input: pass export files (or --arm NAME=GLOB)")
	}
	if o.Depth < 1 {
		return usageErr("--depth %d: want ≥ 1", o.Depth)
	}
	if o.SkipSteps < 0 {
		return usageErr("--skip-steps %d: want ≥ 0", o.SkipSteps)
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
		rules, err := phases.LoadRules(o.Config)
		if err != nil {
			return analysis.Config{}, &ExitError{Code: ExitInput, Err: fmt.Errorf("%s: %w", o.Config, err)}
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
	f.Float64Var(&o.Confidence, "confidence", 0.95, "two-sided confidence level")
	f.IntVar(&o.Resamples, "resamples", 9999, "bootstrap resamples B (at least 1999)")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed: output is byte-identical for a seed")
	if quantiles {
		f.BoolVar(&o.Quantiles, "quantiles", false, "also p90/p99 CIs of wall_ns where the data allow them")
	}
}

func (o *StatsOptions) validate() error {
	if o.Resamples < 1999 {
		return usageErr("--resamples %d: at least 1999 are needed for stable 95%% interval endpoints", o.Resamples)
	}
	if !(o.Confidence > 0.5 && o.Confidence < 1) {
		return usageErr("--confidence %v: want a level between 0.5 and 1, e.g. 0.95", o.Confidence)
	}
	return nil
}

func (o *StatsOptions) statsConfig(off bool) analysis.StatsConfig {
	return analysis.StatsConfig{Confidence: o.Confidence, Resamples: o.Resamples, Seed: o.Seed, Baseline: o.Baseline, Quantiles: o.Quantiles, Off: off}
}
