package analysis

import (
	"math"
	"slices"

	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// HardwareSchemaVersion versions the gpu_metrics and host_hotspots tables
// (and the hardware section of the JSON document) on their own.
const HardwareSchemaVersion = "2.0"

// HardwareSection is the hardware section of the JSON document: GPU metrics
// and CPU samples per phase.
type HardwareSection struct {
	SchemaVersion string `json:"schema_version"`
	// GPUMetrics lists the recorded metrics (name and unit as the export
	// names them); GPUMetricRows their per-arm, per-phase means.
	GPUMetrics    []phases.GPUMetric `json:"gpu_metrics"`
	GPUSamples    int64              `json:"gpu_metric_samples"`
	GPUPeriodNs   int64              `json:"gpu_metric_period_ns"` // median interval between two samples of a metric on a GPU
	GPUMetricRows []GPUMetricRow     `json:"gpu_metric_rows"`
	CPUSamples    int64              `json:"cpu_samples"`
	CPUPeriodNs   int64              `json:"cpu_sample_period_ns"` // median interval between two samples of a thread
	Hotspots      []HotspotPhase     `json:"host_hotspots"`
	// Timeline is the first input's GPU metrics over the run, in equal
	// bins (for drawing them; not in the tables).
	Timeline *phases.GPUTimeline `json:"-"`
	// instances holds the per-instance means, in phase_instances order.
	instances *phases.GPUMetrics
}

// InstanceMeans are the per-instance means of the GPU metrics, in
// phase_instances order (the gpu_metric_instances table); nil without GPU
// metrics.
func (h *HardwareSection) InstanceMeans() *phases.GPUMetrics { return h.instances }

// GPUMetricRow is one metric of one phase and arm: the mean over kept
// steps of the step's time-weighted mean (a step's instances of the phase
// pooled), with its block-bootstrap CI as for every metric. Mean is nil
// when no instance of the phase and arm had a sample of the metric.
type GPUMetricRow struct {
	Arm    string      `json:"arm"`
	Phase  string      `json:"phase"`
	Metric string      `json:"metric"`
	Unit   string      `json:"unit"`
	N      int         `json:"n"` // steps with a value
	Mean   *float64    `json:"mean"`
	MeanCI *[2]float64 `json:"mean_ci"`
	Method string      `json:"method"`
}

// HotspotPhase is one phase's CPU samples and its functions.
type HotspotPhase struct {
	Phase   string `json:"phase"`
	Samples int64  `json:"samples"`
	// CPUOtherNs is Σ cpu_other_ns over the phase's kept instances that
	// measured it (0: not measured): the host time outside CUDA calls,
	// beside the samples for context. It is no denominator: samples also
	// land in CUDA calls and in warm-up steps, so a share of it could pass
	// 100%.
	CPUOtherNs int64             `json:"cpu_other_ns"`
	Functions  []HotspotFunction `json:"functions"`
}

// HotspotFunction is one function's samples in a phase; SelfShare is
// its self samples / the phase's samples (the share every sampling
// profiler prints; a phase is listed only with samples), InclusiveShare
// likewise.
type HotspotFunction struct {
	phases.FunctionSamples
	SelfShare      float64 `json:"self_share_of_samples"`
	InclusiveShare float64 `json:"inclusive_share_of_samples"`
}

// maxHotspotFunctions bounds the functions kept per phase and ranking: the
// top ones by self samples and the top ones by inclusive samples (a frame
// every sample passes through, such as the launch path, has few self
// samples).
const maxHotspotFunctions = 50

// buildHardware fills d.Hardware from the inputs' GPU metrics and CPU
// samples; nothing when none recorded either.
func (d *Doc) buildHardware(files []*FileResult, o *Options) {
	var g *phases.GPUMetrics
	n := 0
	h := &HardwareSection{SchemaVersion: HardwareSchemaVersion}
	recorded := false
	for _, fr := range files {
		r := fr.Result
		nf := r.InstanceStore().Len()
		if r.GPUMetrics != nil {
			recorded = true
			if h.Timeline == nil {
				h.Timeline = r.GPUMetrics.Timeline
			}
		}
		if r.GPUMetrics != nil || g != nil {
			g = g.Append(r.GPUMetrics, nf, n)
		}
		n += nf
		if r.Hotspots != nil {
			recorded = true
			h.CPUSamples += r.Hotspots.Samples
			h.CPUPeriodNs = max(h.CPUPeriodNs, r.Hotspots.PeriodNs)
		}
	}
	if !recorded {
		return
	}
	d.Hardware = h
	if g != nil {
		h.instances, h.GPUMetrics, h.GPUSamples, h.GPUPeriodNs = g, g.Metrics, g.Samples, g.Period
		h.GPUMetricRows = d.gpuMetricRows(g, o)
	}
	h.Hotspots = d.hotspotPhases(files)
}

// gpuMetricUnits are the statistics' units of phase ph for the GPU
// metrics: per unit, per metric, per kept step the time-weighted mean of
// the step's instances of the phase (NaN: none with a sample).
func (p *UnitPlan) gpuMetricUnits(ph int, g *phases.GPUMetrics) []stats.Unit {
	nm := len(g.Metrics)
	byUnit := map[int32]int{}
	var out []stats.Unit
	var sums [][][]float64 // per unit position, metric, step: Σ value·ns
	var covs [][][]float64
	for _, i := range p.byPhase[ph] {
		u := p.unit[i]
		k, ok := byUnit[u]
		if !ok {
			k = len(out)
			byUnit[u] = k
			out = append(out, p.statsUnit(int(u), nanSeries(nm, p.kept[u])))
			sums, covs = append(sums, zeros(nm, p.kept[u])), append(covs, zeros(nm, p.kept[u]))
		}
		for m := range nm {
			at := int(i)*nm + m
			if at < len(g.Covered) && g.Covered[at] > 0 {
				sums[k][m][p.step[i]] += g.Sum[at]
				covs[k][m][p.step[i]] += float64(g.Covered[at])
			}
		}
	}
	for k := range out {
		for m := range nm {
			for t, c := range covs[k][m] {
				if c > 0 {
					out[k].Steps[m][t] = sums[k][m][t] / c
				}
			}
		}
	}
	return out
}

func zeros(nm, n int) [][]float64 {
	out := make([][]float64, nm)
	for m := range out {
		out[m] = make([]float64, n)
	}
	return out
}

// gpuMetricRows are the per-arm, per-phase means of every GPU metric with
// their CIs (point values only with --no-stats or n = 1).
func (d *Doc) gpuMetricRows(g *phases.GPUMetrics, o *Options) []GPUMetricRow {
	names := make([]string, len(g.Metrics))
	for m, mt := range g.Metrics {
		names[m] = mt.Name
	}
	rows := []GPUMetricRow{}
	for i, ph := range d.Phases {
		units := d.plan.gpuMetricUnits(i, g)
		if len(units) == 0 {
			continue
		}
		var res *stats.Result
		if !o.NoStats {
			r, err := stats.Analyze(ph, names, units, o.statsOptions("", []int{}, false))
			if err == nil {
				res = r
			}
		}
		for _, arm := range d.Arms {
			rows = append(rows, pointRows(ph, arm, g.Metrics, units, res)...)
		}
	}
	return rows
}

// pointRows are one arm's rows of a phase: the statistics' mean and CI
// where they ran, else the mean over present steps.
func pointRows(ph, arm string, metrics []phases.GPUMetric, units []stats.Unit, res *stats.Result) []GPUMetricRow {
	var am []stats.ArmMetric
	method := "point"
	if res != nil {
		for _, a := range res.Arms {
			if a.Arm == arm {
				am, method = a.Metrics, a.Method
			}
		}
	}
	var out []GPUMetricRow
	seen := false
	for m, mt := range metrics {
		row := GPUMetricRow{Arm: arm, Phase: ph, Metric: mt.Name, Unit: mt.Unit, Method: method}
		sum, n := 0.0, 0
		for _, u := range units {
			if u.Arm != arm {
				continue
			}
			seen = true
			for _, v := range u.Steps[m] {
				if !math.IsNaN(v) {
					sum += v
					n++
				}
			}
		}
		row.N = n
		if n > 0 {
			mean := sum / float64(n)
			row.Mean = &mean
			if i := slices.IndexFunc(am, func(a stats.ArmMetric) bool { return a.Metric == mt.Name }); i >= 0 && am[i].N > 0 {
				row.MeanCI = am[i].MeanCI
			}
		}
		out = append(out, row)
	}
	if !seen {
		return nil
	}
	return out
}

// hotspotPhases merges the inputs' hotspots per phase (in Phases order)
// and adds each function's share of the phase's samples.
func (d *Doc) hotspotPhases(files []*FileResult) []HotspotPhase {
	type key struct{ fn, mod string }
	samples := map[string]int64{}
	fns := map[string]map[key]*phases.FunctionSamples{}
	for _, fr := range files {
		if fr.Result.Hotspots == nil {
			continue
		}
		for _, p := range fr.Result.Hotspots.Phases {
			samples[p.Phase] += p.Samples
			if fns[p.Phase] == nil {
				fns[p.Phase] = map[key]*phases.FunctionSamples{}
			}
			for _, f := range p.Functions {
				k := key{f.Function, f.Module}
				if e := fns[p.Phase][k]; e != nil {
					e.Self += f.Self
					e.Inclusive += f.Inclusive
				} else {
					c := f
					fns[p.Phase][k] = &c
				}
			}
		}
	}
	cpuOther := map[string]int64{}
	for i := range d.instances.Len() {
		if !d.instances.Warmup(i) && d.instances.Null(i)&(1<<uint(phases.CPUOther)) == 0 {
			cpuOther[d.instances.Phase(i)] += d.instances.Metric(i, phases.CPUOther)
		}
	}
	out := []HotspotPhase{}
	for _, ph := range d.Phases {
		if samples[ph] == 0 {
			continue
		}
		hp := HotspotPhase{Phase: ph, Samples: samples[ph], CPUOtherNs: cpuOther[ph]}
		for _, f := range fns[ph] {
			hp.Functions = append(hp.Functions, HotspotFunction{FunctionSamples: *f,
				SelfShare: float64(f.Self) / float64(hp.Samples), InclusiveShare: float64(f.Inclusive) / float64(hp.Samples)})
		}
		hp.Functions = topHotspots(hp.Functions, maxHotspotFunctions)
		out = append(out, hp)
	}
	return out
}

// topHotspots keeps the functions among the n with the most self samples
// or among the n with the most inclusive samples, ordered by self then
// inclusive samples, then name and module.
func topHotspots(fs []HotspotFunction, n int) []HotspotFunction {
	bySelf := func(a, b HotspotFunction) int { return phases.BySelf(a.FunctionSamples, b.FunctionSamples) }
	if len(fs) > n {
		type key struct{ fn, mod string }
		slices.SortFunc(fs, func(a, b HotspotFunction) int { return phases.ByInclusive(a.FunctionSamples, b.FunctionSamples) })
		topIncl := map[key]bool{}
		for _, f := range fs[:n] {
			topIncl[key{f.Function, f.Module}] = true
		}
		slices.SortFunc(fs, bySelf)
		keep := fs[:n:n]
		for _, f := range fs[n:] {
			if topIncl[key{f.Function, f.Module}] {
				keep = append(keep, f)
			}
		}
		return keep
	}
	slices.SortFunc(fs, bySelf)
	return fs
}
