package phases

import (
	"math"
	"slices"
)

// metricAttrib adds sample periods to the instances they overlap: a sweep
// over the instances in start order, with the instances open at the
// current time in active.
type metricAttrib struct {
	g       *GPUMetrics
	nm      int
	starts  []int64 // per instance
	ends    []int64
	gpus    []uint64 // per instance: bit g set when its process used GPU g (all bits: every GPU)
	order   []int32  // instances by start
	next    int      // first instance of order not yet active
	active  []int32
	maxGap  int64   // longest sample period added so far
	periods []int64 // a sample of the periods, for their median
	// the timeline: bins of width binW from binStart, per metric Σ value·ns and ns
	binStart, binW int64
	binSum         [][]float64
	binNs          [][]int64
}

func newMetricAttrib(st *Store, g *GPUMetrics, use []GPUUse) *metricAttrib {
	n := st.Len()
	a := &metricAttrib{g: g, nm: len(g.Metrics), starts: make([]int64, n), ends: make([]int64, n), gpus: make([]uint64, n), order: make([]int32, n)}
	g.Sum, g.Covered = make([]float64, n*a.nm), make([]int64, n*a.nm)
	used := map[int64]uint64{}
	for _, u := range use {
		if u.GPU < 0 || u.GPU >= 64 {
			continue
		}
		for _, p := range u.Pids {
			used[p] |= 1 << uint(u.GPU)
		}
	}
	for i := range n {
		a.order[i] = int32(i)
		a.starts[i], a.ends[i], a.gpus[i] = metricWindow(st, i, used)
	}
	slices.SortStableFunc(a.order, func(x, y int32) int {
		return int(min(max(a.starts[x]-a.starts[y], -1), 1))
	})
	a.binSum, a.binNs = make([][]float64, a.nm), make([][]int64, a.nm)
	return a
}

// metricWindow is the time and GPUs over which instance i's GPU metrics
// are averaged. GPU work runs after the host code that launches it, so an
// instance with GPU ops takes its GPU window (first op start to last op
// end, the vendor's projection) on its process's GPUs; one without takes
// none (null: no GPU work of its own) unless the export traced no CUDA
// (its host range on every GPU with metrics: a sampling-only export). An
// other thread's row takes the window of that thread's GPU work during
// the step; the (unannotated) row, the step less its phases, has no
// window of its own: none.
func metricWindow(st *Store, i int, used map[int64]uint64) (start, end int64, gpus uint64) {
	start, end = st.Start(i), st.End(i)
	if st.Phase(i) == Unannotated {
		return start, end, 0
	}
	if lo, hi, ok := st.GPUWindow(i); ok {
		start, end = lo, hi
	} else if st.Null(i)&(1<<uint(GPUOps)) == 0 || st.OtherThread(i) {
		return start, end, 0
	}
	gpus = ^uint64(0)
	if b := used[st.Pid(i)]; b != 0 {
		gpus = b
	}
	return start, end, gpus
}

// add adds metric sr's value v over the sample period (p, t].
func (a *metricAttrib) add(sr *gpuSeries, p, t int64, v float64) {
	if t <= p || t-p > maxSampleGap {
		return
	}
	if len(a.periods) < 1<<16 {
		a.periods = append(a.periods, t-p)
	}
	a.addTimeline(sr.metric, p, t, v)
	a.maxGap = max(a.maxGap, t-p)
	for a.next < len(a.order) && a.starts[a.order[a.next]] < t {
		a.active = append(a.active, a.order[a.next])
		a.next++
	}
	// Instances that ended before any period still to come can start
	// leave the active list (periods arrive in order of their end t).
	low := t - a.maxGap
	keep := a.active[:0]
	bit := uint64(1) << uint(sr.gpu&63)
	for _, i := range a.active {
		if a.ends[i] <= low {
			continue
		}
		keep = append(keep, i)
		if a.gpus[i]&bit == 0 {
			continue
		}
		lo, hi := max(p, a.starts[i]), min(t, a.ends[i])
		if hi > lo {
			k := int(i)*a.nm + sr.metric
			a.g.Sum[k] += v * float64(hi-lo)
			a.g.Covered[k] += hi - lo
		}
	}
	a.active = keep
}

// restart starts the sweep over the instances again, for periods that
// end before those added so far.
func (a *metricAttrib) restart() {
	a.next, a.active = 0, a.active[:0]
}

// addTimeline adds the period to the bins it overlaps, doubling the bin
// width while the bins would outgrow 2·TimelineBins.
func (a *metricAttrib) addTimeline(m int, p, t int64, v float64) {
	if a.binW == 0 {
		a.binStart, a.binW = p, max(t-p, 1)
	}
	if p < a.binStart {
		p = a.binStart
	}
	for (t-a.binStart)/a.binW >= 2*TimelineBins {
		a.binW *= 2
		for k := range a.binSum {
			a.binSum[k], a.binNs[k] = halveFloat(a.binSum[k]), halveInt(a.binNs[k])
		}
	}
	for b := (p - a.binStart) / a.binW; ; b++ {
		lo, hi := max(p, a.binStart+b*a.binW), min(t, a.binStart+(b+1)*a.binW)
		if hi <= lo {
			break
		}
		for int64(len(a.binSum[m])) <= b {
			a.binSum[m], a.binNs[m] = append(a.binSum[m], 0), append(a.binNs[m], 0)
		}
		a.binSum[m][b] += v * float64(hi-lo)
		a.binNs[m][b] += hi - lo
	}
}

func halveFloat(s []float64) []float64 {
	out := make([]float64, (len(s)+1)/2)
	for i, v := range s {
		out[i/2] += v
	}
	return out
}

func halveInt(s []int64) []int64 {
	out := make([]int64, (len(s)+1)/2)
	for i, v := range s {
		out[i/2] += v
	}
	return out
}

// timeline is the bins' means (nil without samples).
func (a *metricAttrib) timeline() *GPUTimeline {
	if a.binW == 0 {
		return nil
	}
	bins := 0
	for _, s := range a.binNs {
		bins = max(bins, len(s))
	}
	tl := &GPUTimeline{Start: a.binStart, End: a.binStart + int64(bins)*a.binW, Mean: make([][]float64, a.nm)}
	for m := range a.nm {
		row := make([]float64, bins)
		for b := range row {
			row[b] = math.NaN()
			if b < len(a.binNs[m]) && a.binNs[m][b] > 0 {
				row[b] = a.binSum[m][b] / float64(a.binNs[m][b])
			}
		}
		tl.Mean[m] = row
	}
	return tl
}

// medianPeriod is the median sample period seen (0 without any).
func (a *metricAttrib) medianPeriod() int64 {
	if len(a.periods) == 0 {
		return 0
	}
	slices.Sort(a.periods)
	return a.periods[len(a.periods)/2]
}
