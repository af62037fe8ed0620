package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nsysphase/nsysphase/internal/analysis"
)

// AnalysisFlags are the flags of every command that analyses exports,
// bound to the fields of the analysis options themselves: the options the
// Go API fills, with the same defaults (analysis.DefaultOptions), the same
// meaning of given and the same Validate. Files are the command's
// arguments; --config is RulesFile, loaded into Rules by validate.
type AnalysisFlags struct {
	analysis.Options

	flags *pflag.FlagSet // the command's flags: a flag given (Changed) is a given option
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

// addSegmentFlags registers the flags shared by every command that
// segments exports, bound to the analysis options with their defaults.
func addSegmentFlags(cmd *cobra.Command, o *AnalysisFlags) {
	o.Options = analysis.DefaultOptions()
	o.flags = cmd.Flags()
	d, f := &o.Options, cmd.Flags()
	f.StringVar(&d.Step, "step", d.Step, "step range name (default: the name that repeats most inside arm blocks, or at top level)")
	f.IntVar(&d.Depth, "depth", d.Depth, fmt.Sprintf("phase depth below the step (1: direct children; at most %d)", maxDepth))
	f.StringVar(&d.ArmPattern, "arm-pattern", d.ArmPattern, "regexp of arm block ranges; group 1 = arm (required), group 2 = block")
	f.IntVar(&d.SkipSteps, "skip-steps", d.SkipSteps, "warm-up: steps at the start of each block left out of the statistics (kept in phase_instances, flagged)")
	f.StringVar(&d.RulesFile, "config", d.RulesFile, "rules file (TOML or YAML): step, phases, renames, process/thread selection")
	f.Var(fileArms{&d.FileArms}, "arm", "NAME=GLOB: files matching GLOB form arm NAME, one block each (repeatable)")
	f.StringVar(&d.ArmKey, "arm-key", d.ArmKey, "dotted key of the run manifest beside each export that names its arm, e.g. training.cuda_process_sharing")
	f.StringVar(&d.Manifest, "manifest", d.Manifest, "run manifest for a single input (default: NAME.manifest.json beside it)")
	addJobsFlag(cmd, &d.Jobs)
}

// addStatsFlags registers the statistics flags, bound to the analysis
// options with their defaults (after addSegmentFlags); analyze adds
// --quantiles and --no-stats.
func addStatsFlags(cmd *cobra.Command, o *AnalysisFlags, analyze bool) {
	d, f := &o.Options, cmd.Flags()
	f.StringVar(&d.Baseline, "baseline", d.Baseline, "baseline arm of comparisons (default: the arm of the earliest block)")
	f.Float64Var(&d.Confidence, "confidence", d.Confidence, fmt.Sprintf("two-sided confidence level, above 0.5 and at most %g", maxConfidence))
	f.IntVar(&d.Resamples, "resamples", d.Resamples, fmt.Sprintf("bootstrap resamples B (%d to %d)", minResamples, maxResamples))
	f.Uint64Var(&d.Seed, "seed", d.Seed, "random seed: output is byte-identical for a seed")
	if analyze {
		f.BoolVar(&d.Quantiles, "quantiles", d.Quantiles, "also p90/p99 CIs of wall_ns where the data allow them")
		f.BoolVar(&d.NoStats, "no-stats", d.NoStats, "point values only, no confidence intervals (faster)")
	}
}

// fileArms binds the repeatable --arm NAME=GLOB to the options' FileArms.
type fileArms struct{ arms *[]analysis.FileArm }

func (v fileArms) Set(s string) error {
	name, glob, ok := strings.Cut(s, "=")
	if !ok || name == "" || glob == "" {
		return errors.New("want NAME=GLOB")
	}
	*v.arms = append(*v.arms, analysis.FileArm{Name: name, Glob: glob})
	return nil
}

// Type is the value's name in --help, as for the string array it was.
func (v fileArms) Type() string { return "stringArray" }

func (v fileArms) String() string {
	if len(*v.arms) == 0 {
		return "" // no default shown
	}
	s := make([]string, len(*v.arms))
	for i, a := range *v.arms {
		s[i] = a.Name + "=" + a.Glob
	}
	return "[" + strings.Join(s, ",") + "]"
}

// validate checks the options with the analysis options' one Validate,
// after marking the flags given on the command line as given options and
// merging the rules file (--config) into them once: a flag given on the
// command line wins, else the rules file's value, else the flag's default.
// The merged value is the one used and the one reports print.
func (o *AnalysisFlags) validate() error {
	if o.Manifest != "" {
		if err := checkInputFile("--manifest", o.Manifest); err != nil {
			return err
		}
	}
	// A flag given on the command line (flag.Changed) is a given option
	// (analysis.Options.Given, by the flag's name): it wins over a rules file.
	o.flags.Visit(func(fl *pflag.Flag) { o.SetGiven(fl.Name) })
	if o.RulesFile != "" && o.Rules == nil {
		if err := checkInputFile("--config", o.RulesFile); err != nil {
			return err
		}
		rules, err := analysis.LoadRules(o.RulesFile)
		var ue *analysis.UsageError
		switch {
		case errors.As(err, &ue):
			return usageErr("%v", ue.Err)
		case err != nil:
			return &ExitError{Code: ExitInput, Err: err}
		}
		o.MergeRules(rules, o.RulesFile)
	}
	if err := o.Validate(); err != nil {
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

// config is the reading and segmentation part of the options (validate
// has run).
func (o *AnalysisFlags) config() (analysis.Config, error) {
	cfg, err := o.Config()
	if err != nil {
		return cfg, usageErr("%v", err)
	}
	return cfg, nil
}
