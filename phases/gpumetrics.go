package phases

import (
	"container/heap"
	"fmt"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/nsys"
)

// GPUMetric is one metric that the export's GPU metrics sampling recorded
// (`nsys profile --gpu-metrics-devices`), named as TARGET_INFO_GPU_METRICS
// names it.
type GPUMetric struct {
	Name string `json:"name"` // e.g. "SMs Active"
	Unit string `json:"unit"` // what the export puts in brackets, e.g. "Throughput %"; "" when none
}

// GPUMetrics holds, per step and phase instance (row of Result.Store) and
// per recorded metric, the time-weighted mean of the metric over the
// instance's GPU window on the GPUs its process used.
//
// GPU work runs after the host code that launches it, often while the
// host is already in the next phase: an instance's GPU window is its
// first GPU op's start to its last one's end (the vendor's projection).
// A sample at time t of one metric on one GPU reports the sampling period
// that ends at t: its value holds on (t_prev, t], t_prev being the
// previous sample of the same metric and GPU. An instance's mean is
// Σ value·|(t_prev, t] ∩ window| / Σ |(t_prev, t] ∩ window| over the
// samples of its process's GPUs. An instance without GPU ops has none
// (null), except in an export without a CUDA trace, where its host range
// stands in on every GPU with metrics; a metric with no sample period
// overlapping the window is not measured (null), never 0.
type GPUMetrics struct {
	Metrics []GPUMetric `json:"metrics"`
	GPUs    []int64     `json:"gpus"`      // GPUs with metrics (TARGET_INFO_GPU.id)
	Samples int64       `json:"samples"`   // rows of GPU_METRICS read
	Period  int64       `json:"period_ns"` // median interval between two samples of a metric on a GPU
	// Sum[i*len(Metrics)+m] is Σ value·ns of metric m over instance i,
	// Covered the ns its sample periods cover; mean = Sum / Covered.
	Sum     []float64 `json:"-"`
	Covered []int64   `json:"-"`
	// Timeline is the metrics over the whole recording, averaged over all
	// GPUs in TimelineBins equal bins (for drawing them over the run).
	Timeline *GPUTimeline `json:"-"`
}

// GPUTimeline is the metrics over the run in equal bins: Mean[m][b] is the
// time-weighted mean of metric m over bin b (NaN without samples).
type GPUTimeline struct {
	Start, End int64
	Mean       [][]float64
}

// TimelineBins is the number of bins of GPUMetrics.Timeline.
const TimelineBins = 200

// maxSampleGap is the longest interval between two samples of a series
// that still counts as one sample period: longer gaps (sampling paused)
// are not measured.
const maxSampleGap = int64(1e9)

// Mean is the time-weighted mean of metric m over instance i; ok false when
// no sample period of the metric overlaps the instance.
func (g *GPUMetrics) Mean(i, m int) (float64, bool) {
	if g == nil {
		return 0, false
	}
	k := i*len(g.Metrics) + m
	if k >= len(g.Covered) || g.Covered[k] == 0 {
		return 0, false
	}
	return g.Sum[k] / float64(g.Covered[k]), true
}

// Append appends o's instances after g's (for results merged in order);
// metrics are matched by name and unit, those o lacks are null.
func (g *GPUMetrics) Append(o *GPUMetrics, nO, nG int) *GPUMetrics {
	if g == nil && o == nil {
		return nil
	}
	out := &GPUMetrics{}
	idx := map[GPUMetric]int{}
	for _, src := range []*GPUMetrics{g, o} {
		if src == nil {
			continue
		}
		for _, m := range src.Metrics {
			if _, ok := idx[m]; !ok {
				idx[m] = len(out.Metrics)
				out.Metrics = append(out.Metrics, m)
			}
		}
		out.Samples += src.Samples
		out.Period = max(out.Period, src.Period)
		out.GPUs = append(out.GPUs, src.GPUs...)
	}
	nm := len(out.Metrics)
	out.Sum, out.Covered = make([]float64, (nG+nO)*nm), make([]int64, (nG+nO)*nm)
	for k, src := range []*GPUMetrics{g, o} {
		if src == nil {
			continue
		}
		base, n := 0, nG
		if k == 1 {
			base, n = nG, nO
		}
		for i := range n {
			for m, mt := range src.Metrics {
				at := i*len(src.Metrics) + m
				if at >= len(src.Covered) {
					continue
				}
				j := (base+i)*nm + idx[mt]
				out.Sum[j], out.Covered[j] = src.Sum[at], src.Covered[at]
			}
		}
	}
	return out
}

// gpuSeries is one metric on one GPU.
type gpuSeries struct {
	metric int
	gpu    int64
	prev   int64 // timestamp of its last sample (when seen)
	seen   bool
}

// sampleHeap reorders GPU_METRICS rows by time: the table is in time order
// but for a few rows.
type sampleHeap []nsys.GPUMetricSample

func (h sampleHeap) Len() int           { return len(h) }
func (h sampleHeap) Less(i, j int) bool { return h[i].Timestamp < h[j].Timestamp }
func (h sampleHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sampleHeap) Push(x any)        { *h = append(*h, x.(nsys.GPUMetricSample)) }
func (h *sampleHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// reorderWindow is how many GPU_METRICS rows the reorder buffer holds: it
// puts rows a little out of time order back in order; a series that goes
// back further restarts the sweep (measureGPUMetrics).
const reorderWindow = 1 << 15

// measureGPUMetrics fills res.GPUMetrics from GPU_METRICS (nothing when
// the export has no GPU metrics). use names the GPUs each process ran work
// on.
func measureGPUMetrics(f *nsys.File, res *Result, use []GPUUse) error {
	if !f.HasTable(nsys.TableGPUMetrics) || !f.HasTable(nsys.TableGPUMetricDefs) {
		return nil
	}
	defs, err := f.GPUMetricDefs()
	if err != nil || len(defs) == 0 {
		return err
	}
	g := &GPUMetrics{}
	metricOf := map[GPUMetric]int{}
	series := map[[2]int64]*gpuSeries{}
	for _, d := range defs {
		mt := GPUMetric{Name: d.Name, Unit: d.Unit}
		m, ok := metricOf[mt]
		if !ok {
			m = len(g.Metrics)
			metricOf[mt] = m
			g.Metrics = append(g.Metrics, mt)
		}
		series[[2]int64{d.TypeID, d.MetricID}] = &gpuSeries{metric: m, gpu: d.GPU()}
		if !slices.Contains(g.GPUs, d.GPU()) {
			g.GPUs = append(g.GPUs, d.GPU())
		}
	}
	slices.Sort(g.GPUs)
	st := res.InstanceStore()
	a := newMetricAttrib(st, g, use)
	var h sampleHeap
	var last int64
	first := true
	peak := make([]int64, len(g.Metrics)) // each metric's largest sample
	flush := func(s nsys.GPUMetricSample) {
		sr := series[[2]int64{s.TypeID, s.MetricID}]
		if sr == nil {
			return
		}
		peak[sr.metric] = max(peak[sr.metric], s.Value)
		if !first && s.Timestamp < last {
			// The exporter writes GPU_METRICS one GPU after another: the
			// sweep over the instances starts again for the next GPU.
			a.restart()
		}
		first, last = false, s.Timestamp
		if sr.seen && s.Timestamp >= sr.prev {
			a.add(sr, sr.prev, s.Timestamp, float64(s.Value))
		}
		sr.prev, sr.seen = s.Timestamp, true
	}
	for s, err := range f.GPUMetrics() {
		if err != nil {
			return err
		}
		g.Samples++
		heap.Push(&h, s)
		if h.Len() > reorderWindow {
			flush(heap.Pop(&h).(nsys.GPUMetricSample))
		}
	}
	for h.Len() > 0 {
		flush(heap.Pop(&h).(nsys.GPUMetricSample))
	}
	g.Period = a.medianPeriod()
	hertzUnits(g.Metrics, peak)
	g.Timeline = a.timeline()
	res.GPUMetrics = g
	if shared := sharedGPUs(g.GPUs, use); shared != "" {
		res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnGPUMetrics, f.Path, "%s: GPU metrics are the whole GPU's, so a phase's means include the other processes' work in the same sample periods (profile one process a GPU to read them as the phase's)", shared))
	}
	if short := tooShortPhases(st, a, g.Period); len(short) > 0 {
		res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnGPUMetrics, f.Path, "GPU metrics are sampled every %.1f µs, longer than the median GPU window of %s: their GPU metric means rest on one or two samples (record with a higher --gpu-metrics-frequency)", float64(g.Period)/1e3, quoteList(short)))
	}
	return nil
}

// maxClockMHz bounds any GPU clock, in MHz: 100 GHz, fifty times today's
// fastest. A clock metric with a sample above it cannot be in MHz.
const maxClockMHz = 100_000

// hertzUnits corrects the unit of clock metrics the exporter names "[MHz]"
// but stores in Hz (a GH200 recording of nsys 2024.5 holds "GPC Clock
// Frequency [MHz]" samples of 3.4e8 to 8.6e8): a metric labelled MHz whose
// largest sample exceeds maxClockMHz is labelled Hz, its values kept as
// GPU_METRICS stores them. An export that stores MHz keeps its label.
func hertzUnits(ms []GPUMetric, peak []int64) {
	for m := range ms {
		if ms[m].Unit == "MHz" && peak[m] > maxClockMHz {
			ms[m].Unit = "Hz"
		}
	}
}

func quoteList(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", n)
	}
	return out
}

// tooShortPhases are the phases whose median GPU window is shorter than the
// sampling period.
func tooShortPhases(st *Store, a *metricAttrib, period int64) []string {
	if period <= 0 {
		return nil
	}
	windows := map[string][]int64{}
	var order []string
	for i := range st.Len() {
		if a.gpus[i] == 0 { // no window: measures nothing
			continue
		}
		p := st.Phase(i)
		if _, ok := windows[p]; !ok {
			order = append(order, p)
		}
		windows[p] = append(windows[p], a.ends[i]-a.starts[i])
	}
	var short []string
	for _, p := range order {
		w := windows[p]
		slices.Sort(w)
		if w[len(w)/2] < period {
			short = append(short, p)
		}
	}
	return short
}

// sharedGPUs names the GPUs with metrics on which more than one traced
// process ran work ("" when none did): "GPU 0 ran work of 2 processes".
func sharedGPUs(withMetrics []int64, use []GPUUse) string {
	var parts []string
	for _, u := range use {
		if len(u.Pids) > 1 && slices.Contains(withMetrics, u.GPU) {
			parts = append(parts, fmt.Sprintf("GPU %d ran work of %d processes", u.GPU, len(u.Pids)))
		}
	}
	return strings.Join(parts, "; ")
}
