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

// fillUnannotated sets the (unannotated) row to the step minus its depth-1
// phases, metric by metric: an additive metric (MetricInfo.Additive) is a
// sum over calls, ops or time inside the range, and the phases are disjoint
// parts of the step's thread, so the rows add up to the step exactly; the
// others are null in the row (unannotatedNull).
//
// Phases that overlap (ranges that cross, or start/end ranges ended on
// another thread) do not partition the step: then only the wall splits —
// the time outside every phase, gapNs — and every other metric is null.
func fillUnannotated(rest, step *Instance, rows []Instance, gapNs int64) {
	rest.M = step.M
	n := NumMetrics()
	var phaseWall int64
	for i := range rows {
		ph := &rows[i]
		if ph.Depth != 1 || ph.OtherThread || ph == rest {
			continue
		}
		phaseWall += ph.M[Wall]
		for m := range n {
			rest.M[m] -= ph.M[m]
		}
	}
	if phaseWall+gapNs != step.M[Wall] {
		// cpu_other carries the wall internally, so the parts still sum to
		// it for the statistics; it is null like the other parts.
		rest.M = [MaxMetrics]int64{Wall: gapNs, CPUOther: gapNs}
		rest.QueueMeanNs, rest.HasQueue = 0, false
		rest.Null = ^uint64(0) &^ (1 << uint(Wall))
		return
	}
	split := unannotatedNull()
	for m := range n {
		if split&(1<<uint(m)) != 0 {
			rest.M[m] = 0
		}
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
