package nsysphase

import (
	"context"
	"slices"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/dataset"
	"github.com/nsysphase/nsysphase/internal/report"
	"github.com/nsysphase/nsysphase/phases"
)

// Version is written into the documents and datasets of analyses made
// through this package.
const Version = "library"

// SchemaVersion versions the JSON document and the Parquet tables (the
// minor grows when a column or table is added, the major when one changes
// meaning or goes away).
const SchemaVersion = "2.2"

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
	Rules      string    // optional phase rules file (TOML or YAML); its depth, arm_pattern and skip_steps apply where the field above is not given (see SetDepth)
	Jobs       int       // files read in parallel (0 = GOMAXPROCS)

	Confidence float64 // confidence level of the intervals, e.g. 0.95
	Resamples  int     // bootstrap resamples, at least 1999
	Seed       uint64  // random seed: same inputs and seed, same numbers
	Baseline   string  // baseline arm; "" = the arm of the earliest block
	Quantiles  bool    // p90/p99 intervals of wall time where allowed
	NoStats    bool    // point values only, no intervals

	given []string // options set by a setter (command-line names): they win over the rules file
}

// DefaultOptions are the settings of `nsysphase analyze` without flags
// (the command line's defaults: both come from one place).
func DefaultOptions() Options {
	d := analysis.DefaultOptions()
	return Options{Step: d.Step, Depth: d.Depth, SkipSteps: d.SkipSteps, ArmPattern: d.ArmPattern, ArmKey: d.ArmKey, Jobs: d.Jobs,
		Confidence: d.Confidence, Resamples: d.Resamples, Seed: d.Seed, Baseline: d.Baseline, Quantiles: d.Quantiles, NoStats: d.NoStats}
}

// SetDepth sets Depth and marks it given, as --depth on the command line:
// it wins over the rules file's depth even where it equals the default.
func (o *Options) SetDepth(depth int) { o.Depth = depth; o.setGiven("depth") }

// SetSkipSteps sets SkipSteps and marks it given, as --skip-steps: it wins
// over the rules file's skip_steps even where it equals the default, and
// re-cuts the datasets of AnalyzeDatasets.
func (o *Options) SetSkipSteps(n int) { o.SkipSteps = n; o.setGiven("skip-steps") }

// SetArmPattern sets ArmPattern and marks it given, as --arm-pattern: it
// wins over the rules file's arm_pattern even where it equals the default.
func (o *Options) SetArmPattern(pattern string) { o.ArmPattern = pattern; o.setGiven("arm-pattern") }

// setGiven records name as given; the list is copied, never shared with a
// copy of o.
func (o *Options) setGiven(name string) { o.given = append(slices.Clip(o.given), name) }

// Analysis is the result of Analyze or AnalyzeDatasets. Its methods return
// copies: changing a returned value changes nothing in the analysis.
type Analysis struct {
	doc *analysis.Doc
}

// Analyze reads the exports (paths or globs), segments them and computes
// the statistics. Bad input gives an error naming the file (an
// *nsys.InputError for an unusable export).
func Analyze(ctx context.Context, inputs []string, opts Options) (*Analysis, error) {
	ao, err := opts.analysisOptions(inputs, false)
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
	doc, err := analysis.Build(ctx, files, ao, Version)
	if err != nil {
		return nil, err
	}
	return &Analysis{doc: doc}, nil
}

// analysisOptions are opts as the one options type the command line also
// fills, with the rules file merged in and checked against the same bounds
// as the flags (one Validate); datasets: the inputs are datasets
// (segmentation options do not apply). An option is given (wins over the
// rules file) when set by its setter, or when its field differs from the
// default: an assignment cannot be told from the default otherwise, and a
// value other than the default was set explicitly.
func (opts Options) analysisOptions(inputs []string, datasets bool) (analysis.Options, error) {
	ao := opts.toAnalysis(inputs)
	ao.Datasets = datasets
	if opts.Rules != "" {
		rules, err := analysis.LoadRules(opts.Rules)
		if err != nil {
			return ao, err
		}
		ao.MergeRules(rules, opts.Rules)
	}
	return ao, ao.Validate()
}

// toAnalysis converts opts field by field, marking the given options.
func (opts Options) toAnalysis(inputs []string) analysis.Options {
	ao := analysis.DefaultOptions()
	ao.Files, ao.FileArms, ao.ArmKey, ao.Jobs = inputs, convert(opts.FileArms, func(a *FileArm) analysis.FileArm { return analysis.FileArm{Name: a.Name, Glob: a.Glob} }), opts.ArmKey, opts.Jobs
	ao.Step, ao.Depth, ao.ArmPattern, ao.SkipSteps = opts.Step, opts.Depth, opts.ArmPattern, opts.SkipSteps
	ao.Baseline, ao.Confidence, ao.Resamples, ao.Seed, ao.Quantiles, ao.NoStats = opts.Baseline, opts.Confidence, opts.Resamples, opts.Seed, opts.Quantiles, opts.NoStats
	ao.SetGiven(opts.given...)
	def := analysis.DefaultOptions()
	for name, differs := range map[string]bool{"depth": opts.Depth != def.Depth, "skip-steps": opts.SkipSteps != def.SkipSteps, "arm-pattern": opts.ArmPattern != def.ArmPattern} {
		if differs {
			ao.SetGiven(name)
		}
	}
	return ao
}

// MarshalJSON is the whole analysis as the JSON document `nsysphase
// analyze --format json` prints (version SchemaVersion, described in
// docs/schema.md), compact: Render with format "json" writes the same
// document indented, byte for byte as the command does.
func (a *Analysis) MarshalJSON() ([]byte, error) { return report.Marshal(a.doc) }

// Step is the name of the step range: the unit of work each input repeats,
// which Analyze chose (Options.Step) and cut into phases.
func (a *Analysis) Step() string { return a.doc.Step }

// Arms are the arms in order of their first block; Arms()[0] is the
// default baseline.
func (a *Analysis) Arms() []string { return slices.Clone(a.doc.Arms) }

// Baseline is the arm the others are compared with: Options.Baseline, or
// the arm of the earliest block.
func (a *Analysis) Baseline() string { return a.doc.Baseline }

// Phases are the step's name, then the phases in step order, then the
// (unannotated) row and other threads' rows.
func (a *Analysis) Phases() []string { return slices.Clone(a.doc.Phases) }

// Settings are how the statistics were computed, the warm-up rule included.
func (a *Analysis) Settings() Settings { return settings(&a.doc.Settings) }

// Excluded counts what segmentation left out or flagged, by reason.
func (a *Analysis) Excluded() Exclusions { return exclusions(&a.doc.Excluded) }

// Instances are every step and phase instance, in input order (the rows of
// phase_instances), warm-up steps included (Instance.Warmup).
func (a *Analysis) Instances() []Instance {
	st := a.doc.Store()
	out := make([]Instance, 0, st.Len())
	for _, x := range st.Each() {
		out = append(out, instance(x))
	}
	return out
}

// Summary is one row per arm and phase: point values and intervals per
// metric.
func (a *Analysis) Summary() []SummaryRow { return convert(a.doc.Summary, summaryRow) }

// Comparisons are every arm against the baseline, per phase, metric and
// statistic; none without a second arm.
func (a *Analysis) Comparisons() []ComparisonRow { return convert(a.doc.Comparisons, comparisonRow) }

// Decomposition splits each phase's mean wall difference between every arm
// and the baseline into its parts.
func (a *Analysis) Decomposition() []DecompositionRow {
	return convert(a.doc.Decomposition, decompositionRow)
}

// Provenance is one row per input, in input order: what produced the
// export and what it shows.
func (a *Analysis) Provenance() []ProvenanceRow {
	out := make([]ProvenanceRow, len(a.doc.Provenance))
	for i := range a.doc.Provenance {
		var in *phases.Input
		if len(a.doc.Inputs) == len(a.doc.Provenance) { // one input each, in the same order
			in = &a.doc.Inputs[i]
		}
		out[i] = provenanceRow(&a.doc.Provenance[i], in)
	}
	return out
}

// Warnings are the diagnostics of every stage; filter them by Code.
func (a *Analysis) Warnings() []Warning { return convert(a.doc.Warnings, warning) }

// Tables are the analysis as the tables of `nsysphase analyze --out`
// (phase_instances, phase_summary, comparisons, decomposition, provenance,
// and with ranks stragglers and rank_collectives), described in
// docs/schema.md.
func (a *Analysis) Tables() []*export.Table { return dataset.Tables(a.doc) }

// WriteDataset writes the tables into the new directory dir, one Parquet
// file per table, with the metadata `nsysphase analyze --from` needs to
// reproduce the analysis.
func (a *Analysis) WriteDataset(dir string) error {
	md := map[string]string{export.MetaSchemaVersion: SchemaVersion, export.MetaVersion: Version}
	ctx, err := dataset.ContextMetadata(a.doc)
	if err != nil {
		return err
	}
	md[dataset.MetaContext] = ctx
	return export.WriteDataset(dir, dataset.Tables(a.doc), export.FormatParquet, export.Options{Metadata: md})
}

// CompareWithHistory compares the mean wall per step of every arm's phases
// with the runs in the datasets dirs (written by `nsysphase analyze --out`
// in earlier runs of the baseline, one run per export): the t prediction
// interval over runs on the log scale of docs/statistics.md §11, as
// `nsysphase analyze --history` reports it. The options are those of the
// analysis, normally: their warm-up rule (SkipSteps, or the rules file's
// skip_steps) applies to the history runs and Confidence to the intervals,
// checked as Analyze checks them.
func (a *Analysis) CompareWithHistory(ctx context.Context, dirs []string, opts Options) ([]HistoryRow, error) {
	ao, err := opts.analysisOptions(dirs, true)
	if err != nil {
		return nil, err
	}
	h, _, err := dataset.LoadHistory(ctx, dirs, ao, Version)
	if err != nil {
		return nil, err
	}
	rows, err := a.doc.CompareWithHistory(h, a.doc.Phases, "wall_ns", "mean", "", ao.Confidence)
	if err != nil {
		return nil, err
	}
	return convert(rows, historyRow), nil
}
