package projection

import (
	"cmp"
	"iter"
	"math"
	"slices"
	"sort"
)

// nvtxRange is one kept NVTX range on a thread, with what the sweeps find.
// Ranges are an export's largest count kept whole (2 M at 30×), so the
// fields are ordered to pack into 64 bytes; depth and child counts are
// bounded by the thread's range count, which parent's int32 already caps.
type nvtxRange struct {
	start, end     int64
	opStart, opEnd int64
	ops            int64
	name           int32 // index into input.names (the name key's index until buildThreads)
	parent         int32 // index in the thread's sorted ranges; -1 for a root
	level          int32 // -1: no depth (the parent chain loops)
	children       int32
	closedPushPop  bool // for the unbalanced-stack check
}

// found yields every range instance that has GPU ops with its thread, thread
// by thread in the threads' order, each thread's in start order. The
// instances stay in their threads: a flat copy would double the largest
// thing the projection holds.
func (in *input) found() iter.Seq2[int64, *nvtxRange] {
	return func(yield func(int64, *nvtxRange) bool) {
		for _, t := range in.threads {
			for i := range t.ranges {
				if r := &t.ranges[i]; r.ops > 0 && !yield(t.globalTid, r) {
					return
				}
			}
		}
	}
}

// defaultStackLimit is the longest active list the stack sweeps keep before a
// thread falls back to the O(n log n) index sweeps. Nested push/pop ranges
// stay far below it; a million ranges left open (all enclosing every later
// call) would make the stack sweeps quadratic. Tests pass other limits to
// project to force either path.
const defaultStackLimit = 128

// project sweeps every thread, leaving the instances with GPU ops to
// found; a thread whose active list grows past stackLimit takes the
// index sweeps.
func (in *input) project(stackLimit int) {
	for _, t := range in.threads {
		in.diag.crossed += sweepThread(t, stackLimit)
		t.launches = nil
	}
}

// sweepThread attributes the thread's launches to every enclosing range
// (range.start ≤ call.start and call.end ≤ range.end, the vendor's test) and
// builds the vendor's range tree. It returns how many closed push/pop ranges
// overlap an enclosing one without nesting in it (an unbalanced stack),
// counted as nsys.Quality counts them.
func sweepThread(t *thread, stackLimit int) (crossed int64) {
	crossed = sortRanges(t)
	rs := t.ranges
	ls := t.launches
	byStart := func(a, b launch) int { return cmp.Compare(a.start, b.start) }
	if !slices.IsSortedFunc(ls, byStart) { // calls usually come in start order
		slices.SortFunc(ls, byStart)
	}
	if !attributeByStack(t, rs, ls, stackLimit) {
		for i := range rs {
			rs[i].ops = 0
		}
		attributeByIndex(t, rs, ls)
	}
	buildTree(rs, stackLimit)
	return crossed
}

// buildTree builds the vendor's range tree of the thread's sorted ranges:
// parents and levels.
func buildTree(rs []nvtxRange, stackLimit int) {
	if !parentsByStack(rs, stackLimit) {
		parentsByIndex(rs)
	}
	setLevels(rs)
}

// sortRanges sorts the thread's ranges by start, longer first, and
// returns how many closed push/pop ranges overlap an enclosing one without
// nesting in it.
func sortRanges(t *thread) (crossed int64) {
	rs := t.ranges
	slices.SortFunc(rs, func(a, b nvtxRange) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end))
	})
	var stack []int64 // ends of the enclosing push/pop ranges, innermost last
	for _, r := range rs {
		if !r.closedPushPop {
			continue
		}
		for len(stack) > 0 && stack[len(stack)-1] <= r.start {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && r.end > stack[len(stack)-1] {
			crossed++
		}
		stack = append(stack, r.end)
	}
	return crossed
}

// opCounter adds launches to ranges; for the ids that several calls share
// it remembers which (range, id) pairs it counted, since a range counts
// distinct ids.
type opCounter struct {
	t       *thread
	counted map[[2]int64]bool
}

func (c *opCounter) add(r *nvtxRange, ri int, l *launch) {
	if r.ops > 0 {
		r.opStart, r.opEnd = min(r.opStart, l.opStart), max(r.opEnd, l.opEnd)
	} else {
		r.opStart, r.opEnd = l.opStart, l.opEnd
	}
	if c.t.dupCorr[l.corr] {
		if c.counted == nil {
			c.counted = map[[2]int64]bool{}
		}
		k := [2]int64{int64(ri), l.corr}
		if c.counted[k] {
			return
		}
		c.counted[k] = true
	}
	r.ops++
}

// attributeByStack walks calls and ranges in start order, keeping the
// ranges that may still enclose a call: a range leaves once it ends before
// the current call starts, since every later call starts later. For push/pop
// ranges that list is the open stack, so a call costs its nesting depth.
// It gives up (false) on a call that ends before it starts, which may lie in
// a range that ended before the call began, or when the list grows past
// stackLimit.
func attributeByStack(t *thread, rs []nvtxRange, ls []launch, stackLimit int) bool {
	counter := opCounter{t: t}
	active := make([]int32, 0, 64)
	next := 0
	for li := range ls {
		l := &ls[li]
		if l.end < l.start {
			return false
		}
		for next < len(rs) && rs[next].start <= l.start {
			active = append(active, int32(next))
			next++
		}
		if len(active) > stackLimit {
			return false
		}
		kept := active[:0]
		for _, ri := range active {
			r := &rs[ri]
			if r.end < l.start {
				continue
			}
			kept = append(kept, ri)
			if r.end >= l.end {
				counter.add(r, int(ri), l)
			}
		}
		active = kept
	}
	return true
}

// attributeByIndex answers the same question for any input in
// O((calls + ranges) log calls): ranges in end order query a Fenwick tree
// over the calls in start order, into which every call ending no later has
// been added; a range's calls are then a suffix (those starting no earlier).
// Calls whose id other calls share are added one by one instead, since the
// tree cannot count distinct ids.
func attributeByIndex(t *thread, rs []nvtxRange, ls []launch) {
	n := len(ls)
	tree := newOpTree(n)
	byEnd := make([]int32, 0, n)
	var shared []int32
	for i := range ls {
		if t.dupCorr[ls[i].corr] {
			shared = append(shared, int32(i))
		} else {
			byEnd = append(byEnd, int32(i))
		}
	}
	slices.SortFunc(byEnd, func(a, b int32) int { return cmp.Compare(ls[a].end, ls[b].end) })
	rangesByEnd := make([]int32, len(rs))
	for i := range rangesByEnd {
		rangesByEnd[i] = int32(i)
	}
	slices.SortFunc(rangesByEnd, func(a, b int32) int { return cmp.Compare(rs[a].end, rs[b].end) })

	next := 0
	for _, ri := range rangesByEnd {
		r := &rs[ri]
		for next < len(byEnd) && ls[byEnd[next]].end <= r.end {
			li := byEnd[next]
			tree.add(n-1-int(li), ls[li].opStart, ls[li].opEnd) // reversed: a suffix becomes a prefix
			next++
		}
		first := sort.Search(n, func(i int) bool { return ls[i].start >= r.start })
		r.ops, r.opStart, r.opEnd = tree.prefix(n - first)
	}
	counter := opCounter{t: t}
	for _, li := range shared {
		l := &ls[li]
		for ri := range rs {
			if rs[ri].start <= l.start && l.end <= rs[ri].end {
				counter.add(&rs[ri], ri, l)
			}
		}
	}
}

// opTree is a Fenwick tree of launch counts and GPU spans.
type opTree struct {
	count          []int64
	opStart, opEnd []int64
}

func newOpTree(n int) *opTree {
	t := &opTree{count: make([]int64, n+1), opStart: make([]int64, n+1), opEnd: make([]int64, n+1)}
	for i := range t.opStart {
		t.opStart[i], t.opEnd[i] = math.MaxInt64, math.MinInt64
	}
	return t
}

func (t *opTree) add(pos int, opStart, opEnd int64) {
	for i := pos + 1; i < len(t.count); i += i & -i {
		t.count[i]++
		t.opStart[i], t.opEnd[i] = min(t.opStart[i], opStart), max(t.opEnd[i], opEnd)
	}
}

// prefix sums positions [0, n).
func (t *opTree) prefix(n int) (count, opStart, opEnd int64) {
	opStart, opEnd = math.MaxInt64, math.MinInt64
	for i := n; i > 0; i -= i & -i {
		count += t.count[i]
		opStart, opEnd = min(opStart, t.opStart[i]), max(opEnd, t.opEnd[i])
	}
	if count == 0 {
		return 0, 0, 0
	}
	return count, opStart, opEnd
}

// The vendor's range tree: a range's parent is the enclosing range (same
// thread, any style or domain, with or without ops) minimising
// (child.start − parent.start) + (parent.end − child.end), that is the
// shortest enclosing range. Ties between different ranges are an arbitrary
// pick in the vendor's SQL; here the earliest-starting one wins. Ranges with
// identical start and end ("twins") are each other's best parent (tightness
// 0), so their parent chain loops. rs is sorted by start, longer first: a
// parent always precedes its child.

// twinRun returns the end of the run of ranges identical to rs[i].
func twinRun(rs []nvtxRange, i int) int {
	j := i + 1
	for j < len(rs) && rs[j].start == rs[i].start && rs[j].end == rs[i].end {
		j++
	}
	return j
}

// linkTwins makes each of rs[i:j] (two or more twins) the parent of another.
func linkTwins(rs []nvtxRange, i, j int) {
	for k := i; k < j; k++ {
		p := k - 1
		if k == i {
			p = i + 1
		}
		rs[k].parent = int32(p)
	}
}

// parentsByStack finds parents with an active list, as attributeByStack
// does; it gives up on a range that ends before it starts or when the list
// grows past stackLimit.
func parentsByStack(rs []nvtxRange, stackLimit int) bool {
	active := make([]int32, 0, 64)
	for i := 0; i < len(rs); {
		j := twinRun(rs, i)
		if j-i > 1 {
			linkTwins(rs, i, j)
		} else {
			c := &rs[i]
			if c.end < c.start || len(active) > stackLimit {
				return false
			}
			best := int32(-1)
			var bestDur int64
			kept := active[:0]
			for _, pi := range active {
				p := &rs[pi]
				if p.end < c.start {
					continue
				}
				kept = append(kept, pi)
				if p.end >= c.end {
					if d := p.end - p.start; best < 0 || d < bestDur {
						best, bestDur = pi, d
					}
				}
			}
			active = kept
			c.parent = best
		}
		for k := i; k < j; k++ {
			active = append(active, int32(k))
		}
		i = j
	}
	return true
}

// parentsByIndex finds parents of any input in O(n log n): in start order, a
// Fenwick tree over end ranks holds the ranges seen so far (all start no
// later), and a range's candidates among them are those ending no earlier.
func parentsByIndex(rs []nvtxRange) {
	ends := make([]int64, len(rs))
	for i := range rs {
		ends[i] = rs[i].end
	}
	slices.Sort(ends)
	ends = slices.Compact(ends)
	n := len(ends)
	// Reversed ranks make "end ≥ x" a prefix. Each node keeps the shortest
	// range (earliest in start order on ties) of its span.
	best := make([]int32, n+1)
	for i := range best {
		best[i] = -1
	}
	better := func(a, b int32) bool { // a beats b
		if b < 0 {
			return true
		}
		da, db := rs[a].end-rs[a].start, rs[b].end-rs[b].start
		return da < db || da == db && a < b
	}
	rank := func(end int64) int { // reversed rank of end
		i, _ := slices.BinarySearch(ends, end)
		return n - 1 - i
	}
	for i := 0; i < len(rs); {
		j := twinRun(rs, i)
		if j-i > 1 {
			linkTwins(rs, i, j)
		} else {
			found := int32(-1)
			for k := rank(rs[i].end) + 1; k > 0; k -= k & -k {
				if best[k] >= 0 && better(best[k], found) {
					found = best[k]
				}
			}
			rs[i].parent = found
		}
		for k := i; k < j; k++ {
			for x := rank(rs[k].end) + 1; x <= n; x += x & -x {
				if better(int32(k), best[x]) {
					best[x] = int32(k)
				}
			}
		}
		i = j
	}
}

// setLevels sets each range's depth (-1 when its parent chain loops
// through twins) and counts every range's children that have GPU ops.
func setLevels(rs []nvtxRange) {
	for i := range rs {
		r := &rs[i]
		p := r.parent
		switch {
		case p < 0:
			r.level = 0
		case int(p) >= i || rs[p].level < 0: // twins point forward or at each other
			r.level = -1
		default:
			r.level = rs[p].level + 1
		}
	}
	for i := range rs {
		if rs[i].ops > 0 && rs[i].parent >= 0 {
			rs[rs[i].parent].children++
		}
	}
}
