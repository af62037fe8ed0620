package phases

import (
	"cmp"
	"fmt"
	"maps"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/nsysphase/nsysphase/nsys"
)

// opKind is the kind of a GPU operation.
type opKind uint8

const (
	opKernel opKind = iota
	opMemcpy
	opMemset
	opGraph // a whole-graph record of CUPTI_ACTIVITY_KIND_GRAPH_TRACE (graph trace mode)
)

// gpuOp is one GPU operation, compact: the big tables are reduced to this as
// they stream, and nothing else of their rows is kept.
type gpuOp struct {
	start, end int64
	bytes      int64
	pid        int32 // OS process id (correlation ids are per process)
	corr       int32 // correlation id (per process)
	gpu        int32 // physical GPU (TARGET_INFO_CUDA_DEVICE), else the process's deviceId
	kind       opKind
	copyKind   uint8 // nsys.Copy* for memcpy
	pageable   bool  // memcpy from or to pageable host memory
	graphNode  bool  // a kernel/memcpy of a graph launch traced per node
}

// apiCall is one runtime or driver API call, compact: 24 bytes, the
// biggest structure of a trace (one per API row).
type apiCall struct {
	start, end int64
	corr       int32
	// tag is the StringIds id of the call's name while loading; then, once
	// names are classified, the class index, with topLevelBit set for a
	// call not nested inside another call on its thread (driver calls nest
	// in runtime calls).
	tag uint32
}

const topLevelBit = 1 << 31

func (c apiCall) class() uint16  { return uint16(c.tag) }
func (c apiCall) topLevel() bool { return c.tag&topLevelBit != 0 }

// apiRow is an API call as read, with its chunk-local thread index.
type apiRow struct {
	apiCall
	thread int32
}

// threadCalls are the API calls of one thread in start order.
type threadCalls struct {
	globalTid int64
	calls     []apiCall
}

// corrIndex finds the GPU ops of (pid, correlationId) in ops, which is sorted
// by (pid, corr). Correlation ids are dense small integers, most of
// them without GPU work: a bitmap with per-word ranks marks the ids that have
// ops, and starts holds where each such id's ops begin — a few MB where a
// dense offset table would take 4 bytes per id.
type corrIndex struct {
	byPid map[int32]*pidIndex
}

type pidIndex struct {
	base   int32    // the correlation id of bit 0 (a multiple of 64)
	bits   []uint64 // bit c set: corr base+c has ops
	rank   []int32  // set bits before word i
	starts []int32  // ops index of the r-th corr with ops; one extra at the end
}

func (ix *corrIndex) lookup(ops []gpuOp, pid, corr int32) []gpuOp {
	p := ix.byPid[pid]
	if p == nil || corr < p.base {
		return nil
	}
	corr -= p.base
	w := int(corr) >> 6
	if w >= len(p.bits) {
		return nil
	}
	bit := uint64(1) << (uint(corr) & 63)
	if p.bits[w]&bit == 0 {
		return nil
	}
	r := int(p.rank[w]) + bits.OnesCount64(p.bits[w]&(bit-1))
	return ops[p.starts[r]:p.starts[r+1]]
}

// trace is everything analysis needs from one export, reduced.
type trace struct {
	file        *nsys.File
	strs        *nsys.Strings
	nvtx        []nsys.NVTXEvent
	threads     map[int64]*threadCalls   // globalTid → calls
	procThreads map[int32][]*threadCalls // pid → its threads that made API calls
	ops         []gpuOp
	index       corrIndex
	classes     []apiClass       // by class index
	names       []string         // API name by class index
	classByName map[int32]uint16 // StringIds id → class index (classOf)
	classByID   []int32          // the same for small ids, class+1; 0 = not seen
	threadNm    map[int64]string // globalTid → thread name
	graphMode   string
	warnings    []nsys.Warning
	gpuOf       map[[2]int64]int32             // (pid, CUDA device id) → physical GPU
	overlapNs   int64                          // time two or more processes' GPU work overlapped on one GPU
	use         []GPUUse                       // per GPU, its processes' busy time
	loaded      bool                           // loadActivity has run
	busy        map[int32]map[int32][]interval // gpu → pid → merged busy intervals of that process
	others      map[int32]map[int32][]interval // gpu → pid → merged busy intervals of every other process
}

// loadHead reads what segmentation needs — strings, NVTX events, thread
// names, the graph trace mode and the physical GPU map — concurrently. The
// big activity tables are read afterwards, by the sweep or loadActivity.
func loadHead(f *nsys.File, gpuOf map[[2]int64]int32) (*trace, error) {
	tr := &trace{file: f, threads: map[int64]*threadCalls{}, gpuOf: gpuOf}
	var g errgroup.Group
	g.Go(func() error {
		var err error
		if tr.strs, err = f.Strings(); err != nil {
			return err
		}
		// Threads' names, for reports.
		tr.threadNm = map[int64]string{}
		if ths, err := f.Threads(tr.strs); err == nil {
			for _, t := range ths {
				tr.threadNm[t.GlobalTid] = t.Name
			}
		}
		return nil
	})
	g.Go(func() error {
		tr.nvtx = make([]nsys.NVTXEvent, 0, f.RowHint(nsys.TableNVTX))
		for e, err := range f.NVTXEvents() {
			if err != nil {
				return err
			}
			tr.nvtx = append(tr.nvtx, e)
		}
		return nil
	})
	g.Go(func() error {
		capture, err := f.Capture()
		tr.graphMode = nsys.GraphTraceMode(capture)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return tr, nil
}

// loadActivity reads the whole of the activity tables concurrently (one
// connection each) and reduces them to the trace's indexes. It is the
// fallback of the sweep, for exports whose rows are not in time order.
func (tr *trace) loadActivity() error {
	f := tr.file
	tr.threads = map[int64]*threadCalls{}
	tr.resetClasses()
	var (
		g                     errgroup.Group
		memcpys, memsets, grs []gpuOp
		badCorr               int
		negAPI                int
	)
	gpuOf := tr.gpuOf
	// Exact row counts first, so the big slices are allocated once at their
	// final size instead of growing by copying.
	counts := map[string]int64{}
	for _, t := range []string{nsys.TableRuntime, nsys.TableKernel, nsys.TableMemcpy, nsys.TableMemset, nsys.TableGraphTrace} {
		counts[t] = f.RowHint(t)
	}
	memcpys = make([]gpuOp, 0, counts[nsys.TableMemcpy])
	memsets = make([]gpuOp, 0, counts[nsys.TableMemset])
	grs = make([]gpuOp, 0, counts[nsys.TableGraphTrace])
	// The two big tables are read in rowid ranges on several connections at
	// once, up to eight (a range is a B-tree seek); each range keeps table order, and the
	// ranges are joined in order, so results do not depend on the split.
	parts := max(1, min(runtime.GOMAXPROCS(0), 8))
	apiParts := f.Split(nsys.TableRuntime, parts, 200_000)
	kernelParts := f.Split(nsys.TableKernel, parts, 200_000)
	apiChunks := make([]apiChunk, len(apiParts))
	for pi, part := range apiParts {
		g.Go(func() error {
			ch := &apiChunks[pi]
			ch.calls = make([]apiRow, 0, counts[nsys.TableRuntime]/int64(len(apiParts))+1024)
			threadOf := map[int64]int32{}
			lastG, lastT := int64(-1), int32(-1)
			for c, err := range f.APICallsCore(part) {
				if err != nil {
					return err
				}
				// With --cudabacktrace each traced call also appears as an
				// eventClass 67 "CUDA backtrace" row that wraps it and repeats
				// its correlation id: counting it would double the call's time
				// and GPU work. Only runtime and driver rows are calls.
				if c.EventClass != nsys.ClassRuntime && c.EventClass != nsys.ClassDriver {
					continue
				}
				if c.CorrelationID > 1<<31-1 || c.NameID > 1<<31-1 {
					ch.badCorr++
					continue
				}
				if c.GlobalTid != lastG {
					t, ok := threadOf[c.GlobalTid]
					if !ok {
						t = int32(len(ch.gtids))
						threadOf[c.GlobalTid] = t
						ch.gtids = append(ch.gtids, c.GlobalTid)
					}
					lastG, lastT = c.GlobalTid, t
				}
				if c.End < c.Start { // a damaged row: zero length, counted
					c.End = c.Start
					ch.negAPI++
				}
				ch.calls = append(ch.calls, apiRow{apiCall{start: c.Start, end: c.End, corr: int32(c.CorrelationID), tag: uint32(c.NameID)}, lastT})
			}
			return nil
		})
	}
	kernelChunks := make([][]gpuOp, len(kernelParts))
	opNeg := make([]int, len(kernelParts)+1) // damaged ops per scan, summed after the scans
	for pi, part := range kernelParts {
		g.Go(func() error {
			ks := make([]gpuOp, 0, counts[nsys.TableKernel]/int64(len(kernelParts))+1024)
			fix := opFixer{gpuOf: gpuOf}
			for k, err := range f.KernelOps(part) {
				if err != nil {
					return err
				}
				ks = append(ks, fix.op(gpuOp{start: k.Start, end: k.End, pid: int32(nsys.Pid(k.GlobalPid)), corr: int32(k.CorrelationID), gpu: int32(k.DeviceID), kind: opKernel, graphNode: k.GraphNodeID != 0}))
			}
			kernelChunks[pi] = ks
			opNeg[pi] = fix.neg
			return nil
		})
	}
	g.Go(func() error {
		fix := opFixer{gpuOf: gpuOf}
		defer func() { opNeg[len(kernelParts)] = fix.neg }()
		for m, err := range f.Memcpys() {
			if err != nil {
				return err
			}
			pageable := (m.CopyKind == nsys.CopyHtoD && m.SrcKind == nsys.MemPageable) || (m.CopyKind == nsys.CopyDtoH && m.DstKind == nsys.MemPageable)
			memcpys = append(memcpys, fix.op(gpuOp{start: m.Start, end: m.End, bytes: m.Bytes, pid: int32(nsys.Pid(m.GlobalPid)), corr: int32(m.CorrelationID), gpu: int32(m.DeviceID), kind: opMemcpy, copyKind: uint8(m.CopyKind), pageable: pageable, graphNode: m.GraphNodeID != 0}))
		}
		for m, err := range f.Memsets() {
			if err != nil {
				return err
			}
			memsets = append(memsets, fix.op(gpuOp{start: m.Start, end: m.End, bytes: m.Bytes, pid: int32(nsys.Pid(m.GlobalPid)), corr: int32(m.CorrelationID), gpu: int32(m.DeviceID), kind: opMemset, graphNode: m.GraphNodeID != 0}))
		}
		for r, err := range f.GraphTraces() {
			if err != nil {
				return err
			}
			grs = append(grs, fix.op(gpuOp{start: r.Start, end: r.End, pid: int32(nsys.Pid(r.GlobalPid)), corr: int32(r.CorrelationID), gpu: int32(r.DeviceID), kind: opGraph}))
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return err
	}
	negOps := 0
	for _, n := range opNeg {
		negOps += n
	}

	// The GPU-op side (grouping by correlation, busy intervals) and the API
	// side below touch disjoint parts of the trace: they run concurrently.
	opsDone := make(chan struct{})
	go func() {
		defer close(opsDone)
		// Kernel ranges, memcpy, memset and graph records are grouped
		// straight from their own slices, each freed once scattered.
		sources := append(kernelChunks, memcpys, memsets, grs)
		kernelChunks, memcpys, memsets, grs = nil, nil, nil, nil
		// Sort by (pid, corr) with a counting scatter. The order of a
		// correlation id's own ops does not matter (attribution takes
		// their minimum start where it needs the first).
		tr.ops, tr.index = groupOps(sources)
		tr.buildBusy()
		tr.buildOthers()
	}()

	// Global thread indices, in order of first appearance over the chunks.
	var gtids []int64
	globalOf := map[int64]int32{}
	var nCalls int
	for ci := range apiChunks {
		ch := &apiChunks[ci]
		badCorr += ch.badCorr
		negAPI += ch.negAPI
		nCalls += len(ch.calls)
		remap := make([]int32, len(ch.gtids))
		for li, gt := range ch.gtids {
			gi, ok := globalOf[gt]
			if !ok {
				gi = int32(len(gtids))
				globalOf[gt] = gi
				gtids = append(gtids, gt)
			}
			remap[li] = gi
		}
		for i := range ch.calls {
			ch.calls[i].thread = remap[ch.calls[i].thread]
		}
	}
	all := groupByThread(apiChunks, nCalls, len(gtids))
	apiChunks = nil
	for t, gt := range gtids {
		tr.threads[gt] = &threadCalls{globalTid: gt, calls: all[t]}
	}

	// API calls: classify each distinct name once. Threads are visited in
	// id order so class numbers do not depend on map order.
	gts := make([]int64, 0, len(tr.threads))
	for gt := range tr.threads {
		gts = append(gts, gt)
	}
	slices.Sort(gts)
	for _, gt := range gts {
		tc := tr.threads[gt]
		for i := range tc.calls {
			c := &tc.calls[i]
			c.tag = uint32(tr.classOf(int32(c.tag))) // loaded ≤ 2^31-1
		}
	}
	tr.procThreads = map[int32][]*threadCalls{}
	for _, tc := range tr.threads {
		calls := tc.calls
		if !slices.IsSortedFunc(calls, byStart) {
			slices.SortStableFunc(calls, byStart)
		}
		markTopLevel(calls)
		pid := int32(nsys.Pid(tc.globalTid))
		tr.procThreads[pid] = append(tr.procThreads[pid], tc)
	}
	for _, ts := range tr.procThreads {
		slices.SortFunc(ts, func(a, b *threadCalls) int { return cmp.Compare(a.globalTid, b.globalTid) })
	}
	<-opsDone
	tr.noteDamage(negAPI, negOps, badCorr)
	tr.overlapNs, tr.use = tr.gpuUse()
	tr.loaded = true
	return nil
}

// classOf returns the class index of an API name id, classifying each
// distinct name once. Name ids are dense StringIds ids: a slice, not a map,
// answers the million-row loops.
func (tr *trace) classOf(nameID int32) uint16 {
	if nameID >= 0 && int(nameID) < len(tr.classByID) && tr.classByID[nameID] != 0 {
		return uint16(tr.classByID[nameID] - 1)
	}
	cl, ok := tr.classByName[nameID]
	if !ok {
		name := tr.strs.Name(int64(nameID))
		cl = uint16(len(tr.classes))
		tr.classByName[nameID] = cl
		tr.classes = append(tr.classes, classifyAPI(name))
		tr.names = append(tr.names, nsys.BaseAPIName(name))
		if nameID >= 0 && nameID < 1<<24 {
			for int(nameID) >= len(tr.classByID) {
				tr.classByID = append(tr.classByID, 0)
			}
			tr.classByID[nameID] = int32(cl) + 1
		}
	}
	return cl
}

// resetClasses forgets every classified name (a load starts over).
func (tr *trace) resetClasses() {
	tr.classes, tr.names = nil, nil
	tr.classByName, tr.classByID = map[int32]uint16{}, nil
}

// noteDamage words the activity rows that were repaired or left out.
func (tr *trace) noteDamage(negAPI, negOps, badCorr int) {
	f := tr.file
	if negAPI > 0 {
		tr.warnings = append(tr.warnings, nsys.FileWarning(nsys.WarnEndBeforeStart, f.Path, "%d CUDA API calls end before they start; counted as zero-length", negAPI))
	}
	if negOps > 0 {
		tr.warnings = append(tr.warnings, nsys.FileWarning(nsys.WarnEndBeforeStart, f.Path, "%d GPU operations end before they start; counted as zero-length", negOps))
	}
	if badCorr > 0 {
		tr.warnings = append(tr.warnings, nsys.Warning{Code: nsys.WarnCorrelationRange, File: f.Path, Message: fmt.Sprintf("%d API calls with ids beyond 2^31 were left out", badCorr)})
	}
}

// opFixer applies, as ops stream in, what every op needs: the physical GPU
// (device ids are per process; overlap needs the GPU) and a zero length for
// a damaged row that ends before it starts (counted in neg).
type opFixer struct {
	gpuOf   map[[2]int64]int32
	lastKey [2]int64
	lastGPU int32
	lastOK  bool
	cached  bool
	neg     int
}

func (x *opFixer) op(o gpuOp) gpuOp {
	if o.end < o.start {
		o.end = o.start
		x.neg++
	}
	key := [2]int64{int64(o.pid), int64(o.gpu)}
	if !x.cached || key != x.lastKey { // ops come in runs of one process and device
		x.lastGPU, x.lastOK = x.gpuOf[key]
		x.lastKey, x.cached = key, true
	}
	if x.lastOK {
		o.gpu = x.lastGPU
	}
	return o
}

// apiChunk is the API calls of one rowid range, in table order.
type apiChunk struct {
	calls           []apiRow
	gtids           []int64 // chunk-local thread index → globalTid
	badCorr, negAPI int
}

// groupByThread splits the calls of the chunks (in chunk order) by thread
// index with a stable counting scatter into one slice of the total size, so
// each thread keeps the table's (time) order and rarely needs sorting.
func groupByThread(chunks []apiChunk, n, nThreads int) [][]apiCall {
	offs := make([]int, nThreads+1)
	for _, ch := range chunks {
		for _, c := range ch.calls {
			offs[c.thread+1]++
		}
	}
	for t := 1; t <= nThreads; t++ {
		offs[t] += offs[t-1]
	}
	all := make([]apiCall, n)
	out := make([][]apiCall, nThreads)
	for t := range out {
		out[t] = all[offs[t]:offs[t+1]:offs[t+1]]
	}
	next := offs[:nThreads]
	for i := range chunks {
		for _, c := range chunks[i].calls {
			all[next[c.thread]] = c.apiCall
			next[c.thread]++
		}
		chunks[i].calls = nil // scattered: free it before the next (peak ≈ one chunk over the result)
	}
	return out
}

func byStart(a, b apiCall) int {
	return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end))
}

// markTopLevel flags calls not nested inside an earlier call on the same
// thread. Driver calls made by a runtime call lie inside it; their time is
// counted once, through the outer call.
func markTopLevel(calls []apiCall) { markTopLevelFrom(calls, -1<<62) }

// markTopLevelFrom marks calls that follow calls already marked, whose last
// top-level call ended at curEnd; it returns the new curEnd.
func markTopLevelFrom(calls []apiCall, curEnd int64) int64 {
	for i := range calls {
		// A call starting inside the previous top-level call is nested in it
		// (one thread cannot run two calls at once).
		if calls[i].start >= curEnd {
			calls[i].tag |= topLevelBit
			curEnd = calls[i].end
		}
	}
	return curEnd
}

// groupOps groups ops by (pid, correlation id) in O(n) — a counting sort
// whose per-process bitmap ranks become the correlation index — instead of
// a comparison sort of the biggest structure. Within one id, ops keep the
// order of sources, then of each source. Each source is dropped (set to nil)
// once scattered, so the peak is the result plus one source.
func groupOps(sources [][]gpuOp) ([]gpuOp, corrIndex) { return groupOpsInto(nil, sources) }

// groupOpsInto is groupOps writing into buf when it is large enough (the
// sweep reuses one buffer for every window).
func groupOpsInto(buf []gpuOp, sources [][]gpuOp) ([]gpuOp, corrIndex) {
	type pidAcc struct {
		n, minCorr, maxCorr int
		p                   *pidIndex
		fill                []int32 // next free slot per rank
	}
	accs := map[int32]*pidAcc{}
	var pids []int32
	// A trace has a few processes whose ops alternate: a short list beats
	// a map lookup per op in every pass.
	var accKeys []int32
	var accVals []*pidAcc
	accOf := func(pid int32) *pidAcc {
		for i, k := range accKeys {
			if k == pid {
				return accVals[i]
			}
		}
		a := accs[pid]
		if a != nil && len(accKeys) < 16 {
			accKeys, accVals = append(accKeys, pid), append(accVals, a)
		}
		return a
	}
	for _, ops := range sources {
		for _, o := range ops {
			a := accOf(o.pid)
			if a == nil {
				a = &pidAcc{minCorr: int(o.corr)}
				accs[o.pid] = a
				pids = append(pids, o.pid)
			}
			a.n++
			a.minCorr = min(a.minCorr, int(o.corr))
			a.maxCorr = max(a.maxCorr, int(o.corr))
		}
	}
	slices.Sort(pids)
	ix := corrIndex{byPid: map[int32]*pidIndex{}}
	for _, pid := range pids {
		a := accs[pid]
		// A window of the sweep holds a narrow band of large ids: the
		// bitmap starts at the band.
		base := max(0, a.minCorr) &^ 63
		a.p = &pidIndex{base: int32(base), bits: make([]uint64, (a.maxCorr-base)>>6+1)}
		ix.byPid[pid] = a.p
	}
	for _, ops := range sources {
		for _, o := range ops {
			if o.corr >= 0 {
				p := accOf(o.pid).p
				c := o.corr - p.base
				p.bits[c>>6] |= 1 << (uint(c) & 63)
			}
		}
	}
	// Ranks, then per-rank counts → starts (absolute positions in out).
	for _, pid := range pids {
		a := accs[pid]
		p := a.p
		p.rank = make([]int32, len(p.bits))
		var r int32
		for w, b := range p.bits {
			p.rank[w] = r
			r += int32(bits.OnesCount64(b))
		}
		p.starts = make([]int32, r+1)
		a.fill = make([]int32, r)
	}
	rankOf := func(p *pidIndex, corr int32) int32 {
		corr -= p.base
		w := corr >> 6
		return p.rank[w] + int32(bits.OnesCount64(p.bits[w]&(1<<(uint(corr)&63)-1)))
	}
	for _, ops := range sources {
		for _, o := range ops {
			if o.corr < 0 { // no correlation: attributable to no call
				continue
			}
			p := accOf(o.pid).p
			p.starts[rankOf(p, o.corr)+1]++
		}
	}
	off := int32(0)
	for _, pid := range pids {
		p := accs[pid].p
		p.starts[0] = off
		for r := 1; r < len(p.starts); r++ {
			p.starts[r] += p.starts[r-1]
		}
		off = p.starts[len(p.starts)-1]
	}
	out := buf[:0]
	if cap(out) >= int(off) {
		out = out[:off]
	} else {
		out = make([]gpuOp, off)
	}
	for si, ops := range sources {
		for _, o := range ops {
			if o.corr < 0 {
				continue
			}
			a := accOf(o.pid)
			r := rankOf(a.p, o.corr)
			out[a.p.starts[r]+a.fill[r]] = o
			a.fill[r]++
		}
		sources[si] = nil
	}
	return out, ix
}

// cudaDeviceMap maps (pid, per-process CUDA device id) to the physical GPU id:
// device ids are per process, and cross-process overlap needs the GPU.
func cudaDeviceMap(f *nsys.File) (map[[2]int64]int32, error) {
	out := map[[2]int64]int32{}
	if !f.HasTable(nsys.TableCUDADevice) || !f.HasColumn(nsys.TableCUDADevice, "gpuId") {
		return out, nil
	}
	rows, err := f.CUDADevices()
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[[2]int64{r.Pid, r.CUDAID}] = int32(r.GPUID)
	}
	return out, nil
}

// interval is a half-open time interval [start, end).
type interval struct{ start, end int64 }

// mergeIntervals sorts and merges overlapping intervals in place.
func mergeIntervals(iv []interval) []interval {
	if len(iv) < 2 {
		return iv
	}
	slices.SortFunc(iv, func(a, b interval) int { return cmp.Compare(a.start, b.start) })
	out := iv[:1]
	for _, x := range iv[1:] {
		last := &out[len(out)-1]
		if x.start <= last.end {
			last.end = max(last.end, x.end)
			continue
		}
		out = append(out, x)
	}
	return out
}

func totalLength(iv []interval) int64 {
	var s int64
	for _, x := range iv {
		s += x.end - x.start
	}
	return s
}

// buildBusy computes, per GPU and process, the merged busy intervals of its
// GPU ops (for overlap with other processes).
func (tr *trace) buildBusy() {
	// ops are grouped by pid: one segment per process, merged concurrently
	// (each sorts its intervals), then assembled in pid order.
	type segment struct {
		pid    int32
		lo, hi int
		per    map[int32][]interval
	}
	var segs []*segment
	for lo := 0; lo < len(tr.ops); {
		hi := lo
		for hi < len(tr.ops) && tr.ops[hi].pid == tr.ops[lo].pid {
			hi++
		}
		segs = append(segs, &segment{pid: tr.ops[lo].pid, lo: lo, hi: hi})
		lo = hi
	}
	var wg sync.WaitGroup
	for _, sg := range segs {
		wg.Go(func() {
			// Count per GPU, then fill exactly sized slices.
			n := map[int32]int{}
			for _, o := range tr.ops[sg.lo:sg.hi] {
				if o.end > o.start {
					n[o.gpu]++
				}
			}
			sg.per = make(map[int32][]interval, len(n))
			for g, c := range n {
				sg.per[g] = make([]interval, 0, c)
			}
			for _, o := range tr.ops[sg.lo:sg.hi] {
				if o.end > o.start {
					sg.per[o.gpu] = append(sg.per[o.gpu], interval{o.start, o.end})
				}
			}
			for g, iv := range sg.per {
				sg.per[g] = mergeIntervals(iv)
			}
		})
	}
	wg.Wait()
	raw := map[int32]map[int32][]interval{}
	for _, sg := range segs {
		for g, iv := range sg.per {
			if raw[g] == nil {
				raw[g] = map[int32][]interval{}
			}
			raw[g][sg.pid] = iv
		}
	}
	tr.busy = raw
}

// buildOthers precomputes, per GPU and process, the merged busy intervals of
// every other process on that GPU — shared read-only by all attribution
// workers. With two processes it is simply the other one's list.
func (tr *trace) buildOthers() {
	tr.others = map[int32]map[int32][]interval{}
	for g, byPid := range tr.busy {
		if len(byPid) < 2 {
			continue
		}
		m := map[int32][]interval{}
		for pid := range byPid {
			if len(byPid) == 2 { // the other one's list, shared
				for p, iv := range byPid {
					if p != pid {
						m[pid] = iv
					}
				}
				continue
			}
			var all []interval
			for p, iv := range byPid {
				if p != pid {
					all = append(all, iv...)
				}
			}
			m[pid] = mergeIntervals(all)
		}
		tr.others[g] = m
	}
}

// intersectLength is the total length of a ∩ b, both merged and sorted.
func intersectLength(a, b []interval) int64 {
	if len(a) == 0 {
		return 0
	}
	var s int64
	// b is long (a whole process's busy time): start at the first interval
	// that can overlap a.
	i, j := 0, sort.Search(len(b), func(k int) bool { return b[k].end > a[0].start })
	for i < len(a) && j < len(b) && b[j].start < a[len(a)-1].end {
		lo, hi := max(a[i].start, b[j].start), min(a[i].end, b[j].end)
		if hi > lo {
			s += hi - lo
		}
		if a[i].end < b[j].end {
			i++
		} else {
			j++
		}
	}
	return s
}

// gpuUse returns, per GPU, the processes with GPU work and their busy time,
// and the total time during which two or more processes' work overlapped on
// one GPU.
func (tr *trace) gpuUse() (overlap int64, use []GPUUse) {
	for _, g := range slices.Sorted(maps.Keys(tr.busy)) {
		u := GPUUse{GPU: int64(g)}
		pids := slices.Sorted(maps.Keys(tr.busy[g]))
		for _, p := range pids {
			u.Pids = append(u.Pids, int64(p))
			u.BusyNs = append(u.BusyNs, totalLength(tr.busy[g][p]))
		}
		use = append(use, u)
		lists := make([][]interval, len(pids))
		for i, p := range pids {
			lists[i] = tr.busy[g][p]
		}
		overlap += overlapLength(lists)
	}
	return overlap, use
}

// overlapLength is the time during which two or more of the lists (merged
// busy intervals, one list per process) are busy at once.
func overlapLength(lists [][]interval) int64 {
	switch len(lists) {
	case 0, 1:
		return 0
	case 2:
		return intersectLength(lists[0], lists[1])
	}
	var edges []edge
	for _, iv := range lists {
		for _, x := range iv {
			edges = append(edges, edge{x.start, 1}, edge{x.end, -1})
		}
	}
	return depthTwoLength(edges)
}

// edge is an interval's start (+1) or end (−1).
type edge struct {
	t int64
	d int
}

// depthTwoLength is the time during which two or more of the intervals
// whose edges are given overlap (one merged list per process).
func depthTwoLength(edges []edge) int64 {
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.d, b.d)) })
	var total int64
	depth, last := 0, int64(0)
	for _, e := range edges {
		if depth >= 2 {
			total += e.t - last
		}
		depth += e.d
		last = e.t
	}
	return total
}
