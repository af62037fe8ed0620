package nsysphase

import (
	"context"

	"github.com/nsysphase/nsysphase/diag"
	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/phases"
)

// Version is written into the documents and datasets of analyses made
// through this package.
const Version = "library"

// Document is the whole analysis: the JSON contract of `nsysphase analyze
// --format json` (version SchemaVersion), described field by field in
// docs/schema.md.
type Document analysis.Doc

// SummaryRow is one arm × phase of the summary: n, steps, blocks and, per
// metric, the point values and their confidence intervals.
type SummaryRow analysis.SummaryRow

// MetricSummary are one metric's mean, median, p90, p99 and CIs; null in
// JSON when the metric was not measured (its source table is absent).
type MetricSummary analysis.MetricSummary

// MarshalJSON writes a metric that was not measured as null.
func (m MetricSummary) MarshalJSON() ([]byte, error) { return analysis.MetricSummary(m).MarshalJSON() }

// ComparisonRow is one arm against the baseline for one phase, metric and
// statistic: ratio and difference with their CIs, and the verdict.
type ComparisonRow analysis.ComparisonRow

// DecompositionRow is one part of a phase's mean wall difference between an
// arm and the baseline, with its CI and share of the baseline's wall.
type DecompositionRow analysis.DecompositionRow

// ProvenanceRow describes one input: file, nsys and schema versions, GPU,
// driver, CUDA, processes, graph-trace mode.
type ProvenanceRow analysis.ProvenanceRow

// HistoryRow is one arm and phase against the history runs of the baseline
// (CompareWithHistory): the t prediction interval over runs.
type HistoryRow analysis.HistoryRow

// Instance is one step or phase instance: one NVTX range on one thread,
// with its measurements (the rows of phase_instances).
type Instance phases.Instance

// IsNull reports whether metric m of x was not measured.
func (x *Instance) IsNull(m phases.Metric) bool { return (*phases.Instance)(x).IsNull(m) }

// Warning is one diagnostic of any stage, with its code and scope.
type Warning diag.Warning

func (w Warning) Error() string { return w.Message }

// convert copies a slice into a slice of a defined type with the same
// underlying type.
func convert[T any, U any](xs []U, f func(U) T) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// SchemaVersion versions the document and the Parquet tables.
const SchemaVersion = analysis.SchemaVersion

// FileArm gives every file matching Glob the arm Name.
type FileArm struct {
	Name string // the arm
	Glob string // files of the arm (a path or a glob)
}

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
	ao := analysis.Options{Files: inputs, FileArms: convert(opts.FileArms, func(a FileArm) analysis.FileArm { return analysis.FileArm{Name: a.Name, Glob: a.Glob} }), ArmKey: opts.ArmKey, Jobs: opts.Jobs,
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
func (a *Analysis) Document() *Document { return (*Document)(a.doc) }

// Arms are the arms in order of their first block; Arms()[0] is the
// default baseline.
func (a *Analysis) Arms() []string { return a.doc.Arms }

// Phases are the step's name, then the phases in step order.
func (a *Analysis) Phases() []string { return a.doc.Phases }

// Instances are every step and phase instance, in input order (the rows of
// phase_instances).
func (a *Analysis) Instances() []Instance {
	return convert(a.doc.Instances(), func(x phases.Instance) Instance { return Instance(x) })
}

// Summary is one row per arm and phase: point values and intervals.
func (a *Analysis) Summary() []SummaryRow {
	return convert(a.doc.Summary, func(x analysis.SummaryRow) SummaryRow { return SummaryRow(x) })
}

// Comparisons are every arm against the baseline, per phase, metric and
// statistic.
func (a *Analysis) Comparisons() []ComparisonRow {
	return convert(a.doc.Comparisons, func(x analysis.ComparisonRow) ComparisonRow { return ComparisonRow(x) })
}

// Decomposition splits each phase's mean wall difference into its parts.
func (a *Analysis) Decomposition() []DecompositionRow {
	return convert(a.doc.Decomposition, func(x analysis.DecompositionRow) DecompositionRow { return DecompositionRow(x) })
}

// Provenance is one row per input: what produced the export.
func (a *Analysis) Provenance() []ProvenanceRow {
	return convert(a.doc.Provenance, func(x analysis.ProvenanceRow) ProvenanceRow { return ProvenanceRow(x) })
}

// Warnings are the diagnostics of every stage; filter them by Code.
func (a *Analysis) Warnings() []Warning {
	return convert(a.doc.Warnings, func(x diag.Warning) Warning { return Warning(x) })
}

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
	rows, err := a.doc.CompareWithHistory(h, a.doc.Phases, "wall_ns", "mean", "", confidence)
	return convert(rows, func(x analysis.HistoryRow) HistoryRow { return HistoryRow(x) }), err
}
