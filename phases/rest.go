package phases

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nsysphase/nsysphase/nsys"
)

// A step's depth-1 rows add up to the step: its phases, an (unannotated)
// row for the time outside every phase, and, beside them, rows for the
// work other threads of the process did during the step (PyTorch runs the
// backward pass on its autograd thread, data loaders copy on theirs).

// splitMetrics do not split into the parts of a step: the union of GPU
// intervals, the first-to-last span and the largest delay. The
// (unannotated) row leaves them null.
//
// What the process's GPUs ran (other processes' work, idle, and the split of
// sync time by it) is measured against the GPUs the process had used by the
// range's end, which differs between a step and its phases: the
// (unannotated) row leaves those null too.
var splitMetrics = []Metric{GPUBusy, Proj, QueueMax, OverlapOtherProcess, OtherProcessGPU, GPUIdle, SyncOwnGPU, SyncOtherGPU, SyncNoGPU}

// unannotatedNull is the (unannotated) row's null mask.
var unannotatedNull = func() uint64 {
	var m uint64
	for _, x := range splitMetrics {
		m |= 1 << uint(x)
	}
	return m
}()

// fillUnannotated sets the (unannotated) row to the step minus its depth-1
// phases, metric by metric: every other metric is a sum over calls, ops or
// time inside the range, and the phases are disjoint parts of the step's
// thread, so the rows add up to the step exactly.
//
// Phases that overlap (ranges that cross, or start/end ranges ended on
// another thread) do not partition the step: then only the wall splits —
// the time outside every phase, gapNs — and every other metric is null.
func fillUnannotated(rest, step *Instance, rows []Instance, gapNs int64) {
	rest.M = step.M
	var phaseWall int64
	for i := range rows {
		ph := &rows[i]
		if ph.Depth != 1 || ph.OtherThread || ph == rest {
			continue
		}
		phaseWall += ph.M[Wall]
		for m := range NumMetrics {
			rest.M[m] -= ph.M[m]
		}
	}
	if phaseWall+gapNs != step.M[Wall] {
		// cpu_other carries the wall internally, so the parts still sum to
		// it for the statistics; it is null like the other parts.
		rest.M = [NumMetrics]int64{Wall: gapNs, CPUOther: gapNs}
		rest.QueueMeanNs, rest.HasQueue = 0, false
		rest.Null = ^uint64(0) &^ (1 << uint(Wall))
		return
	}
	for _, m := range splitMetrics {
		rest.M[m] = 0
	}
	rest.QueueMeanNs, rest.HasQueue = 0, false
	rest.Null |= step.Null
}

// otherRow is one other thread's work during a step: the span of its
// top-level ranges inside the step.
type otherRow struct {
	gtid       int64
	start, end int64
	name       string
	noRanges   bool // a thread without ranges (PyTorch's autograd thread): the row spans the step
}

// otherThreadRows lists, for a step on thread t over [s, e], the other
// threads of the process whose top-level ranges overlap it, each with the
// span of those ranges clipped to the step.
func (tr *trace) otherThreadRows(procThreads []*threadRanges, t *threadRanges, s, e int64) []otherRow {
	var out []otherRow
	for _, o := range procThreads {
		if o == t {
			continue
		}
		// The thread's top-level ranges, sorted by start: none holds
		// another, so their ends increase too and the first that ends
		// after s is found by binary search.
		tops := o.topLevel()
		i := sort.Search(len(tops), func(i int) bool { return o.ranges[tops[i]].end > s })
		lo, hi := int64(0), int64(0)
		names := map[string]bool{}
		lib := true
		found := false
		for ; i < len(tops) && o.ranges[tops[i]].start < e; i++ {
			r := &o.ranges[tops[i]]
			if !found {
				lo, hi, found = max(r.start, s), min(r.end, e), true
			}
			lo, hi = min(lo, max(r.start, s)), max(hi, min(r.end, e))
			names[r.nm.phase] = true
			lib = lib && r.nm.lib
		}
		if !found || hi <= lo {
			continue
		}
		out = append(out, otherRow{gtid: o.gtid, start: lo, end: hi, name: tr.otherThreadName(o.gtid, names, lib)})
	}
	return out
}

// topLevel lists the indexes of t's top-level ranges, in start order;
// computed once (layout's serial pass calls it).
func (t *threadRanges) topLevel() []int32 {
	if t.tops == nil {
		t.tops = []int32{}
		for i := range t.ranges {
			if t.ranges[i].depth == 0 {
				t.tops = append(t.tops, int32(i))
			}
		}
	}
	return t.tops
}

// IsOtherThreadRow reports whether a phase name is one otherThreadName
// gives.
func IsOtherThreadRow(phase string) bool {
	return strings.HasPrefix(phase, "(thread ") || strings.HasSuffix(phase, " (autograd thread)") || strings.Contains(phase, " (thread ") ||
		strings.Contains(phase, " (autograd thread ")
}

// otherThreadName names another thread's row: PyTorch's autograd thread
// runs the backward pass; a thread whose ranges are one user range is
// named after it; otherwise after the thread.
func (tr *trace) otherThreadName(gtid int64, names map[string]bool, lib bool) string {
	thread := tr.threadNm[gtid]
	if strings.HasPrefix(thread, "pt_autograd") {
		if tr.autogradMany[nsys.Pid(gtid)] {
			return "backward (autograd thread " + strings.TrimPrefix(thread, "pt_autograd_") + ")"
		}
		return "backward (autograd thread)"
	}
	label := thread
	if label == "" {
		label = fmt.Sprintf("tid %d", nsys.Tid(gtid))
	}
	if len(names) == 1 && !lib {
		for n := range names {
			return fmt.Sprintf("%s (thread %s)", n, label)
		}
	}
	return fmt.Sprintf("(thread %s)", label)
}

// absentMetrics are the metrics each activity table is the only source of.
// A table is absent when its activity was not traced (or, the export being
// lazy, did not happen): its metrics are null, not zero.
func absentMask(absent []string) uint64 {
	has := map[string]bool{}
	for _, t := range absent {
		has[t] = true
	}
	var m uint64
	set := func(ms ...Metric) {
		for _, x := range ms {
			m |= 1 << uint(x)
		}
	}
	gpu := []Metric{GPUBusy, Proj, GPUOps, QueueSum, QueueMax, Launches, OverlapOtherProcess, OtherProcessGPU, GPUIdle,
		SyncOwnGPU, SyncOtherGPU, SyncNoGPU, OtherThreadOps}
	if has[nsys.TableRuntime] {
		// Without CUDA API calls nothing on the host is measured and no GPU
		// op can be joined to a range.
		set(CPUOther, Launch, SyncAPI, MemcpyAPI, Alloc, OtherAPI, APICalls, Launches, GraphLaunches, HostSyncs, AllocCalls,
			OtherThreadSyncNs, OtherThreadSyncs)
		set(gpu...)
		has[nsys.TableKernel], has[nsys.TableMemcpy], has[nsys.TableMemset], has[nsys.TableGraphTrace] = true, true, true, true
	}
	if has[nsys.TableKernel] {
		// Kernels are most of a GPU's work: without them a busy time,
		// span or op count of the copies alone would pass for the GPU's.
		set(KernelCount, KernelSum, OtherThreadKernelNs)
		set(gpu...)
	}
	if has[nsys.TableMemcpy] {
		set(H2DCount, H2DBytes, H2DNs, D2HCount, D2HBytes, D2HNs, D2DCount, D2DBytes, D2DNs, P2PCount, P2PBytes, P2PNs, PageableCopies, PinnedCopies)
	}
	if has[nsys.TableMemset] {
		set(MemsetCount, MemsetBytes, MemsetNs)
	}
	if has[nsys.TableGraphTrace] {
		set(GraphTraceNs)
	}
	return m
}
