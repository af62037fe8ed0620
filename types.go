package nsysphase

import (
	"maps"
	"slices"

	"github.com/nsysphase/nsysphase/diag"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// The result types of an analysis. Each is this package's own struct,
// filled from the pipeline's internal rows by one unexported function
// below; its JSON field names are those of the document `nsysphase analyze
// --format json` prints, described in docs/schema.md.
//
// Conventions: durations are nanoseconds (int64 where measured per
// instance, float64 where they are statistics); a nil pointer or slice is
// "not measured", "not applicable" or "no interval", which a zero never is;
// a confidence interval is a *[2]float64 holding its lower and upper end;
// every share and ratio names its denominator.

// MetricInfo documents one per-instance metric.
type MetricInfo struct {
	// Name is the metric's name, e.g. "wall_ns": the key of
	// SummaryRow.Metrics, ComparisonRow.Metric, Instance.Metric and the
	// phase_instances column.
	Name string
	// Unit is "ns", "bytes" or "count".
	Unit string
	// Doc says what the metric measures (docs/schema.md, "What each number
	// means").
	Doc string
}

// Metrics documents every per-instance metric, in column order. The first
// seven partition wall time: wall_ns = cpu_other_ns + launch_ns + sync_ns +
// memcpy_api_ns + alloc_ns + other_api_ns.
func Metrics() []MetricInfo {
	out := make([]MetricInfo, phases.NumMetrics())
	for m := range phases.NumMetrics() {
		mi := m.Info()
		out[m] = MetricInfo{Name: mi.Name, Unit: mi.Unit, Doc: mi.Doc}
	}
	return out
}

// Instance is one step or phase instance: one NVTX range that a rule
// matched, on one thread, inside one step instance of one arm block (a row
// of phase_instances). Times are on the export's clock, in ns.
//
// Its metrics, named as Metrics lists them, are read with Metric; a metric
// that was not measured (its source table absent from the export, or a
// total that does not split into the (unannotated) row's parts) is null,
// which a measured zero never is. Instance is not a JSON type: Tables and
// WriteDataset carry the instances, nulls included.
type Instance struct {
	// File is the export the instance comes from, as given to Analyze.
	File string
	// Pid is the OS process id.
	Pid int64
	// Tid is the OS thread id of the range.
	Tid int64
	// Thread is the thread's name; "" when unnamed.
	Thread string
	// Arm is the arm label: "<file-arm>/<nvtx-arm>", either part alone, or
	// "" without arms.
	Arm string
	// Block is the block index within the arm.
	Block int
	// BlockLabel uniquely names the block (or profile) the statistics
	// resample, e.g. "run.sqlite#graph block 2".
	BlockLabel string
	// Step is the step index within the block, from 0.
	Step int
	// StepLabel is the step instance's own range name when the step is a
	// numbered family ("ProfilerStep#12"); "" otherwise.
	StepLabel string
	// Phase is the phase name; a step row carries the step's range name.
	Phase string
	// IsStep is true for the step instance itself.
	IsStep bool
	// Depth is 0 for steps, 1 for their children, and so on.
	Depth int
	// StartNs is the range's start on the export's clock, in ns.
	StartNs int64
	// EndNs is the range's end on the export's clock, in ns.
	EndNs int64
	// Warmup marks an instance left out of the statistics (SkipSteps).
	Warmup bool
	// OtherThread marks a row of another thread's work during the step
	// (e.g. "backward (autograd thread)"): it ran beside the step's
	// phases and is outside the step's wall.
	OtherThread bool
	// QueueMeanNs is queue_sum_ns divided by the GPU ops with a queue delay,
	// in ns; nil without GPU ops.
	QueueMeanNs *float64
	// PhaseGapNs is, for a step, its wall not covered by any phase
	// instance, in ns; nil for phases.
	PhaseGapNs *int64
	// UnattributedKernelNs is, for a step, the kernel time of the step
	// outside every phase, in ns; nil for phases.
	UnattributedKernelNs *int64
	// GPUStartNs is the start of the instance's first GPU op (the vendor's
	// projected start): with proj_ns, its GPU window, over which its GPU
	// metrics are averaged; nil without GPU ops.
	GPUStartNs *int64
	// Rank is the rank of the instance's process in a distributed job; nil
	// when the inputs hold fewer than two ranks.
	Rank *int

	metrics [phases.MaxMetrics]int64
	null    uint64 // bit m: metric m was not measured
}

// Metric returns the metric named name (a MetricInfo.Name, e.g. "wall_ns")
// of x, in its unit (ns, bytes or count). ok is false when the metric was
// not measured (null) or no metric has that name.
func (x *Instance) Metric(name string) (v int64, ok bool) {
	m, known := phases.MetricByName(name)
	if !known || x.null&(1<<uint(m)) != 0 {
		return 0, false
	}
	return x.metrics[m], true
}

// IsNull reports whether the metric named name was not measured for x (or
// no metric has that name): the null of phase_instances, never a zero.
func (x *Instance) IsNull(name string) bool {
	_, ok := x.Metric(name)
	return !ok
}

// instance converts one decoded instance of the pipeline.
func instance(x *phases.Instance) Instance {
	out := Instance{File: x.File, Pid: x.Pid, Tid: x.Tid, Thread: x.Thread, Arm: x.Arm, Block: x.Block, BlockLabel: x.Unit.String(),
		Step: x.Step, StepLabel: x.StepLabel, Phase: x.Phase, IsStep: x.IsStep, Depth: x.Depth, StartNs: x.Start, EndNs: x.End,
		Warmup: x.Warmup, OtherThread: x.OtherThread, metrics: x.M, null: x.Null}
	if x.HasQueue {
		q := x.QueueMeanNs
		out.QueueMeanNs = &q
	}
	if x.HasStepOnly {
		gap, unattr := x.PhaseGapNs, x.UnattrKerNs
		out.PhaseGapNs, out.UnattributedKernelNs = &gap, &unattr
	}
	if x.HasGPUStart {
		g := x.GPUStart
		out.GPUStartNs = &g
	}
	if x.HasRank {
		r := x.Rank
		out.Rank = &r
	}
	return out
}

// SummaryRow is one arm × phase of the summary: how many step instances
// stand behind it and, per metric, the point values per step instance with
// their confidence intervals (a row of phase_summary, one per metric there).
type SummaryRow struct {
	// Arm is the arm label, as in Instance.Arm.
	Arm string `json:"arm"`
	// Phase is the phase name; the step's own name for the whole step.
	Phase string `json:"phase"`
	// N is the number of kept step instances in which the phase is
	// present: the observations behind the point values.
	N int `json:"n"`
	// Steps is the number of kept steps of the arm (warm-up left out).
	Steps int `json:"steps"`
	// Blocks is the number of units (blocks or profiles) of the arm: the
	// unit of replication of the intervals.
	Blocks int `json:"blocks"`
	// Method is the CI method: "bootstrap-expanded-percentile",
	// "cluster-jackknife-t", "within-run-batch" or "none"
	// (docs/statistics.md).
	Method string `json:"method"`
	// Metrics holds every metric, by name (Metrics lists them). A nil
	// entry is a metric that was not measured for this arm and phase: its
	// source table is absent from the arm's inputs, or it does not split
	// into the (unannotated) row's parts. JSON writes it as null.
	Metrics map[string]*MetricSummary `json:"metrics"`
}

// MetricSummary is one metric's point values over the step instances of
// an arm and phase (the phase's total within each step instance), in the
// metric's unit (ns, bytes or count), with their confidence intervals.
// Quantiles are empirical: the lowest value whose cumulative share reaches
// p (the lower median), not numpy's linear interpolation.
type MetricSummary struct {
	// Mean is the mean per step instance.
	Mean float64 `json:"mean"`
	// Median is the lower median per step instance.
	Median float64 `json:"median"`
	// P90 is the 90th percentile per step instance.
	P90 float64 `json:"p90"`
	// P99 is the 99th percentile per step instance.
	P99 float64 `json:"p99"`
	// MeanCI is the CI of the mean; nil without one: statistics off
	// (NoStats), or the method for this many units gives none (the
	// warnings say which).
	MeanCI *[2]float64 `json:"mean_ci"`
	// MedianCI is the CI of the median; nil as MeanCI.
	MedianCI *[2]float64 `json:"median_ci"`
	// P90CI is the CI of P90, computed for wall_ns with Options.Quantiles
	// only; nil otherwise, and as MeanCI.
	P90CI *[2]float64 `json:"p90_ci,omitempty"`
	// P99CI is the CI of P99; nil as P90CI.
	P99CI *[2]float64 `json:"p99_ci,omitempty"`
}

// summaryRow converts one summary row.
func summaryRow(r *analysis.SummaryRow) SummaryRow {
	out := SummaryRow{Arm: r.Arm, Phase: r.Phase, N: r.N, Steps: r.Steps, Blocks: r.Blocks, Method: r.Method,
		Metrics: make(map[string]*MetricSummary, len(r.Metrics))}
	for name, m := range r.Metrics {
		out.Metrics[name] = metricSummary(m)
	}
	return out
}

// metricSummary converts one metric's summary; nil when not measured.
func metricSummary(m analysis.MetricSummary) *MetricSummary {
	if m.Absent {
		return nil
	}
	return &MetricSummary{Mean: m.Mean, Median: m.Median, P90: m.P90, P99: m.P99,
		MeanCI: ci(m.MeanCI), MedianCI: ci(m.MedianCI), P90CI: ci(m.P90CI), P99CI: ci(m.P99CI)}
}

// ci copies a confidence interval (nil stays nil), so that no caller
// changes the analysis' own.
func ci(p *[2]float64) *[2]float64 {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// ComparisonRow is one arm against the baseline for one phase, metric and
// statistic (a row of comparisons): the ratio arm / baseline and the
// difference arm − baseline, with their confidence intervals, and the
// verdict. Values are in the metric's unit (ns, bytes or count).
type ComparisonRow struct {
	// Phase is the phase name (or the step's).
	Phase string `json:"phase"`
	// Metric is the metric compared (a MetricInfo.Name).
	Metric string `json:"metric"`
	// Stat is the statistic compared: "mean", "median", "p90" or "p99".
	Stat string `json:"stat"`
	// Baseline is the baseline arm (Options.Baseline, default the arm of
	// the earliest block).
	Baseline string `json:"baseline"`
	// Arm is the arm compared with the baseline.
	Arm string `json:"arm"`
	// BaseValue is the statistic in the baseline arm.
	BaseValue float64 `json:"baseline_value"`
	// ArmValue is the statistic in the arm.
	ArmValue float64 `json:"arm_value"`
	// Ratio is ArmValue / BaseValue (below 1 the arm is lower: faster, for
	// times); nil when BaseValue is 0, so no ratio exists. RatioCI is its
	// CI; nil without a ratio, with statistics off (NoStats), or when the
	// method for this many units gives none (the warnings say which).
	stats.RatioEstimate
	// Diff is ArmValue − BaseValue.
	Diff float64 `json:"diff"`
	// DiffCI is the CI of Diff; nil with statistics off, or when the
	// method gives none.
	DiffCI *[2]float64 `json:"diff_ci"`
	// Significant is true when RatioCI excludes 1 (between-unit methods
	// only).
	Significant bool `json:"significant"`
	// Verdict is "changed", "~" (no significant change), or "" without a
	// between-unit CI. The document (Analysis.MarshalJSON, Render "json")
	// writes "" as null; this struct's own JSON writes "".
	Verdict stats.Verdict `json:"verdict"`
	// Method is the CI method (as SummaryRow.Method; paired when the arms'
	// blocks interleave).
	Method string `json:"method"`
	// NUnits is the number of resampled units (blocks, profiles or rounds
	// of paired blocks) behind the CI.
	NUnits int `json:"n_units"`
	// Warnings are the codes of this comparison's warnings (details in
	// Analysis.Warnings); empty when none.
	Warnings []string `json:"warnings"`
}

// comparisonRow converts one comparison: the same fields (a conversion),
// copied deep so that the caller's row shares no memory with the pipeline's.
func comparisonRow(r *analysis.ComparisonRow) ComparisonRow {
	out := ComparisonRow(*r)
	out.RatioEstimate = r.RatioEstimate.Clone()
	out.DiffCI = ci(r.DiffCI)
	out.Warnings = slices.Clone(r.Warnings)
	return out
}

// DecompositionRow is one part of a phase's mean wall difference between
// an arm and the baseline (a row of decomposition), in ns per step
// instance, with its CI and its share of the baseline's mean wall. The six
// exclusive parts of wall (Of "") sum to the difference of mean wall; an
// inner part (Of set) is contained in the part or total Of and is outside
// that sum.
type DecompositionRow struct {
	// Phase is the phase name (or the step's).
	Phase string `json:"phase"`
	// Baseline is the baseline arm.
	Baseline string `json:"baseline"`
	// Arm is the arm compared with the baseline.
	Arm string `json:"arm"`
	// Component is the part: one of the six exclusive parts of wall
	// (cpu_other_ns, launch_ns, sync_ns, memcpy_api_ns, alloc_ns,
	// other_api_ns), or an inner part (sync_own_gpu_ns, gpu_idle_ns, …).
	Component string `json:"component"`
	// Of is "" for the six exclusive parts; for an inner part, the part or
	// total that contains it (sync_ns, wall_ns).
	Of string `json:"of,omitempty"`
	// DiffNs is the difference of the part's mean per step instance, arm −
	// baseline, in ns.
	DiffNs float64 `json:"diff_ns"`
	// DiffCI is the CI of DiffNs, in ns; nil with statistics off, or when
	// the method for this many units gives none.
	DiffCI *[2]float64 `json:"diff_ci"`
	// Share is DiffNs divided by the baseline arm's mean wall_ns of the
	// phase (a fraction: 0.1 is 10% of the baseline's wall).
	Share float64 `json:"share"`
	// ShareCI is the CI of Share; nil as DiffCI.
	ShareCI *[2]float64 `json:"share_ci"`
	// Method is the CI method (as SummaryRow.Method).
	Method string `json:"method"`
}

// decompositionRow converts one part of a decomposition: the same fields
// (a conversion), its intervals copied.
func decompositionRow(r *analysis.DecompositionRow) DecompositionRow {
	out := DecompositionRow(*r)
	out.DiffCI, out.ShareCI = ci(r.DiffCI), ci(r.ShareCI)
	return out
}

// ProvenanceRow describes one input: what produced the export (Nsight
// Systems and export schema versions, GPUs, driver, CUDA, the graph trace
// mode), what its segmentation found, what the trace itself shows about
// GPU sharing, and the run manifest beside it with the claims the trace
// contradicts. Its JSON is this flat row (keys as the provenance table's
// columns where it has them), not the document's nested provenance entry.
type ProvenanceRow struct {
	// File is the export, as given to Analyze.
	File string `json:"file"`
	// NsysVersion is the Nsight Systems version that exported the file.
	NsysVersion string `json:"nsys_version"`
	// ExportSchemaVersion is the SQLite export schema version.
	ExportSchemaVersion string `json:"export_schema_version"`
	// GPUs are the GPUs the export lists; empty when it lists none.
	GPUs []GPU `json:"gpus"`
	// DriverVersion is the NVIDIA driver version; "" when not recorded.
	DriverVersion string `json:"driver_version"`
	// CUDADriverVersion is the CUDA version of the driver, e.g. "13.0"; ""
	// when not recorded.
	CUDADriverVersion string `json:"cuda_driver_version"`
	// OS describes the operating system; "" when not recorded.
	OS string `json:"os"`
	// GraphTraceMode is the capture's --cuda-graph-trace mode as the
	// export records it ("Graph", "Node"); "" when unknown.
	GraphTraceMode string `json:"cuda_graph_trace_mode"`
	// Processes are the profiled processes (and NVIDIA daemons) the export
	// lists, by pid; empty for exports without a PROCESSES table.
	Processes []Process `json:"processes"`
	// Step is the step range this input's segmentation used.
	Step string `json:"step"`
	// Steps is the number of step instances found in the input.
	Steps int `json:"steps"`
	// AbsentActivityTables are the activity tables the export lacks: the
	// metrics that come from them are null, never zero.
	AbsentActivityTables []string `json:"absent_activity_tables"`
	// MPSActive is true when kernels of different processes overlapped on
	// one GPU: the trace's only reliable sign of CUDA MPS.
	MPSActive bool `json:"mps_active"`
	// CrossProcessGPUOverlapNs is the time, in ns, GPU work of two or more
	// processes ran at once on one GPU.
	CrossProcessGPUOverlapNs int64 `json:"cross_process_gpu_overlap_ns"`
	// MPSProcessesSeen are the processes named like an MPS server or client,
	// as "pid name" (a daemon of an earlier run can show up).
	MPSProcessesSeen []string `json:"mps_processes_seen"`
	// GraphLaunchesByArm counts, per arm, the cudaGraphLaunch calls inside
	// steps.
	GraphLaunchesByArm map[string]int64 `json:"graph_launches_by_arm"`
	// StepsByArm counts, per arm, the step instances the trace holds
	// (warm-up steps included).
	StepsByArm map[string]int64 `json:"steps_by_arm"`
	// Manifest is the run manifest beside the export (FILE.manifest.json),
	// verbatim; nil when there is none.
	Manifest map[string]any `json:"manifest"`
	// Mismatches are the manifest's claims the trace contradicts, one
	// sentence each; empty when none (or without a manifest).
	Mismatches []string `json:"mismatches"`
}

// GPU is one GPU an export lists.
type GPU struct {
	// ID is the GPU's index in the export.
	ID int64 `json:"id"`
	// Name is the product name, e.g. "NVIDIA H200".
	Name string `json:"name"`
	// UUID is the GPU's UUID.
	UUID string `json:"uuid"`
	// ComputeMajor is the major part of the compute capability (9 for
	// 9.0).
	ComputeMajor int64 `json:"compute_major"`
	// ComputeMinor is the minor part of the compute capability.
	ComputeMinor int64 `json:"compute_minor"`
	// SMCount is its number of streaming multiprocessors.
	SMCount int64 `json:"sm_count"`
	// TotalMemoryBytes is its memory, in bytes.
	TotalMemoryBytes int64 `json:"total_memory_bytes"`
}

// Process is one process an export lists.
type Process struct {
	// Pid is the OS process id.
	Pid int64 `json:"pid"`
	// Name is the process's name.
	Name string `json:"name"`
}

// provenanceRow converts one input's provenance; in is the same input as
// segmentation described it (nil when unknown).
func provenanceRow(r *analysis.ProvenanceRow, in *phases.Input) ProvenanceRow {
	out := ProvenanceRow{File: r.File, GPUs: []GPU{}, Processes: []Process{}, AbsentActivityTables: []string{},
		MPSActive: r.Evidence.MPSActive, CrossProcessGPUOverlapNs: r.Evidence.CrossProcessGPUOverlapNs,
		MPSProcessesSeen: append([]string{}, r.Evidence.MPSProcessesSeen...), GraphLaunchesByArm: maps.Clone(r.Evidence.GraphLaunchesByArm),
		StepsByArm: maps.Clone(r.Evidence.StepsByArm), Manifest: cloneJSON(r.Manifest), Mismatches: append([]string{}, r.Mismatches...)}
	if p := r.Provenance; p != nil {
		out.NsysVersion, out.ExportSchemaVersion, out.DriverVersion, out.CUDADriverVersion, out.OS, out.GraphTraceMode =
			p.NsysVersion, p.SchemaVersion, p.DriverVersion, p.CUDADriverVersion, p.OS, p.GraphTraceMode
		for _, g := range p.GPUs {
			out.GPUs = append(out.GPUs, GPU{ID: g.ID, Name: g.Name, UUID: g.UUID, ComputeMajor: g.ComputeMajor, ComputeMinor: g.ComputeMinor,
				SMCount: g.SMCount, TotalMemoryBytes: g.TotalMemory})
		}
		for _, pr := range p.Processes {
			out.Processes = append(out.Processes, Process{Pid: pr.Pid, Name: pr.Name})
		}
	}
	if in != nil {
		out.Step, out.Steps = in.Step, in.Steps
		out.AbsentActivityTables = append(out.AbsentActivityTables, in.Absent...)
	}
	return out
}

// cloneJSON copies a decoded JSON object deeply (nil stays nil).
func cloneJSON(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	var value func(v any) any
	value = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			return cloneJSON(v)
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = value(x)
			}
			return out
		}
		return v
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = value(v)
	}
	return out
}

// HistoryRow is one arm and phase of the analysis against the history runs
// of the baseline (Analysis.CompareWithHistory): the t prediction interval
// over runs on the log scale (docs/statistics.md §11), with the fields of
// stats.HistoryComparison. Each run gives one value, its statistic over its
// kept steps, in the metric's unit; the history and candidate values are
// geometric means of those; CandidateRuns are the analysis' profiles of the
// arm.
type HistoryRow struct {
	// Phase is the phase name (or the step's).
	Phase string `json:"phase"`
	// Arm is the candidate's arm.
	Arm string `json:"arm"`
	// HistoryArm is the arm of the history runs it is compared with.
	HistoryArm string `json:"history_arm"`
	stats.HistoryComparison
}

// RunValue is one run's statistic of one metric (HistoryRow).
type RunValue = stats.RunValue

// historyRow converts one history comparison: the same fields (a
// conversion), copied deep so that the caller's row shares no memory with
// the pipeline's.
func historyRow(r *analysis.HistoryRow) HistoryRow {
	out := HistoryRow(*r)
	out.HistoryComparison = r.HistoryComparison.Clone()
	return out
}

// Warning is one diagnostic that does not stop an analysis, from any stage
// (reading an export, segmenting it, merging, the statistics), with its
// scope. Filter by Code; Message is the sentence a person reads.
type Warning struct {
	// Code is the warning's code, from the closed set docs/schema.md lists
	// ("Warning codes"), e.g. "no_replication".
	Code string `json:"code"`
	// File is the input the warning is about; "" when it is about no one
	// input.
	File string `json:"file,omitempty"`
	// Phase is the phase it is about; "" when none.
	Phase string `json:"phase,omitempty"`
	// Arm is the arm it is about; "" when none.
	Arm string `json:"arm,omitempty"`
	// Metric is the metric it is about; "" when none.
	Metric string `json:"metric,omitempty"`
	// Message is the whole sentence, naming the file when there is one.
	Message string `json:"message"`
	// Values are the numbers behind the message, by name, when useful;
	// nil otherwise.
	Values map[string]float64 `json:"values,omitempty"`
}

// Error is the warning's message, so that a Warning can be returned or
// wrapped as an error.
func (w Warning) Error() string { return w.Message }

// warning converts one diagnostic.
func warning(w *diag.Warning) Warning {
	return Warning{Code: w.Code, File: w.File, Phase: w.Phase, Arm: w.Arm, Metric: w.Metric, Message: w.Message, Values: maps.Clone(w.Values)}
}

// Settings record how an analysis' statistics were computed.
type Settings struct {
	// Confidence is the confidence level of every interval, e.g. 0.95.
	Confidence float64 `json:"confidence"`
	// Resamples is the number of bootstrap resamples.
	Resamples int `json:"resamples"`
	// Seed is the random seed of the resampling.
	Seed uint64 `json:"seed"`
	// SkipSteps is the number of warm-up steps left out at the start of
	// each block (the option, or the rules file's skip_steps).
	SkipSteps int `json:"skip_steps"`
}

// settings converts the document's settings.
func settings(s *analysis.Settings) Settings {
	return Settings{Confidence: s.Confidence, Resamples: s.Resamples, Seed: s.Seed, SkipSteps: s.SkipSteps}
}

// Exclusions count what segmentation left out or flagged, by reason, over
// every input.
type Exclusions struct {
	// UnclosedRanges are NVTX ranges that never ended.
	UnclosedRanges int `json:"unclosed_ranges"`
	// WarmupSteps are steps inside a warm-up range.
	WarmupSteps int `json:"warmup_steps"`
	// SkippedSteps are the first SkipSteps steps of each block: kept in
	// Instances with Warmup set, left out of the statistics.
	SkippedSteps int `json:"skipped_steps"`
	// OutsideArmSteps are steps in a process with arm blocks but in none
	// of them.
	OutsideArmSteps int `json:"outside_arm_steps"`
	// CrossThreadEnded are start/end ranges that ended on another thread
	// (kept on the start thread).
	CrossThreadEnded int `json:"cross_thread_ended"`
}

// exclusions converts the document's exclusion counts.
func exclusions(e *phases.Exclusions) Exclusions {
	return Exclusions{UnclosedRanges: e.UnclosedRanges, WarmupSteps: e.WarmupSteps, SkippedSteps: e.SkippedSteps,
		OutsideArmSteps: e.OutsideArmSteps, CrossThreadEnded: e.CrossThreadEnded}
}

// convert converts every element of xs with f.
func convert[T, U any](xs []U, f func(*U) T) []T {
	out := make([]T, len(xs))
	for i := range xs {
		out[i] = f(&xs[i])
	}
	return out
}
