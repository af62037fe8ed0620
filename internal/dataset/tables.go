package dataset

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/marks"
	"github.com/nsysphase/nsysphase/phases"
)

// InstancesTable is phase_instances: one row per step and phase instance.
func InstancesTable(d *analysis.Doc) *export.Table { return InstancesRows(d, 0, d.Store().Len()) }

// InstancesRows is rows [lo, hi) of phase_instances, for writers that
// encode the biggest table range by range (export.DatasetWriter.AddRows).
func InstancesRows(d *analysis.Doc, lo, hi int) *export.Table {
	return instancesRows(d.Store(), lo, hi)
}

// instancesRows is rows [lo, hi) of phase_instances of the instances xs.
func instancesRows(xs *phases.Store, lo, hi int) *export.Table {
	cols := make([]export.Column, len(instanceColumns()))
	for i, c := range instanceColumns() {
		cols[i] = c.Column
	}
	t := export.NewTable("phase_instances", "one row per step and phase instance; metrics as docs/schema.md ('What each number means') defines them, int64 ns", cols...)
	marks.Markf("instances rows [%d, %d) start", lo, hi)
	a := t.AppendRows(hi - lo)
	marks.Mark("rows appended")
	fillInstanceColumns(a, xs, lo, hi)
	marks.Mark("rows filled")
	return t
}

func ci(c *[2]float64, i int) export.Value {
	if c == nil {
		return export.Null()
	}
	return export.Float(c[i])
}

func optFloat(p *float64) export.Value {
	if p == nil {
		return export.Null()
	}
	return export.Float(*p)
}

// SummaryTable is phase_summary: one row per arm × phase × metric.
func SummaryTable(d *analysis.Doc) *export.Table {
	t := export.NewTable("phase_summary", "per arm, phase and metric: point values per step instance and their confidence intervals (null: not computed, see warnings)",
		export.Column{Name: "arm", Type: export.TypeString},
		export.Column{Name: "phase", Type: export.TypeString},
		export.Column{Name: "metric", Type: export.TypeString},
		export.Column{Name: "metric_unit", Type: export.TypeString, Doc: "unit of the metric and of every value and CI of the row: ns, bytes or count"},
		export.Column{Name: "n", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "step instances with the phase present"},
		export.Column{Name: "steps", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "kept steps of the arm"},
		export.Column{Name: "blocks", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "units (blocks or profiles)"},
		export.Column{Name: "method", Type: export.TypeString, Doc: "CI method"},
		export.Column{Name: "mean", Type: export.TypeFloat64, Nullable: true, Doc: "null: not measured (the metric's source table is absent)"},
		export.Column{Name: "mean_ci_lo", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "mean_ci_hi", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "median", Type: export.TypeFloat64, Nullable: true, Doc: "null: not measured (the metric's source table is absent)"},
		export.Column{Name: "median_ci_lo", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "median_ci_hi", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "p90", Type: export.TypeFloat64, Nullable: true, Doc: "null: not measured (the metric's source table is absent)"},
		export.Column{Name: "p90_ci_lo", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "p90_ci_hi", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "p99", Type: export.TypeFloat64, Nullable: true, Doc: "null: not measured (the metric's source table is absent)"},
		export.Column{Name: "p99_ci_lo", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "p99_ci_hi", Type: export.TypeFloat64, Nullable: true},
	)
	for _, r := range d.Summary {
		for m := range phases.NumMetrics() {
			mi := m.Info()
			s, ok := r.Metrics[mi.Name]
			if !ok {
				continue
			}
			val := func(v float64) export.Value {
				if s.Absent {
					return export.Null()
				}
				return export.Float(v)
			}
			_ = t.AppendRow(export.Str(r.Arm), export.Str(r.Phase), export.Str(mi.Name), export.Str(mi.Unit), export.Int(int64(r.N)), export.Int(int64(r.Steps)), export.Int(int64(r.Blocks)), export.Str(r.Method),
				val(s.Mean), ci(s.MeanCI, 0), ci(s.MeanCI, 1), val(s.Median), ci(s.MedianCI, 0), ci(s.MedianCI, 1),
				val(s.P90), ci(s.P90CI, 0), ci(s.P90CI, 1), val(s.P99), ci(s.P99CI, 0), ci(s.P99CI, 1))
		}
	}
	return t
}

// ComparisonsTable is comparisons: each arm against the baseline.
func ComparisonsTable(d *analysis.Doc) *export.Table {
	t := export.NewTable("comparisons", "each arm against the baseline, per phase, metric and statistic; ratio = arm / baseline",
		export.Column{Name: "phase", Type: export.TypeString},
		export.Column{Name: "metric", Type: export.TypeString},
		export.Column{Name: "metric_unit", Type: export.TypeString, Doc: "unit of the metric and of baseline_value, arm_value and diff: ns, bytes or count"},
		export.Column{Name: "stat", Type: export.TypeString},
		export.Column{Name: "baseline", Type: export.TypeString},
		export.Column{Name: "arm", Type: export.TypeString},
		export.Column{Name: "baseline_value", Type: export.TypeFloat64},
		export.Column{Name: "arm_value", Type: export.TypeFloat64},
		export.Column{Name: "ratio", Type: export.TypeFloat64, Unit: export.UnitRatio, Nullable: true},
		export.Column{Name: "ratio_ci_lo", Type: export.TypeFloat64, Unit: export.UnitRatio, Nullable: true},
		export.Column{Name: "ratio_ci_hi", Type: export.TypeFloat64, Unit: export.UnitRatio, Nullable: true},
		export.Column{Name: "diff", Type: export.TypeFloat64},
		export.Column{Name: "diff_ci_lo", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "diff_ci_hi", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "significant", Type: export.TypeBool, Doc: "the ratio CI excludes 1 (between-unit methods only)"},
		export.Column{Name: "verdict", Type: export.TypeString, Doc: "changed, ~ (no significant change) or empty (no between-unit CI)"},
		export.Column{Name: "method", Type: export.TypeString},
		export.Column{Name: "n_units", Type: export.TypeInt64, Unit: export.UnitCount},
		export.Column{Name: "warnings", Type: export.TypeString},
	)
	for _, c := range d.Comparisons {
		_ = t.AppendRow(export.Str(c.Phase), export.Str(c.Metric), export.Str(metricUnit(c.Metric)), export.Str(c.Stat), export.Str(c.Baseline), export.Str(c.Arm),
			export.Float(c.BaseValue), export.Float(c.ArmValue), optFloat(c.Ratio), ci(c.RatioCI, 0), ci(c.RatioCI, 1),
			export.Float(c.Diff), ci(c.DiffCI, 0), ci(c.DiffCI, 1), export.Bool(c.Significant), export.Str(c.Verdict.String()), export.Str(c.Method),
			export.Int(int64(c.NUnits)), export.Str(strings.Join(c.Warnings, ",")))
	}
	return t
}

// DecompositionTable is decomposition: the mean wall difference split into
// the six exclusive parts, then the inner parts (of: the part containing
// them).
func DecompositionTable(d *analysis.Doc) *export.Table {
	t := export.NewTable("decomposition", "mean wall difference (arm − baseline, ns per step) split into its six exclusive parts, then inner parts (rows with of set: sync_ns split by what the GPU ran, and wall_ns's other-process and idle GPU time), which do not add to the sum; share = of the baseline's mean wall",
		export.Column{Name: "phase", Type: export.TypeString},
		export.Column{Name: "baseline", Type: export.TypeString},
		export.Column{Name: "arm", Type: export.TypeString},
		export.Column{Name: "component", Type: export.TypeString},
		export.Column{Name: "diff_ns", Type: export.TypeFloat64, Unit: export.UnitNanoseconds},
		export.Column{Name: "diff_ci_lo_ns", Type: export.TypeFloat64, Unit: export.UnitNanoseconds, Nullable: true},
		export.Column{Name: "diff_ci_hi_ns", Type: export.TypeFloat64, Unit: export.UnitNanoseconds, Nullable: true},
		export.Column{Name: "share", Type: export.TypeFloat64, Unit: export.UnitRatio, Doc: "diff_ns / baseline mean wall_ns"},
		export.Column{Name: "share_ci_lo", Type: export.TypeFloat64, Unit: export.UnitRatio, Nullable: true},
		export.Column{Name: "share_ci_hi", Type: export.TypeFloat64, Unit: export.UnitRatio, Nullable: true},
		export.Column{Name: "method", Type: export.TypeString},
		export.Column{Name: "of", Type: export.TypeString, Doc: "empty for the six exclusive parts; for an inner part, the part or total that contains it"},
	)
	for _, c := range d.Decomposition {
		_ = t.AppendRow(export.Str(c.Phase), export.Str(c.Baseline), export.Str(c.Arm), export.Str(c.Component),
			export.Float(c.DiffNs), ci(c.DiffCI, 0), ci(c.DiffCI, 1), export.Float(c.Share), ci(c.ShareCI, 0), ci(c.ShareCI, 1), export.Str(c.Method), export.Str(c.Of))
	}
	return t
}

// ProvenanceTable is provenance: one row per input with its provenance,
// manifest (verbatim JSON) and evidence.
func ProvenanceTable(d *analysis.Doc) *export.Table {
	t := export.NewTable("provenance", "one row per input: versions, GPU, the run manifest verbatim and what the trace itself shows", append(analysis.ProvenanceColumns(),
		export.Column{Name: "mps_active", Type: export.TypeBool, Doc: "kernels of different processes overlapped on one GPU"},
		export.Column{Name: "cross_process_gpu_overlap_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds},
		export.Column{Name: "mps_processes_seen", Type: export.TypeString},
		export.Column{Name: "graph_launches_by_arm", Type: export.TypeString, Doc: "JSON object arm → cudaGraphLaunch calls inside steps"},
		export.Column{Name: "manifest", Type: export.TypeString, Nullable: true, Doc: "the run manifest beside the export, verbatim JSON; null when absent"},
		export.Column{Name: "mismatches", Type: export.TypeString, Doc: "manifest claims the trace contradicts, one per line"},
	)...)
	for _, p := range d.Provenance {
		gl, _ := json.Marshal(p.Evidence.GraphLaunchesByArm)
		man := export.Null()
		if p.Manifest != nil {
			b, _ := json.Marshal(p.Manifest)
			man = export.Str(string(b))
		}
		// p.File, not p.Provenance.File: the input as the analysis names it.
		_ = t.AppendRow(append(p.Provenance.Cells(p.File),
			export.Bool(p.Evidence.MPSActive), export.Int(p.Evidence.CrossProcessGPUOverlapNs), export.Str(strings.Join(p.Evidence.MPSProcessesSeen, ";")),
			export.Str(string(gl)), man, export.Str(strings.Join(p.Mismatches, "\n")))...)
	}
	return t
}

// metricUnit is the unit of a metric of the comparisons: the phases.Metrics
// entry's, else what the name's suffix says (_ns, _bytes; a count otherwise).
func metricUnit(name string) string {
	if m, ok := phases.MetricByName(name); ok {
		return m.Unit()
	}
	switch {
	case strings.HasSuffix(name, "_ns"):
		return export.UnitNanoseconds
	case strings.HasSuffix(name, "_bytes"):
		return export.UnitBytes
	}
	return export.UnitCount
}

// Tables are the tables `analyze --out` writes.
func Tables(d *analysis.Doc) []*export.Table {
	return append([]*export.Table{InstancesTable(d)}, TablesAfterInstances(d)...)
}

// TablesAfterInstances is Tables without its first, the instances table
// (which a caller may have written before the statistics were done).
func TablesAfterInstances(d *analysis.Doc) []*export.Table {
	// Independent reads of the finished Doc: built concurrently.
	build := []func(*analysis.Doc) *export.Table{SummaryTable, ComparisonsTable, DecompositionTable, ProvenanceTable}
	out := make([]*export.Table, len(build))
	var wg sync.WaitGroup
	for i, b := range build {
		wg.Go(func() { out[i] = b(d) })
	}
	wg.Wait()
	if d.Ranks != nil {
		out = append(out, StragglersTable(d))
	}
	if len(d.RankInputs()) > 0 { // with ranks, or one rank of a job analysed alone
		out = append(out, RankCollectivesTable(d))
	}
	out = append(out, hardwareTables(d)...)
	return out
}

func optInt(p *int64) export.Value {
	if p == nil {
		return export.Null()
	}
	return export.Int(*p)
}

// StragglersTable is stragglers: one row per matched step (or collective)
// and rank; written only when the inputs hold two or more ranks (schema 2.1).
func StragglersTable(d *analysis.Doc) *export.Table {
	t := export.NewTable("stragglers", "per matched step (or collective, when fewer than 10 steps hold collectives) and rank: the rank's arrival at the step's collectives and whether it arrived last; see the ranks section of the JSON document",
		export.Column{Name: "step", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "index among the matched steps (or collectives), from 0"},
		export.Column{Name: "step_key", Type: export.TypeString, Doc: "what matched the step across ranks: ProfilerStep#N, '<arm> block <b> step <i>' or 'collective <k>'"},
		export.Column{Name: "rank", Type: export.TypeInt64, Doc: "rank id"},
		export.Column{Name: "file", Type: export.TypeString, Doc: "export the rank comes from"},
		export.Column{Name: "pid", Type: export.TypeInt64, Doc: "OS process id of the rank"},
		export.Column{Name: "collectives", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "collectives of the step matched on every rank (by order)"},
		export.Column{Name: "first_arrival_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "the rank's arrival at the step's first collective: NCCL kernel start (GPU) or MPI call start (host), on the export's clock, or ns since the earliest session start for one export per rank"},
		export.Column{Name: "lateness_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "Σ over the step's collectives of (the rank's arrival − the earliest rank's arrival)"},
		export.Column{Name: "straggler", Type: export.TypeBool, Doc: "the rank with the largest lateness_ns of the step (the lowest rank on a tie)"},
		export.Column{Name: "step_skew_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "Σ over the step's collectives of (last − first arrival)"},
		export.Column{Name: "wait_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "Σ over the step's collectives of (the last rank's arrival − this rank's): the rank's wait inside them for the straggler"},
		export.Column{Name: "step_wall_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Nullable: true, Doc: "the rank's wall of the step; null when collectives are matched alone"},
	)
	file := map[int]analysis.RankRow{}
	for _, r := range d.Ranks.Ranks {
		file[r.Rank] = r
	}
	for _, s := range d.Ranks.Steps {
		r := file[s.Rank]
		_ = t.AppendRow(export.Int(int64(s.Step)), export.Str(s.Label), export.Int(int64(s.Rank)), export.Str(r.File), export.Int(r.Pid),
			export.Int(int64(s.Collectives)), export.Int(s.ArrivalNs), export.Int(s.LatenessNs), export.Bool(s.Straggler), export.Int(s.SkewNs), export.Int(s.WaitNs), optInt(s.StepWallNs))
	}
	return t
}

// RankCollectivesTable is rank_collectives: every rank's arrivals at
// collectives as read from the export, which --from needs to rebuild the
// ranks section; written when an input holds a rank process (schema 2.1).
func RankCollectivesTable(d *analysis.Doc) *export.Table {
	t := export.NewTable("rank_collectives", "one row per collective of each rank process (NCCL kernel or traced MPI collective call), as read from the export; --from rebuilds the ranks section from it",
		export.Column{Name: "file", Type: export.TypeString, Doc: "export the process comes from"},
		export.Column{Name: "pid", Type: export.TypeInt64, Doc: "OS process id"},
		export.Column{Name: "name", Type: export.TypeString, Doc: "kernel short name (ncclDevKernel_…) or MPI call name"},
		export.Column{Name: "start_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "kernel (or call) start on the export's clock: the rank's arrival"},
		export.Column{Name: "end_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "kernel (or call) end on the export's clock"},
		export.Column{Name: "device", Type: export.TypeInt64, Doc: "CUDA device of the kernel; -1 for MPI calls"},
		export.Column{Name: "exposed_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "the kernel's time not overlapped by the process's compute (non-NCCL) kernels on the same device; 0 for MPI calls"},
		export.Column{Name: "tid", Type: export.TypeInt64, Doc: "OS thread id of the host call that launched the kernel (or of the MPI call); 0 when unknown"},
		export.Column{Name: "call_start_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "start of that host call; -1 when unknown"},
	)
	for _, file := range slices.Sorted(maps.Keys(d.RankInputs())) {
		for _, p := range d.RankInputs()[file] {
			for _, c := range p.Collectives {
				_ = t.AppendRow(export.Str(file), export.Int(p.Pid), export.Str(c.Name), export.Int(c.Start), export.Int(c.End), export.Int(c.Device),
					export.Int(c.ExposedNs), export.Int(c.Tid), export.Int(c.CallStart))
			}
		}
	}
	return t
}
