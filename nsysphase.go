package nsysphase

import (
	"context"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

// Version is written into the documents and datasets of analyses made
// through this package.
const Version = "library"

// The analysis document and its rows (the JSON contract of
// `nsysphase analyze --format json`, version SchemaVersion).
type (
	Document         = analysis.Doc
	SummaryRow       = analysis.SummaryRow
	MetricSummary    = analysis.MetricSummary
	ComparisonRow    = analysis.ComparisonRow
	DecompositionRow = analysis.DecompositionRow
	ProvenanceRow    = analysis.ProvenanceRow
	HistoryRow       = analysis.HistoryRow
	Instance         = phases.Instance
	Warning          = nsys.Warning
)

// SchemaVersion versions the document and the Parquet tables.
const SchemaVersion = analysis.SchemaVersion

// FileArm gives every file matching Glob the arm Name.
type FileArm = analysis.FileArm

// Options are the settings of an analysis; DefaultOptions gives those of
// `nsysphase analyze` without flags.
type Options struct {
	Step       string    // step range name; "" = the name that repeats most
	Depth      int       // phase depth below the step (1: the step's children)
	SkipSteps  int       // warm-up steps left out at the start of each block
	ArmPattern string    // regexp of arm block ranges; group 1 = arm, group 2 = block
	FileArms   []FileArm // arms from files; their files are inputs too
	ArmKey     string    // dotted key into each export's run manifest naming its arm
	Rules      string    // optional phase rules file (TOML or YAML); its depth, arm_pattern and skip_steps apply where the field above is at its default
	Jobs       int       // files read in parallel (0 = GOMAXPROCS)

	Confidence float64 // confidence level of the intervals, e.g. 0.95
	Resamples  int     // bootstrap resamples, at least 1999
	Seed       uint64  // random seed: same inputs and seed, same numbers
	Baseline   string  // baseline arm; "" = the arm of the earliest block
	Quantiles  bool    // p90/p99 intervals of wall time where allowed
	NoStats    bool    // point values only, no intervals
}

// DefaultOptions are the settings of `nsysphase analyze` without flags.
func DefaultOptions() Options {
	d := analysis.DefaultOptions()
	return Options{Depth: d.Depth, SkipSteps: d.SkipSteps, ArmPattern: d.ArmPattern, Confidence: d.Confidence, Resamples: d.Resamples, Seed: d.Seed}
}

// Analysis is the result of Analyze.
type Analysis struct {
	doc *analysis.Doc
}

// Analyze reads the exports (paths or globs), segments them and computes
// the statistics. Bad input gives an error naming the file (an
// *nsys.InputError for an unusable export).
func Analyze(ctx context.Context, inputs []string, opts Options) (*Analysis, error) {
	ao, err := opts.analysisOptions(inputs)
	if err != nil {
		return nil, err
	}
	cfg, err := ao.Config()
	if err != nil {
		return nil, err
	}
	files, err := analysis.ReadFiles(ctx, cfg)
	if err != nil {
		return nil, err
	}
	doc, err := analysis.Build(ctx, files, ao.StatsConfig(), Version, ao.SkipSteps)
	if err != nil {
		return nil, err
	}
	return &Analysis{doc: doc}, nil
}

// analysisOptions are opts as the one options type the command line also
// fills: the rules file merged in (a field set to other than its default
// wins over the file, as a given flag does) and checked against the same
// bounds as the flags.
func (opts Options) analysisOptions(inputs []string) (analysis.Options, error) {
	ao := analysis.Options{Files: inputs, FileArms: opts.FileArms, ArmKey: opts.ArmKey, Jobs: opts.Jobs,
		Step: opts.Step, Depth: opts.Depth, ArmPattern: opts.ArmPattern, SkipSteps: opts.SkipSteps,
		Baseline: opts.Baseline, Confidence: opts.Confidence, Resamples: opts.Resamples, Seed: opts.Seed, Quantiles: opts.Quantiles, NoStats: opts.NoStats}
	if opts.Rules != "" {
		rules, err := analysis.LoadRules(opts.Rules)
		if err != nil {
			return ao, err
		}
		def := DefaultOptions()
		ao.MergeRules(rules, opts.Rules, func(name string) bool {
			switch name {
			case "depth":
				return opts.Depth != def.Depth
			case "skip-steps":
				return opts.SkipSteps != def.SkipSteps
			case "arm-pattern":
				return opts.ArmPattern != def.ArmPattern
			}
			return false
		})
	}
	return ao, ao.Validate()
}

// Document is the whole analysis as the JSON contract (json.Marshal it for
// the document `nsysphase analyze --format json` prints).
func (a *Analysis) Document() *Document { return a.doc }

// Arms are the arms in order of their first block; Arms()[0] is the
// default baseline.
func (a *Analysis) Arms() []string { return a.doc.Arms }

// Phases are the step's name, then the phases in step order.
func (a *Analysis) Phases() []string { return a.doc.Phases }

// Instances are every step and phase instance, in input order (the rows of
// phase_instances).
func (a *Analysis) Instances() []Instance { return a.doc.Instances() }

// Summary is one row per arm and phase: point values and intervals.
func (a *Analysis) Summary() []SummaryRow { return a.doc.Summary }

// Comparisons are every arm against the baseline, per phase, metric and
// statistic.
func (a *Analysis) Comparisons() []ComparisonRow { return a.doc.Comparisons }

// Decomposition splits each phase's mean wall difference into its parts.
func (a *Analysis) Decomposition() []DecompositionRow { return a.doc.Decomposition }

// Provenance is one row per input: what produced the export.
func (a *Analysis) Provenance() []ProvenanceRow { return a.doc.Provenance }

// Warnings are the diagnostics of every stage; filter them by Code.
func (a *Analysis) Warnings() []Warning { return a.doc.Warnings }

// Tables are the analysis as the tables of `nsysphase analyze --out`
// (phase_instances, phase_summary, comparisons, decomposition, provenance),
// described in docs/schema.md.
func (a *Analysis) Tables() []*export.Table { return a.doc.Tables() }

// WriteDataset writes the tables into the new directory dir, one Parquet
// file per table, with the metadata `nsysphase analyze --from` needs to
// reproduce the analysis.
func (a *Analysis) WriteDataset(dir string) error {
	md := map[string]string{export.MetaSchemaVersion: SchemaVersion, export.MetaVersion: Version}
	ctx, err := a.doc.ContextMetadata()
	if err != nil {
		return err
	}
	md[analysis.MetaContext] = ctx
	return export.WriteDataset(dir, a.doc.Tables(), export.FormatParquet, export.Options{Metadata: md})
}

// CompareWithHistory compares the mean wall per step of every arm's phases
// with the runs in the datasets dirs (written by `nsysphase analyze --out`
// in earlier runs of the baseline, one run per export): the t prediction
// interval over runs on the log scale of docs/statistics.md §11, as
// `nsysphase analyze --history` reports it. skipSteps is the warm-up rule
// applied to the history runs (the analysis' own, normally).
func (a *Analysis) CompareWithHistory(ctx context.Context, dirs []string, skipSteps int, confidence float64) ([]HistoryRow, error) {
	h, _, err := analysis.LoadHistory(ctx, dirs, skipSteps, Version)
	if err != nil {
		return nil, err
	}
	return a.doc.CompareWithHistory(h, a.doc.Phases, "wall_ns", "mean", "", confidence)
}
