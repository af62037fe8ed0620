package analysis

import (
	"fmt"
	"regexp"

	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// Options are every setting of an analysis, whichever front end sets them:
// the command line (internal/cli) binds its flags to these fields and the
// Go API (package nsysphase) fills them; both merge a rules file into them
// with MergeRules and check them with Validate, so both accept the same
// values and print the value they used. Every stage of an analysis takes
// them whole (Build, BuildBoundary, BuildVerdict, BuildInventory,
// HistoryFromFiles, and internal/dataset's Build and LoadHistory), never a
// setting of them loose.
type Options struct {
	// Inputs and how they are read.
	Files    []string  // exports (paths or globs)
	FileArms []FileArm // arms from files; their files are inputs too
	ArmKey   string    // dotted key into each export's run manifest naming its arm
	Manifest string    // run manifest of a single input ("" = NAME.manifest.json beside it)
	Jobs     int       // files read in parallel (0 = one per CPU)

	// Segmentation.
	Step       string        // step range name ("" = chosen from the ranges)
	Depth      int           // phase depth below the step (1: the step's children)
	ArmPattern string        // regexp of arm block ranges; group 1 = arm, group 2 = block
	SkipSteps  int           // warm-up steps left out at the start of each block, per process
	Rules      *phases.Rules // a rules file, loaded (its depth, arm pattern and skip steps merged by MergeRules)
	RulesFile  string        // the rules file's path, for messages

	// Statistics.
	Baseline   string  // baseline arm ("" = the arm of the earliest block)
	Confidence float64 // two-sided confidence level
	Resamples  int     // bootstrap resamples B
	Seed       uint64  // random seed: same inputs and seed, same numbers
	Quantiles  bool    // p90/p99 intervals of wall time where allowed
	NoStats    bool    // point values only, no intervals

	// Datasets: the inputs are dataset directories (--from), which hold
	// instances already segmented, so the segmentation options do not
	// apply and Validate leaves them alone.
	Datasets bool

	// given are the options set explicitly, by their command-line names
	// ("depth", "skip-steps", …): a flag given on the command line, a
	// setter of the Go API. A given option wins over a rules file even
	// where its value is the default.
	given map[string]bool
}

// SetGiven records that the named options (command-line names) were set
// explicitly. The set is copied, never shared with a copy of o.
func (o *Options) SetGiven(names ...string) {
	g := make(map[string]bool, len(o.given)+len(names))
	for n := range o.given {
		g[n] = true
	}
	for _, n := range names {
		g[n] = true
	}
	o.given = g
}

// Given reports whether the named option (command-line name) was set
// explicitly: the one meaning of "given" for the command line and the Go
// API alike.
func (o *Options) Given(name string) bool { return o.given[name] }

// Bounds of the numeric options, checked before any input is read: a value
// outside them is a usage error, never clamped, so the value a report echoes
// is the value used.
const (
	MaxDepth      = 100       // Depth: NVTX nesting below the step
	MaxSkipSteps  = 1_000_000 // SkipSteps: more steps than any capture holds
	MaxJobs       = 1024      // Jobs: files read in parallel
	MinResamples  = 1999      // Resamples: stable 95% interval endpoints
	MaxResamples  = 1_000_000 // Resamples: beyond, time and memory grow with no gain
	MaxConfidence = 0.999     // leaves at least one resample in each tail at the smallest B
)

// DefaultOptions are the settings of `nsysphase analyze` without flags:
// the only place the defaults are written (the flags' defaults and the Go
// API's come from here).
func DefaultOptions() Options {
	return Options{Depth: 1, SkipSteps: 1, ArmPattern: phases.DefaultArmPattern, Confidence: 0.95, Resamples: 9999, Seed: 1}
}

// MergeRules merges a rules file's depth, arm_pattern and skip_steps into
// the options, once: a value given explicitly (Given: "depth",
// "arm-pattern", "skip-steps") wins, else the rules file's, else the value
// already in o. The rules keep the rest (step, phases, renames, selections).
func (o *Options) MergeRules(rules *phases.Rules, path string) {
	if rules == nil {
		return
	}
	given := o.Given
	if rules.SkipSteps != nil && !given("skip-steps") {
		o.SkipSteps = *rules.SkipSteps
	}
	if rules.Depth > 0 && !given("depth") {
		o.Depth = rules.Depth
	}
	if rules.ArmPattern != "" && !given("arm-pattern") {
		o.ArmPattern = rules.ArmPattern
	}
	o.Rules, o.RulesFile = rules.WithoutOptions(), path
}

// Validate checks every option against its bounds; the error is a
// *UsageError naming the option (its command-line spelling).
func (o *Options) Validate() error {
	if err := o.ValidateSegment(); err != nil {
		return err
	}
	return o.ValidateStats()
}

func usage(format string, args ...any) error { return &UsageError{Err: fmt.Errorf(format, args...)} }

// ValidateSegment checks the input and segmentation options.
func (o *Options) ValidateSegment() error {
	bad := usage
	if len(o.Files) == 0 && len(o.FileArms) == 0 {
		return bad("no input: pass export files (or --arm NAME=GLOB)")
	}
	if !o.Datasets && (o.Depth < 1 || o.Depth > MaxDepth) {
		return bad("--depth %d: want 1 to %d", o.Depth, MaxDepth)
	}
	if o.SkipSteps < 0 || o.SkipSteps > MaxSkipSteps {
		return bad("--skip-steps %d: want 0 to %d", o.SkipSteps, MaxSkipSteps)
	}
	if o.Jobs < 0 || o.Jobs > MaxJobs {
		return bad("--jobs %d: want 0 (one per CPU) to %d", o.Jobs, MaxJobs)
	}
	if o.Datasets {
		return nil
	}
	if err := CheckArmPattern("--arm-pattern", o.ArmPattern); err != nil {
		return err
	}
	for _, a := range o.FileArms {
		if a.Name == "" || a.Glob == "" {
			return bad("--arm %q=%q: want NAME=GLOB", a.Name, a.Glob)
		}
	}
	return nil
}

// ValidateStats checks the statistics options (none with NoStats).
func (o *Options) ValidateStats() error {
	bad := usage
	if o.NoStats {
		return nil
	}
	if o.Resamples < MinResamples {
		return bad("--resamples %d: at least %d are needed for stable 95%% interval endpoints", o.Resamples, MinResamples)
	}
	if o.Resamples > MaxResamples {
		return bad("--resamples %d: at most %d (more add time and memory, not precision)", o.Resamples, MaxResamples)
	}
	if !(o.Confidence > 0.5 && o.Confidence <= MaxConfidence) {
		return bad("--confidence %v: want a level above 0.5 and at most %g, e.g. 0.95", o.Confidence, MaxConfidence)
	}
	return nil
}

// CheckArmPattern refuses an arm pattern that does not compile or has no
// capture group: group 1 names the arm.
func CheckArmPattern(what, pattern string) error {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("%s: %w", what, err)}
	}
	if re.NumSubexp() < 1 {
		return &UsageError{Err: fmt.Errorf("%s %q has no capture group: group 1 must capture the arm name, e.g. %s", what, pattern, phases.DefaultArmPattern)}
	}
	return nil
}

// Config is the reading and segmentation part of the options. A rules file
// named but not merged (MergeRules) is an error, never silently dropped.
func (o *Options) Config() (Config, error) {
	if o.RulesFile != "" && o.Rules == nil {
		return Config{}, fmt.Errorf("rules file %s not loaded: merge it into the options first (MergeRules)", o.RulesFile)
	}
	pat, err := regexp.Compile(o.ArmPattern)
	if err != nil {
		return Config{}, &UsageError{Err: fmt.Errorf("--arm-pattern: %w", err)}
	}
	seg := phases.Options{ArmPattern: pat, Step: o.Step, Depth: o.Depth, SkipSteps: o.SkipSteps, Rules: o.Rules}
	return Config{Files: o.Files, FileArms: o.FileArms, ArmKey: o.ArmKey, Manifest: o.Manifest, Segment: seg, Jobs: o.Jobs}, nil
}

// statsOptions is the statistics part of the options as the engine takes
// it, for one analysis: its baseline arm and the metrics that get quantile
// intervals (nil: metric 0; empty: none) differ between the tables that
// run statistics, while confidence, resamples and seed never do. Only
// the summary and the verdict's gains ask for p90/p99 intervals
// (Quantiles); the other tables leave them off.
func (o *Options) statsOptions(baseline string, quantileMetrics []int, quantiles bool) stats.Options {
	return stats.Options{Confidence: o.Confidence, Resamples: o.Resamples, Seed: o.Seed, Baseline: baseline,
		Quantiles: quantiles && o.Quantiles, QuantileMetrics: quantileMetrics}
}

// settings is the statistics settings the reports echo.
func (o *Options) settings() Settings {
	return Settings{Confidence: o.Confidence, Resamples: o.Resamples, Seed: o.Seed, SkipSteps: o.SkipSteps,
		Quantile: "empirical (lowest value whose cumulative share reaches p; the lower median), not numpy's linear type 7",
		Unit:     "block (an NVTX arm range) or profile (a file); steps are never resampled"}
}

// LoadRules loads a rules file (TOML or YAML) and checks the options it
// carries against the same bounds as the options themselves.
func LoadRules(path string) (*phases.Rules, error) {
	rules, err := phases.LoadRules(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rules.ArmPattern != "" {
		if err := CheckArmPattern(path+": arm_pattern", rules.ArmPattern); err != nil {
			return nil, err
		}
	}
	if rules.Depth > MaxDepth {
		return nil, &UsageError{Err: fmt.Errorf("%s: depth %d: want 1 to %d", path, rules.Depth, MaxDepth)}
	}
	if rules.SkipSteps != nil && *rules.SkipSteps > MaxSkipSteps {
		return nil, &UsageError{Err: fmt.Errorf("%s: skip_steps %d: want 0 to %d", path, *rules.SkipSteps, MaxSkipSteps)}
	}
	return rules, nil
}
