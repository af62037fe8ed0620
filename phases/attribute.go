package phases

import (
	"sort"

	"github.com/nsysphase/nsysphase/nsys"
)

// attributor measures instances; it keeps scratch buffers between calls.
type attributor struct {
	tr *trace
	// Per GPU the attributor has seen, in order of first use: the
	// instance's op intervals. A slice, with the last GPU's slot at hand,
	// since ops come in runs on one GPU; slot finds the others.
	gpus     []gpuIntervals
	slot     map[int32]int
	lastSlot int
	// Scratch for the GPU context of a range (gpuContext).
	syncIv, tmp []interval
	ctx         gpuScratch
	rec         *callRecorder // non-nil with Options.Calls
	inst        int32         // index in Result.Instances of the instance being measured, for rec
	// The declared metrics' Measure functions (Declare) and the
	// instance's ops they read; nil without declared metrics.
	extra []func(*Instance, []Op) int64
	ops   []Op
}

func newAttributor(tr *trace) *attributor {
	return &attributor{tr: tr, slot: map[int32]int{}, extra: extraMeasures()}
}

// gpuIntervals is one GPU's op intervals of the instance being measured.
type gpuIntervals struct {
	gpu int32
	ivs []interval
}

// addOp records an op interval on gpu.
func (a *attributor) addOp(gpu int32, iv interval) {
	k := a.lastSlot
	if k >= len(a.gpus) || a.gpus[k].gpu != gpu {
		var ok bool
		if k, ok = a.slot[gpu]; !ok {
			k = len(a.gpus)
			a.slot[gpu] = k
			a.gpus = append(a.gpus, gpuIntervals{gpu: gpu})
		}
		a.lastSlot = k
	}
	a.gpus[k].ivs = append(a.gpus[k].ivs, iv)
}

// measure fills x.M for the range [x.Start, x.End] on thread gtid.
//
// Host side: every top-level API call of the thread is clipped to the range
// and its time goes to exactly one category, so the six parts sum to wall.
// GPU side: ops are attributed through the (pid, correlationId) of calls (any
// nesting level, as driver launches count) that start inside [start, end).
func (a *attributor) measure(x *Instance, gtid int64) {
	tr := a.tr
	s, e := x.Start, x.End
	m := &x.M
	m[Wall] = e - s
	pid := tr.file.JoinPid(gtid) // the process of the full globalTid: OS pids repeat across hosts
	for k := range a.gpus {
		a.gpus[k].ivs = a.gpus[k].ivs[:0]
	}
	a.syncIv = a.syncIv[:0]
	a.ops = a.ops[:0]
	acc := rangeAcc{projLo: 1<<63 - 1, projHi: -1 << 63}
	if tc := tr.threads[gtid]; tc != nil {
		a.measureCalls(x, tc.calls, pid, &acc)
	}
	m[Launch] = acc.apiTime[CatLaunch]
	m[SyncAPI] = acc.apiTime[CatSync]
	m[MemcpyAPI] = acc.apiTime[CatMemcpyAPI]
	m[Alloc] = acc.apiTime[CatAlloc]
	m[OtherAPI] = acc.apiTime[CatOther]
	m[CPUOther] = m[Wall] - m[Launch] - m[SyncAPI] - m[MemcpyAPI] - m[Alloc] - m[OtherAPI]
	x.GPUStart, x.HasGPUStart = 0, false
	if m[GPUOps] > 0 {
		m[Proj] = acc.projHi - acc.projLo
		x.GPUStart, x.HasGPUStart = acc.projLo, true
	}
	if acc.queueOps > 0 {
		x.QueueMeanNs, x.HasQueue = float64(m[QueueSum])/float64(acc.queueOps), true
	}
	for k := range a.gpus {
		g, iv := a.gpus[k].gpu, a.gpus[k].ivs
		if len(iv) == 0 {
			continue
		}
		merged := mergeIntervals(iv)
		a.gpus[k].ivs = merged
		m[GPUBusy] += totalLength(merged)
		if len(tr.busy[g]) > 1 {
			m[OverlapOtherProcess] += intersectLength(merged, a.othersOf(g, pid))
		}
	}
	a.otherThreads(x, gtid, pid)
	a.gpuContext(x, pid)
	for k, f := range a.extra {
		m[numBuiltin+Metric(k)] = f(x, a.ops)
	}
}

// rangeAcc accumulates over one range's calls: the host time per API
// category, the bounds of its GPU ops (the projection) and the ops with a
// launch-to-start delay.
type rangeAcc struct {
	apiTime        [5]int64
	projLo, projHi int64
	queueOps       int64
}

// measureCalls attributes the thread's calls (sorted by start) to the range
// x: the last top-level call before it that runs into it, then every call
// that starts inside it, with their GPU ops.
func (a *attributor) measureCalls(x *Instance, calls []apiCall, pid int32, acc *rangeAcc) {
	tr := a.tr
	s, e := x.Start, x.End
	m := &x.M
	i0 := sort.Search(len(calls), func(i int) bool { return calls[i].start >= s })
	// The last top-level call before the range may run into it.
	for j := i0 - 1; j >= 0; j-- {
		if calls[j].topLevel() {
			if calls[j].end > s {
				c := calls[j]
				cat, _ := a.category(c, pid)
				acc.apiTime[cat] += min(c.end, e) - s
				if cat == CatSync {
					a.syncIv = append(a.syncIv, interval{s, min(c.end, e)})
				}
			}
			break
		}
	}
	for i := i0; i < len(calls) && calls[i].start < e; i++ {
		c := calls[i]
		ops := tr.index.lookup(tr.ops, pid, c.corr)
		cls := tr.classes[c.class()]
		if cls.dangling { // no name: what its GPU side shows
			cls = tr.unnamedClass(pid, c.corr, ops)
		}
		if c.topLevel() {
			cat, sync := a.category(c, pid)
			acc.apiTime[cat] += min(c.end, e) - c.start
			if cat == CatSync {
				a.syncIv = append(a.syncIv, interval{c.start, min(c.end, e)})
			}
			m[APICalls]++
			if sync != SyncNone {
				m[HostSyncs]++
			}
			if cls.isAlloc || cls.isFree {
				m[AllocCalls]++
			}
			if cls.isGraph {
				m[GraphLaunches]++
			}
			if a.rec != nil && !x.OtherThread { // calls belong to the thread's own ranges
				a.rec.add(x, a.inst, pid, i, c, cls, cat, sync, ops, e)
			}
		}
		if len(ops) == 0 {
			continue
		}
		m[GPUOps]++
		if cls.isLaunch {
			m[Launches]++
		}
		a.addCallOps(x, c, ops, acc)
	}
}

// addCallOps attributes the GPU ops of call c to x: counts and sums per
// kind, the queue delay from the call's end to each op's start, the
// projection's bounds and each GPU's busy intervals.
func (a *attributor) addCallOps(x *Instance, c apiCall, ops []gpuOp, acc *rangeAcc) {
	m := &x.M
	var graphFirst int64 = 1<<63 - 1
	for _, o := range ops {
		d := o.end - o.start
		switch o.kind {
		case opKernel:
			m[KernelCount]++
			m[KernelSum] += d
		case opGraph:
			m[GraphTraceNs] += d
		case opMemset:
			m[MemsetCount]++
			m[MemsetBytes] += o.bytes
			m[MemsetNs] += d
		case opMemcpy:
			addCopy(m, o, d)
		}
		// Graph nodes share the launch's correlation id: only the
		// first node's delay is launch-to-start.
		if o.graphNode {
			graphFirst = min(graphFirst, o.start)
		} else {
			q := max(0, o.start-c.end)
			m[QueueSum] += q
			m[QueueMax] = max(m[QueueMax], q)
			acc.queueOps++
		}
		acc.projLo, acc.projHi = min(acc.projLo, o.start), max(acc.projHi, o.end)
		if o.end > o.start {
			a.addOp(o.gpu, interval{o.start, o.end})
		}
		if a.extra != nil {
			a.ops = append(a.ops, Op{Start: o.start, End: o.end, Bytes: o.bytes, GPU: o.gpu, Kind: OpKind(o.kind)})
		}
	}
	if graphFirst != 1<<63-1 {
		q := max(0, graphFirst-c.end)
		m[QueueSum] += q
		m[QueueMax] = max(m[QueueMax], q)
		acc.queueOps++
	}
}

// category returns the class of a top-level call's time and how it blocks.
// A cudaMemcpyAsync touching pageable host memory is staged through a bounce
// buffer and blocks the host: it counts as sync.
// A nameless call is classified by its GPU side first (unnamedClass).
func (a *attributor) category(c apiCall, pid int32) (APICategory, SyncKind) {
	cls := a.tr.classes[c.class()]
	if cls.sync != SyncNone || !cls.isCopy && !cls.dangling {
		return cls.cat, cls.sync
	}
	ops := a.tr.index.lookup(a.tr.ops, pid, c.corr)
	if cls.dangling {
		if cls = a.tr.unnamedClass(pid, c.corr, ops); cls.sync != SyncNone || !cls.isCopy {
			return cls.cat, cls.sync
		}
	}
	for _, o := range ops {
		if o.kind == opMemcpy && o.pageable {
			return CatSync, SyncPageable
		}
	}
	return cls.cat, SyncNone
}

func addCopy(m *[MaxMetrics]int64, o gpuOp, d int64) {
	switch o.copyKind {
	case nsys.CopyHtoD:
		m[H2DCount]++
		m[H2DBytes] += o.bytes
		m[H2DNs] += d
	case nsys.CopyDtoH:
		m[D2HCount]++
		m[D2HBytes] += o.bytes
		m[D2HNs] += d
	case nsys.CopyDtoD:
		m[D2DCount]++
		m[D2DBytes] += o.bytes
		m[D2DNs] += d
	case nsys.CopyPtoP:
		m[P2PCount]++
		m[P2PBytes] += o.bytes
		m[P2PNs] += d
	}
	if o.copyKind == nsys.CopyHtoD || o.copyKind == nsys.CopyDtoH {
		if o.pageable {
			m[PageableCopies]++
		} else {
			m[PinnedCopies]++
		}
	}
}

func (a *attributor) othersOf(gpu, pid int32) []interval { return a.tr.others[gpu][pid] }

// otherThreads adds GPU work launched during the range by other threads of
// the same process (PyTorch runs backward on its autograd thread), and the
// time those threads spent blocked in host syncs while the range was open
// (XLA waits on its runtime threads). Both are reported beside the range's
// own work, never mixed in.
func (a *attributor) otherThreads(x *Instance, gtid int64, pid int32) {
	s, e := x.Start, x.End
	blocked := a.tmp[:0]
	for _, tc := range a.tr.procThreads[pid] {
		if tc.globalTid == gtid {
			continue
		}
		calls := tc.calls
		i := sort.Search(len(calls), func(i int) bool { return calls[i].start >= s })
		// The last top-level call before the range may block into it.
		for j := i - 1; j >= 0; j-- {
			if c := calls[j]; c.topLevel() {
				if cat, _ := a.category(c, pid); cat == CatSync && c.end > s {
					blocked = append(blocked, interval{s, min(c.end, e)})
				}
				break
			}
		}
		for ; i < len(calls) && calls[i].start < e; i++ {
			c := calls[i]
			if c.topLevel() {
				if cat, _ := a.category(c, pid); cat == CatSync {
					x.M[OtherThreadSyncs]++
					if end := min(c.end, e); end > c.start {
						blocked = append(blocked, interval{c.start, end})
					}
				}
			}
			ops := a.tr.index.lookup(a.tr.ops, pid, c.corr)
			if len(ops) == 0 {
				continue
			}
			x.M[OtherThreadOps]++
			for _, o := range ops {
				if o.kind == opKernel || o.kind == opGraph {
					x.M[OtherThreadKernelNs] += o.end - o.start
				}
			}
		}
	}
	blocked = mergeIntervals(blocked)
	x.M[OtherThreadSyncNs] = totalLength(blocked)
	a.tmp = blocked
}

// gpuContext measures what the process's GPUs ran during the range: other
// processes' work, nothing at all, and, for the host's blocking calls
// (a.syncIv), which of own work, other processes' work or nothing.
func (a *attributor) gpuContext(x *Instance, pid int32) {
	s, e := x.Start, x.End
	m := &x.M
	g := &a.ctx
	g.clip(a.tr, pid, s, e, e)
	m[OtherProcessGPU] = totalLength(g.other)
	m[GPUIdle] = (e - s) - totalLength(g.all)
	for _, iv := range a.syncIv {
		own, other, none := g.splitOf(iv)
		m[SyncOwnGPU] += own
		m[SyncOtherGPU] += other
		m[SyncNoGPU] += none
	}
}

// gpuScratch holds, for a time window, the process's own GPU work, other
// processes' and everyone's, each merged over the process's GPUs.
//
// The process's GPUs are those on which its own work (any thread) had
// started by the instance's end: the devices it uses, once it has used
// them. Times are unions over those GPUs, so each is at most the window:
// "other processes ran" means on at least one of them, "idle" on all.
type gpuScratch struct {
	own, other, all, one []interval
}

// clip fills g with the window [s, e) of the GPUs pid had used by gpusBy.
func (g *gpuScratch) clip(tr *trace, pid int32, s, e, gpusBy int64) {
	own, other := g.own[:0], g.other[:0]
	ownLists, otherLists := 0, 0
	for _, pg := range tr.gpusOf[pid] {
		if pg.first >= gpusBy {
			continue
		}
		n, m := len(own), len(other)
		own = appendClipped(own, tr.busy[pg.gpu][pid], s, e)
		other = appendClipped(other, tr.others[pg.gpu][pid], s, e)
		ownLists += min(1, len(own)-n)
		otherLists += min(1, len(other)-m)
	}
	// Busy lists are merged and sorted, and so is the clip of one of them:
	// only a process on several GPUs needs a sort.
	if ownLists > 1 {
		own = mergeIntervals(own)
	}
	if otherLists > 1 {
		other = mergeIntervals(other)
	}
	g.own, g.other = own, other
	g.all = unionMerged(g.all[:0], own, other)
}

// unionMerged appends to dst the union of a and b, both merged and sorted,
// merged and sorted: what mergeIntervals gives for both together, in one
// pass instead of a sort.
func unionMerged(dst, a, b []interval) []interval {
	add := func(x interval) {
		if n := len(dst); n > 0 && x.start <= dst[n-1].end {
			dst[n-1].end = max(dst[n-1].end, x.end)
			return
		}
		dst = append(dst, x)
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || i < len(a) && a[i].start <= b[j].start {
			add(a[i])
			i++
		} else {
			add(b[j])
			j++
		}
	}
	return dst
}

// splitOf splits iv (inside the clipped window) into time with own work,
// with other processes' work only, and with none: the three sum to its
// length exactly.
func (g *gpuScratch) splitOf(iv interval) (own, other, none int64) {
	g.one = append(g.one[:0], iv)
	inOwn, inAll := intersectLength(g.one, g.own), intersectLength(g.one, g.all)
	return inOwn, inAll - inOwn, iv.end - iv.start - inAll
}

// split splits [lo, hi) by what pid's GPUs (those used by gpusBy) ran.
func (g *gpuScratch) split(tr *trace, pid int32, lo, hi, gpusBy int64) (own, other, none int64) {
	g.clip(tr, pid, lo, hi, gpusBy)
	return g.splitOf(interval{lo, hi})
}

// appendClipped appends the parts of the merged, sorted intervals iv that
// lie inside [s, e).
func appendClipped(dst, iv []interval, s, e int64) []interval {
	i := sort.Search(len(iv), func(k int) bool { return iv[k].end > s })
	for ; i < len(iv) && iv[i].start < e; i++ {
		if lo, hi := max(iv[i].start, s), min(iv[i].end, e); hi > lo {
			dst = append(dst, interval{lo, hi})
		}
	}
	return dst
}
