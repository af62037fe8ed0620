package cli

import (
	"errors"
	"fmt"
	"os"
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

// Bounds of the numeric flags: the analysis options' own (one set for the
// command line and the Go API).
const (
	maxDepth      = analysis.MaxDepth
	maxJobs       = analysis.MaxJobs
	minResamples  = analysis.MinResamples
	maxResamples  = analysis.MaxResamples
	maxConfidence = analysis.MaxConfidence
)

// segmentFlagNames are the segmentation flags that are options of an
// analysis: given on the command line, they are given options
// (analysis.Options.Given) and win over a rules file.
var segmentFlagNames = []string{"step", "depth", "arm-pattern", "skip-steps", "arm", "arm-key", "manifest", "jobs"}

// addSegmentFlags registers the flags shared by every command that
// segments exports, with the analysis options' defaults.
func addSegmentFlags(cmd *cobra.Command, o *SegmentOptions) {
	d := analysis.DefaultOptions()
	f := cmd.Flags()
	f.StringVar(&o.Step, "step", d.Step, "step range name (default: the name that repeats most inside arm blocks, or at top level)")
	f.IntVar(&o.Depth, "depth", d.Depth, fmt.Sprintf("phase depth below the step (1: direct children; at most %d)", maxDepth))
	f.StringVar(&o.ArmPattern, "arm-pattern", d.ArmPattern, "regexp of arm block ranges; group 1 = arm (required), group 2 = block")
	f.IntVar(&o.SkipSteps, "skip-steps", d.SkipSteps, "warm-up: steps at the start of each block left out of the statistics (kept in phase_instances, flagged)")
	f.StringVar(&o.Config, "config", "", "rules file (TOML or YAML): step, phases, renames, process/thread selection")
	f.StringArrayVar(&o.Arms, "arm", nil, "NAME=GLOB: files matching GLOB form arm NAME, one block each (repeatable)")
	f.StringVar(&o.ArmKey, "arm-key", d.ArmKey, "dotted key of the run manifest beside each export that names its arm, e.g. training.cuda_process_sharing")
	f.StringVar(&o.Manifest, "manifest", d.Manifest, "run manifest for a single input (default: NAME.manifest.json beside it)")
	addJobsFlag(cmd, &o.Jobs)
	o.changed = func(name string) bool {
		fl := f.Lookup(name)
		return fl != nil && fl.Changed
	}
}

// options are the flags as the analysis options: the defaults, every flag's
// value over them, the flags given on the command line marked given, and
// the statistics flags where st is not nil (else their defaults).
func (o *SegmentOptions) options(st *StatsOptions) (analysis.Options, error) {
	ao := analysis.DefaultOptions()
	ao.Files, ao.ArmKey, ao.Manifest, ao.Jobs = o.Files, o.ArmKey, o.Manifest, o.Jobs
	ao.Step, ao.Depth, ao.ArmPattern, ao.SkipSteps = o.Step, o.Depth, o.ArmPattern, o.SkipSteps
	ao.Rules, ao.RulesFile = o.rules, o.Config
	for _, a := range o.Arms {
		name, glob, ok := strings.Cut(a, "=")
		if !ok || name == "" || glob == "" {
			return ao, usageErr("--arm %q: want NAME=GLOB", a)
		}
		ao.FileArms = append(ao.FileArms, analysis.FileArm{Name: name, Glob: glob})
	}
	if o.changed != nil {
		for _, name := range segmentFlagNames {
			if o.changed(name) {
				ao.SetGiven(name)
			}
		}
	}
	if st != nil {
		st.fill(&ao)
	}
	return ao, nil
}

// validate checks the flags (st: the statistics flags, nil for a command
// without them) with the analysis options' one Validate, after merging the
// rules file (--config) into them once: a flag given on the command line
// wins, else the rules file's value, else the flag's default. The merged
// value is the one used and the one reports print.
func (o *SegmentOptions) validate(st *StatsOptions) error {
	if o.Manifest != "" {
		if err := checkInputFile("--manifest", o.Manifest); err != nil {
			return err
		}
	}
	ao, err := o.options(st)
	if err != nil {
		return err
	}
	if o.Config != "" && o.rules == nil {
		if err := checkInputFile("--config", o.Config); err != nil {
			return err
		}
		rules, err := analysis.LoadRules(o.Config)
		var ue *analysis.UsageError
		switch {
		case errors.As(err, &ue):
			return usageErr("%v", ue.Err)
		case err != nil:
			return &ExitError{Code: ExitInput, Err: err}
		}
		ao.MergeRules(rules, o.Config)
		o.Depth, o.ArmPattern, o.SkipSteps, o.rules = ao.Depth, ao.ArmPattern, ao.SkipSteps, ao.Rules
	}
	if err := ao.Validate(); err != nil {
		return usageErr("%v", err)
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
	if o.Config != "" && o.rules == nil { // validate not run (a caller building options by hand)
		rules, err := analysis.LoadRules(o.Config)
		if err != nil {
			return analysis.Config{}, &ExitError{Code: ExitInput, Err: err}
		}
		o.rules = rules
	}
	ao, err := o.options(nil)
	if err != nil {
		return analysis.Config{}, err
	}
	cfg, err := ao.Config()
	if err != nil {
		return cfg, usageErr("%v", err)
	}
	return cfg, nil
}

// StatsOptions are the statistics flags.
type StatsOptions struct {
	Baseline   string
	Confidence float64
	Resamples  int
	Seed       uint64
	Quantiles  bool
}

// addStatsFlags registers the statistics flags, with the analysis
// options' defaults; quantiles adds --quantiles.
func addStatsFlags(cmd *cobra.Command, o *StatsOptions, quantiles bool) {
	d := analysis.DefaultOptions()
	f := cmd.Flags()
	f.StringVar(&o.Baseline, "baseline", d.Baseline, "baseline arm of comparisons (default: the arm of the earliest block)")
	f.Float64Var(&o.Confidence, "confidence", d.Confidence, fmt.Sprintf("two-sided confidence level, above 0.5 and at most %g", maxConfidence))
	f.IntVar(&o.Resamples, "resamples", d.Resamples, fmt.Sprintf("bootstrap resamples B (%d to %d)", minResamples, maxResamples))
	f.Uint64Var(&o.Seed, "seed", d.Seed, "random seed: output is byte-identical for a seed")
	if quantiles {
		f.BoolVar(&o.Quantiles, "quantiles", d.Quantiles, "also p90/p99 CIs of wall_ns where the data allow them")
	}
}

// fill sets the statistics part of the analysis options from the flags.
func (o *StatsOptions) fill(ao *analysis.Options) {
	ao.Baseline, ao.Confidence, ao.Resamples, ao.Seed, ao.Quantiles = o.Baseline, o.Confidence, o.Resamples, o.Seed, o.Quantiles
}

// statsConfig is the statistics part of the analysis options the flags
// set; off: point values only.
func (o *StatsOptions) statsConfig(off bool) analysis.StatsConfig {
	ao := analysis.DefaultOptions()
	o.fill(&ao)
	ao.NoStats = off
	return ao.StatsConfig()
}
