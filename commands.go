package nsysphase

import (
	"context"
	"fmt"
	"io"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/dataset"
	"github.com/nsysphase/nsysphase/internal/report"
)

// Render writes a result of this package in format, the bytes the
// matching command prints with --format (where a report names the tool,
// it names "nsysphase library", Version). Each result has the formats its
// command offers:
//
//   - *Analysis: "table", "markdown", "html", "json" (the document), and
//     "csv", "parquet", "arrow" (phase_summary);
//   - *CheckReport: "table", "markdown", "json";
//   - *InventoryReport: "table", "markdown", "json", and "csv", "parquet",
//     "arrow" (items);
//   - *BoundaryReport: "table", "markdown", "json", and "csv", "parquet",
//     "arrow" (blockers);
//   - *VerdictReport: "table", "markdown", "json", "csv".
//
// "text" and "txt" are "table". Another format, or another result type,
// is an error.
func Render(w io.Writer, result any, format string) error {
	f, err := report.ParseFormat(format)
	if err != nil {
		return err
	}
	var r any
	switch v := result.(type) {
	case *Analysis:
		r = v.doc
	case *InventoryReport:
		r = v.inv
	case *BoundaryReport:
		r = v.b
	case *VerdictReport:
		r = v.v
	case *CheckReport:
		r = v.g
	default:
		return fmt.Errorf("render: %T is not a result of package nsysphase", result)
	}
	return report.Generate(w, f, r, report.Options{Tool: "nsysphase " + Version})
}

// AnalyzeDatasets analyses datasets written by `nsysphase analyze --out` (or
// WriteDataset) instead of exports: the same statistics and the same
// document as a direct analysis of the exports they came from
// (`nsysphase analyze --from`). The options' statistics apply, and
// SkipSteps where given (SetSkipSteps, or a value other than the default),
// else the warm-up each dataset was written with, as --skip-steps with
// --from; segmentation options do not (the datasets hold the segmented
// instances).
func AnalyzeDatasets(ctx context.Context, dirs []string, opts Options) (*Analysis, error) {
	ao := opts.toAnalysis(dirs)
	ao.Datasets = true // segmentation options do not apply, and are not checked
	if err := ao.Validate(); err != nil {
		return nil, err
	}
	doc, err := dataset.Build(ctx, dirs, ao, Version)
	if err != nil {
		return nil, err
	}
	return &Analysis{doc: doc}, nil
}

// readCalls reads the inputs with each instance's CUDA calls recorded: what
// Inventory, Boundary and Verdict need.
func readCalls(ctx context.Context, inputs []string, opts Options) (analysis.Options, []*analysis.FileResult, analysis.Frames, error) {
	ao, err := opts.analysisOptions(inputs, false)
	if err != nil {
		return ao, nil, nil, err
	}
	cfg, err := ao.Config()
	if err != nil {
		return ao, nil, nil, err
	}
	files, frames, err := analysis.ReadCalls(ctx, cfg)
	return ao, files, frames, err
}

// InventoryReport is every blocking host interaction (synchronisations,
// synchronous copies, allocations) per arm and phase, ranked by cost per
// step, with a suggested fix: `nsysphase inventory`.
type InventoryReport struct{ inv *analysis.Inventory }

// Inventory lists the blocking host interactions of the exports, leaving
// out the first opts.SkipSteps steps of each block. DefaultOptions are
// analyze's (one warm-up step); `nsysphase inventory` counts every step, a
// census: SkipSteps 0 gives its rows.
func Inventory(ctx context.Context, inputs []string, opts Options) (*InventoryReport, error) {
	ao, files, frames, err := readCalls(ctx, inputs, opts)
	if err != nil {
		return nil, err
	}
	return &InventoryReport{inv: analysis.BuildInventory(files, frames, ao)}, nil
}

// Items is the number of distinct interactions listed (arm × phase × kind ×
// API).
func (r *InventoryReport) Items() int { return len(r.inv.Items) }

// MarshalJSON is `nsysphase inventory --format json`.
func (r *InventoryReport) MarshalJSON() ([]byte, error) { return report.Marshal(r.inv) }

// BoundaryReport says whether a region of phases can be captured as a CUDA
// graph, what blocks it and the most capture could save per step:
// `nsysphase boundary`.
type BoundaryReport struct{ b *analysis.Boundary }

// Boundary checks the candidate capture region (phase names, in any order).
func Boundary(ctx context.Context, inputs []string, opts Options, region []string) (*BoundaryReport, error) {
	ao, files, frames, err := readCalls(ctx, inputs, opts)
	if err != nil {
		return nil, err
	}
	b, err := analysis.BuildBoundary(files, frames, region, ao)
	if err != nil {
		return nil, err
	}
	return &BoundaryReport{b: b}, nil
}

// Capturable reports whether no arm has a blocker inside the region.
func (r *BoundaryReport) Capturable() bool { return r.b.Capturable }

// Blockers is the number of blockers found (over all arms).
func (r *BoundaryReport) Blockers() int { return len(r.b.Blockers) }

// MarshalJSON is `nsysphase boundary --format json`.
func (r *BoundaryReport) MarshalJSON() ([]byte, error) { return report.Marshal(r.b) }

// VerdictReport is a go / no-go for capturing a region as a CUDA graph:
// `nsysphase verdict`.
type VerdictReport struct{ v *analysis.Verdict }

// Verdict decides whether capturing the region (phase names, in any
// order) would save at least minGain of step wall (a fraction: 0.10 is 10%;
// the share Removable reports), from the bounded saving and its CI. The
// overhead is measured in Options.Baseline, else in the first arm that has
// the region's phases.
func Verdict(ctx context.Context, inputs []string, opts Options, region []string, minGain float64) (*VerdictReport, error) {
	ao, files, frames, err := readCalls(ctx, inputs, opts)
	if err != nil {
		return nil, err
	}
	v, err := analysis.BuildVerdict(files, frames, region, minGain, ao)
	if err != nil {
		return nil, err
	}
	return &VerdictReport{v: v}, nil
}

// Decision is "go", "no-go" or "inconclusive" (the command's exit codes 0,
// 1 and 3).
func (r *VerdictReport) Decision() string { return string(r.v.Verdict) }

// Removable is the bounded saving's share of step wall: the saving per step
// summed over the kept steps of the measured arm, divided by the step wall
// summed over the same steps (a fraction: 0.1 is 10%); with its CI, nil
// without one.
func (r *VerdictReport) Removable() (share float64, ci *[2]float64) {
	return r.v.Removable.Value, r.v.Removable.CI
}

// Reason says why, in one sentence.
func (r *VerdictReport) Reason() string { return r.v.Reason }

// MarshalJSON is `nsysphase verdict --format json`.
func (r *VerdictReport) MarshalJSON() ([]byte, error) { return report.Marshal(r.v) }

// CheckSpec is what a CI gate judges (the flags of `nsysphase check`).
type CheckSpec struct {
	// Phases are the phases gated, each on its own; nil: the step.
	Phases []string
	// Metric is the metric gated (a MetricInfo.Name); "": "wall_ns".
	Metric string
	// Stat is the statistic gated: "mean", "median", "p90" or "p99"; "":
	// "mean".
	Stat string
	// Limit is the largest tolerated slowdown, a fraction of the baseline's
	// value: 0.05 tolerates +5%.
	Limit float64
}

// CheckReport is the outcome of a gate: `nsysphase check`.
type CheckReport struct{ g *analysis.Gate }

// Failed reports a proven regression beyond the limit (the command's exit 1).
func (r *CheckReport) Failed() bool { return r.g.Status == analysis.GateFail }

// MarshalJSON is `nsysphase check --format json`.
func (r *CheckReport) MarshalJSON() ([]byte, error) { return report.Marshal(r.g) }

func (a *Analysis) gateSpec(s CheckSpec) analysis.GateSpec {
	if len(s.Phases) == 0 {
		s.Phases = []string{a.doc.Step}
	}
	if s.Metric == "" {
		s.Metric = "wall_ns"
	}
	if s.Stat == "" {
		s.Stat = "mean"
	}
	st := a.doc.Settings
	return analysis.GateSpec{Phases: s.Phases, Metric: s.Metric, Stat: s.Stat, Limit: s.Limit, Confidence: st.Confidence, Resamples: st.Resamples, Seed: st.Seed}
}

// Check gates every arm of the analysis against its baseline: FAIL only
// when an arm is proven slower by more than the limit with a between-block
// CI (`nsysphase check`).
func (a *Analysis) Check(spec CheckSpec) (*CheckReport, error) {
	g, err := analysis.ArmsGate(a.doc, a.gateSpec(spec))
	if err != nil {
		return nil, err
	}
	return &CheckReport{g: g}, nil
}

// CheckHistory gates the analysis' runs against the history datasets dirs
// (written by `nsysphase analyze --out` in earlier runs of the baseline): the
// t prediction interval over runs (`nsysphase check --history`).
func (a *Analysis) CheckHistory(ctx context.Context, dirs []string, spec CheckSpec) (*CheckReport, error) {
	h, _, err := dataset.LoadHistory(ctx, dirs, a.doc.Options(), Version)
	if err != nil {
		return nil, err
	}
	gs := a.gateSpec(spec)
	rows, err := a.doc.CompareWithHistory(h, gs.Phases, gs.Metric, gs.Stat, "", gs.Confidence)
	if err != nil {
		return nil, err
	}
	return &CheckReport{g: analysis.HistoryGate(rows, h, gs)}, nil
}
