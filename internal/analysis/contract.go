package analysis

import (
	"encoding/json"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// SchemaVersion versions the JSON document and the Parquet tables. Bump the
// minor for added fields, the major for changed or removed ones.
const SchemaVersion = "2.2"

// Doc is the JSON contract of `nsysphase analyze --format json`.
type Doc struct {
	SchemaVersion string         `json:"schema_version"`
	Tool          ToolInfo       `json:"tool"`
	Inputs        []phases.Input `json:"inputs"`
	Step          string         `json:"step"`
	Phases        []string       `json:"phases"` // step first, then phases in step order, then (unannotated) and other threads' rows
	// StepChoice says how the step was chosen (the first input's; each
	// input's is in Inputs): rule, coverage, runner-up, scored candidates.
	StepChoice    *phases.StepChoice `json:"step_choice,omitempty"`
	Arms          []string           `json:"arms"`
	Baseline      string             `json:"baseline"`
	Settings      Settings           `json:"settings"`
	Summary       []SummaryRow       `json:"summary"`
	Comparisons   []ComparisonRow    `json:"comparisons"`
	Decomposition []DecompositionRow `json:"decomposition"`
	Provenance    []ProvenanceRow    `json:"provenance"`
	Excluded      phases.Exclusions  `json:"excluded"`
	Warnings      []Warning          `json:"warnings"`
	// Ranks is present when the inputs hold two or more ranks of one job.
	Ranks *RanksSection `json:"ranks,omitempty"`
	// History compares each arm's phases with earlier runs of the baseline
	// (analyze --history; docs/statistics.md §11): wall per step, each run's median.
	History []HistoryRow `json:"history,omitempty"`
	// WithinRun compares each arm's phases with the baseline by the
	// stationary bootstrap over steps (analyze --within-run;
	// docs/statistics.md §12): within these runs only.
	WithinRun []WithinRunRow `json:"within_run,omitempty"`
	// Hardware is what GPU metrics sampling and CPU sampling recorded, per
	// phase (absent when the inputs recorded neither).
	Hardware *HardwareSection `json:"hardware,omitempty"`

	instances *phases.Store // every file's instances, in input order
	opts      Options       // the options it was built with (Options)
	// rankInputs are each export's rank processes as read (before rank
	// ids), which the dataset context carries for --from; nil without ranks.
	rankInputs map[string][]phases.RankProcess
	// rankUnits map each rank's statistics unit to the job's: ranks of one
	// run are one unit per block, not replicates (buildRanks).
	rankUnits map[phases.UnitID]phases.UnitID
	results   []*stats.Result         // per phase, in Phases order; nil entries when stats are off
	statsOff  bool                    // statistics were not requested (--no-stats)
	unitStart map[phases.UnitID]int64 // unit → start on the common clock (UnitStarts); the dataset context carries it
	plan      *UnitPlan               // instances placed in units, steps and phases
}

// ToolInfo names the tool that wrote a document.
type ToolInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Settings record how the statistics were computed.
type Settings struct {
	Confidence float64 `json:"confidence"`
	Resamples  int     `json:"resamples"`
	Seed       uint64  `json:"seed"`
	SkipSteps  int     `json:"skip_steps"`
	Quantile   string  `json:"quantile_definition"`
	Unit       string  `json:"unit"` // what one resampled unit is
}

// SummaryRow is one arm × phase of the summary.
type SummaryRow struct {
	Arm     string                   `json:"arm"`
	Phase   string                   `json:"phase"`
	N       int                      `json:"n"`      // step instances with the phase present
	Steps   int                      `json:"steps"`  // kept steps of the arm
	Blocks  int                      `json:"blocks"` // units (blocks or profiles) of the arm
	Method  string                   `json:"method"`
	Metrics map[string]MetricSummary `json:"metrics"`
}

// MetricSummary are the point values and CIs of one metric (ns, bytes or
// count per step instance). Quantiles are Empirical (the lower median).
type MetricSummary struct {
	Mean     float64     `json:"mean"`
	Median   float64     `json:"median"`
	P90      float64     `json:"p90"`
	P99      float64     `json:"p99"`
	MeanCI   *[2]float64 `json:"mean_ci"`
	MedianCI *[2]float64 `json:"median_ci"`
	P90CI    *[2]float64 `json:"p90_ci,omitempty"`
	P99CI    *[2]float64 `json:"p99_ci,omitempty"`
	// Absent: not measured — the metric's source table was not recorded in
	// any input of the arm, or the metric does not split into parts (the
	// (unannotated) row's GPU busy time). JSON writes null.
	Absent bool `json:"-"`
}

// MarshalJSON writes an absent metric as null: a measured zero and a
// missing value differ.
func (m MetricSummary) MarshalJSON() ([]byte, error) {
	if m.Absent {
		return []byte("null"), nil
	}
	type plain MetricSummary
	return json.Marshal(plain(m))
}

// ComparisonRow is one arm against the baseline for one phase, metric and statistic.
type ComparisonRow struct {
	Phase     string  `json:"phase"`
	Metric    string  `json:"metric"`
	Stat      string  `json:"stat"`
	Baseline  string  `json:"baseline"`
	Arm       string  `json:"arm"`
	BaseValue float64 `json:"baseline_value"`
	ArmValue  float64 `json:"arm_value"`
	stats.RatioEstimate
	Diff        float64       `json:"diff"`
	DiffCI      *[2]float64   `json:"diff_ci"`
	Significant bool          `json:"significant"`
	Verdict     stats.Verdict `json:"verdict"`
	Method      string        `json:"method"`
	NUnits      int           `json:"n_units"`
	Warnings    []string      `json:"warnings"`
}

// DecompositionRow is one exclusive part of a phase's mean wall difference
// (Of empty), or an inner part: a metric contained in the part or total Of
// (sync_ns's own/other/no-GPU split; wall_ns's other-process and idle GPU
// time), estimated with the same resamples but outside the sum.
type DecompositionRow struct {
	Phase     string      `json:"phase"`
	Baseline  string      `json:"baseline"`
	Arm       string      `json:"arm"`
	Component string      `json:"component"`
	Of        string      `json:"of,omitempty"` // inner parts: the part or total containing it
	DiffNs    float64     `json:"diff_ns"`
	DiffCI    *[2]float64 `json:"diff_ci"`
	Share     float64     `json:"share"` // of the baseline's mean wall
	ShareCI   *[2]float64 `json:"share_ci"`
	Method    string      `json:"method"`
}

// Warning is one diagnostic with its scope: the pipeline's one warning
// type. Warnings about an input (File set) come from reading and segmenting
// it; the others from merging and the statistics.
type Warning = nsys.Warning

// MetricNames are the metric columns in order.
func MetricNames() []string {
	out := make([]string, phases.NumMetrics())
	for m := range phases.NumMetrics() {
		out[m] = m.Name()
	}
	return out
}

// StatsOff says statistics were not requested (--no-stats), as opposed to
// requested but without any unit to resample.
func (d *Doc) StatsOff() bool { return d.statsOff }
