package dataset

import (
	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
)

// hardwareTables are the gpu_metrics, gpu_metric_instances and
// host_hotspots tables (none when the inputs recorded no sampling).
func hardwareTables(d *analysis.Doc) []*export.Table {
	h := d.Hardware
	if h == nil {
		return nil
	}
	var out []*export.Table
	if len(h.GPUMetrics) > 0 {
		out = append(out, GPUMetricsTable(d), GPUMetricInstancesTable(d))
	}
	if len(h.Hotspots) > 0 {
		out = append(out, HostHotspotsTable(d))
	}
	return out
}

// GPUMetricsTable is gpu_metrics: per arm, phase and GPU metric, the mean
// over steps of the step's time-weighted mean, with its CI.
func GPUMetricsTable(d *analysis.Doc) *export.Table {
	t := export.NewTable("gpu_metrics", "schema "+analysis.HardwareSchemaVersion+": per arm, phase and GPU metric (nsys profile --gpu-metrics-devices), the mean over kept steps of the metric's time-weighted mean over the GPU windows of the step's instances of the phase (first to last GPU op of each: phase_instances.gpu_start_ns to + proj_ns), on the GPUs the process used; null: no GPU work of its own, or no sample of the metric overlapped it",
		export.Column{Name: "arm", Type: export.TypeString, Doc: "arm label, as in phase_instances.arm"},
		export.Column{Name: "phase", Type: export.TypeString, Doc: "phase name; the step's own name for the whole step"},
		export.Column{Name: "metric", Type: export.TypeString, Doc: "the metric's name as TARGET_INFO_GPU_METRICS names it, without its unit"},
		export.Column{Name: "metric_unit", Type: export.TypeString, Doc: "the unit the export gives in brackets (e.g. Throughput %, MHz), except Hz for a clock labelled MHz whose samples can only be Hz (above 100,000); values are as GPU_METRICS stores them"},
		export.Column{Name: "n", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "kept steps with a value"},
		export.Column{Name: "mean", Type: export.TypeFloat64, Nullable: true, Doc: "mean over kept steps of the step's time-weighted mean; null: not measured (no GPU work of its own, or no sample period overlapped it)"},
		export.Column{Name: "mean_ci_lo", Type: export.TypeFloat64, Nullable: true, Doc: "lower end of the block-bootstrap CI of the mean, as in phase_summary; null: no CI (statistics off, too few units, or not measured)"},
		export.Column{Name: "mean_ci_hi", Type: export.TypeFloat64, Nullable: true, Doc: "upper end of the CI of the mean; null: no CI (statistics off, too few units, or not measured)"},
		export.Column{Name: "method", Type: export.TypeString, Doc: "CI method, as in phase_summary; point: no statistics"},
	)
	for _, r := range d.Hardware.GPUMetricRows {
		_ = t.AppendRow(export.Str(r.Arm), export.Str(r.Phase), export.Str(r.Metric), export.Str(r.Unit), export.Int(int64(r.N)),
			optFloat(r.Mean), ci(r.MeanCI, 0), ci(r.MeanCI, 1), export.Str(r.Method))
	}
	return t
}

// GPUMetricInstancesTable is gpu_metric_instances: each instance's
// time-weighted mean of each metric, keyed by its row in phase_instances.
func GPUMetricInstancesTable(d *analysis.Doc) *export.Table {
	h := d.Hardware
	t := export.NewTable("gpu_metric_instances", "schema "+analysis.HardwareSchemaVersion+": per step or phase instance (instance = its row in phase_instances, from 0) and GPU metric, the time-weighted mean over the instance's GPU window (phase_instances.gpu_start_ns to + proj_ns); null: no GPU ops of its own (the (unannotated) row never has), or no sample period overlapped it",
		export.Column{Name: "instance", Type: export.TypeInt64, Doc: "row of phase_instances, from 0"},
		export.Column{Name: "phase", Type: export.TypeString, Doc: "the instance's phase, as in phase_instances.phase"},
		export.Column{Name: "metric", Type: export.TypeString, Doc: "as in gpu_metrics.metric"},
		export.Column{Name: "metric_unit", Type: export.TypeString, Doc: "as in gpu_metrics.metric_unit"},
		export.Column{Name: "mean", Type: export.TypeFloat64, Nullable: true, Doc: "time-weighted mean of the metric over the instance's GPU window; null: no GPU ops, or no sample period overlapped it"},
		export.Column{Name: "covered_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "time of the instance's GPU window covered by sample periods (summed over its process's GPUs)"},
	)
	g, xs := h.InstanceMeans(), d.Store()
	if g == nil || xs == nil {
		return t
	}
	nm := len(g.Metrics)
	for i := range xs.Len() {
		ph := xs.Phase(i)
		for m, mt := range g.Metrics {
			v, ok := g.Mean(i, m)
			cov := int64(0)
			if k := i*nm + m; k < len(g.Covered) {
				cov = g.Covered[k]
			}
			_ = t.AppendRow(export.Int(int64(i)), export.Str(ph), export.Str(mt.Name), export.Str(mt.Unit), export.OptFloat(v, ok), export.Int(cov))
		}
	}
	return t
}

// HostHotspotsTable is host_hotspots: per phase, its functions by CPU
// samples.
func HostHotspotsTable(d *analysis.Doc) *export.Table {
	t := export.NewTable("host_hotspots", "schema "+analysis.HardwareSchemaVersion+": per phase, the functions of its CPU samples (nsys profile --sample=cpu), by self then inclusive samples (the 50 with most self and the 50 with most inclusive samples a phase); shares are of the phase's samples",
		export.Column{Name: "phase", Type: export.TypeString, Doc: "phase name; the step's own name for the whole step"},
		export.Column{Name: "phase_samples", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "CPU samples inside the phase's instances, on their threads"},
		export.Column{Name: "rank", Type: export.TypeInt64, Doc: "1 = most self samples"},
		export.Column{Name: "function", Type: export.TypeString, Doc: "the frame's symbol (StringIds via SAMPLING_CALLCHAINS.symbol); an address when unresolved"},
		export.Column{Name: "module", Type: export.TypeString, Doc: "the frame's module (library, executable or .py file)"},
		export.Column{Name: "python", Type: export.TypeBool, Doc: "a Python frame (its module is a .py file)"},
		export.Column{Name: "self_samples", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "samples whose innermost frame is the function"},
		export.Column{Name: "inclusive_samples", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "samples with the function anywhere in the backtrace (once a sample)"},
		export.Column{Name: "self_share", Type: export.TypeFloat64, Unit: export.UnitRatio, Doc: "self_samples / phase_samples"},
		export.Column{Name: "inclusive_share", Type: export.TypeFloat64, Unit: export.UnitRatio, Doc: "inclusive_samples / phase_samples"},
		export.Column{Name: "sample_period_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "median interval between two samples of one thread (an estimate)"},
	)
	for _, p := range d.Hardware.Hotspots {
		for k, f := range p.Functions {
			_ = t.AppendRow(export.Str(p.Phase), export.Int(p.Samples), export.Int(int64(k+1)), export.Str(f.Function), export.Str(f.Module), export.Bool(f.Python),
				export.Int(f.Self), export.Int(f.Inclusive), export.Float(f.SelfShare), export.Float(f.InclusiveShare), export.Int(d.Hardware.CPUPeriodNs))
		}
	}
	return t
}
