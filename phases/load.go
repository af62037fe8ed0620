package phases

import (
	"cmp"
	"fmt"
	"github.com/nsysphase/nsysphase/internal/base/marks"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/nsys"
)

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
	absentNull  uint64 // null bits of the metrics whose tables are absent
	file        *nsys.File
	strs        *nsys.Strings
	nvtx        *nvtxRows                // until the range trees are built
	threads     map[int64]*threadCalls   // globalTid → calls
	procThreads map[int32][]*threadCalls // pid → its threads that made API calls
	ops         []gpuOp
	index       corrIndex
	classes     []apiClass       // by class index
	names       []string         // API name by class index
	classByName map[int32]uint16 // StringIds id → class index (classOf)
	classByID   []int32          // the same for small ids, class+1; 0 = not seen
	syncs       *syncEvidence    // read on meeting the first nameless call (unnamedClass); nil before
	threadNm    map[int64]string // globalTid → thread name
	// autogradMany: per pid, whether it has several autograd threads
	// with rows (layout sets it; their rows are named after the thread)
	autogradMany map[int64]bool
	graphMode    string
	warnings     []nsys.Warning
	gpuOf        map[[2]int64]int32             // (pid, CUDA device id) → physical GPU
	overlapNs    int64                          // time two or more processes' GPU work overlapped on one GPU
	use          []GPUUse                       // per GPU, its processes' busy time
	busy         map[int32]map[int32][]interval // gpu → pid → merged busy intervals of that process
	others       map[int32]map[int32][]interval // gpu → pid → merged busy intervals of every other process
	gpusOf       map[int32][]procGPU            // pid → the GPUs it has run work on, in GPU order
}

// procGPU is a GPU a process runs work on, from its first op's start. Every
// op that starts before a window's end is committed when the window is
// measured, on either source, so "the GPUs the process had used by the
// instance's end" is the same set on both.
type procGPU struct {
	gpu   int32
	first int64
}

// headLoad is a head being read: what segmentation needs — strings, NVTX
// events, thread names, the graph trace mode and the physical GPU map —,
// read concurrently. The big activity tables are read by the engine's
// source (sweep.go).
type headLoad struct {
	tr *trace
	g  errgroup.Group
}

// startHead starts reading the head: the NVTX side is the critical path,
// so it starts before anything else is read.
func startHead(f *nsys.File) *headLoad {
	h := &headLoad{tr: &trace{file: f, threads: map[int64]*threadCalls{}}}
	tr := h.tr
	h.g.Go(func() error {
		var err error
		tr.nvtx, err = readNVTX(f)
		marks.Mark("head: nvtx read")
		return err
	})
	h.g.Go(func() error {
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
		marks.Mark("head: strings, threads read")
		return nil
	})
	h.g.Go(func() error {
		capture, err := f.Capture()
		tr.graphMode = nsys.GraphTraceMode(capture)
		marks.Mark("head: capture read")
		return err
	})
	return h
}

// wait returns the head once read, with the physical GPU map.
func (h *headLoad) wait(gpuOf map[[2]int64]int32) (*trace, error) {
	if err := h.g.Wait(); err != nil {
		return nil, err
	}
	h.tr.gpuOf = gpuOf
	return h.tr, nil
}

// nvtxRows is the NVTX table reduced to what segmentation reads: the closed
// ranges of each part of the table and the domain creations, in table order.
type nvtxRows struct {
	parts       []nvtxPart
	domains     []nsys.NVTXEvent
	unclosed    int // ranges never closed (NULL end)
	crossThread int // start/end ranges that ended on another thread
	backwards   int // ranges that end before they start: left out
	noThread    int // ranges with a NULL globalTid (read as 0): in no thread, left out
}

// nvtxPart is the closed ranges of one part of the table, in table order,
// and the distinct names they use.
type nvtxPart struct {
	ranges []rawRange
	names  []rawName // by rawRange.name
}

// rawRange is one closed NVTX range as read, its name not yet resolved.
type rawRange struct {
	start, end, gtid int64
	name             int32 // index into its part's names
}

// rawName is what a range's name is made of, as read: its text, inline or
// registered, and its domain with the process that created it (0, 0: none).
type rawName struct {
	pid, domain int64
	textID      int64  // StringIds id of a registered string, when hasTextID
	text        string // the inline text otherwise
	hasTextID   bool
}

// readNVTX reads the NVTX table in parts along its B-tree, concurrently:
// it is on the critical path, and the activity decoders have not yet filled
// the cores.
func readNVTX(f *nsys.File) (*nvtxRows, error) {
	ranges := f.SplitTable(nsys.TableNVTX, runtime.GOMAXPROCS(0), 1<<13)
	hint := int(f.RowEstimate(nsys.TableNVTX))/len(ranges) + 64
	parts := make([]nvtxRows, len(ranges))
	errs := make([]error, len(ranges))
	var wg sync.WaitGroup
	for i, r := range ranges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = readNVTXPart(f, r, hint, &parts[i])
		}()
	}
	wg.Wait()
	out := &nvtxRows{}
	for i := range parts {
		// The first error in table order, as one scan would meet it.
		if errs[i] != nil {
			return nil, errs[i]
		}
		p := &parts[i]
		out.parts = append(out.parts, p.parts...)
		out.domains = append(out.domains, p.domains...)
		out.unclosed += p.unclosed
		out.crossThread += p.crossThread
		out.backwards += p.backwards
		out.noThread += p.noThread
	}
	return out, nil
}

func readNVTXPart(f *nsys.File, r nsys.Part, hint int, out *nvtxRows) error {
	part := nvtxPart{ranges: make([]rawRange, 0, hint)}
	// Name indices: ranges outside domains by text or registered id (the
	// usual case, a cheap lookup), others by their whole rawName.
	byText := map[string]int32{}
	byTextID := map[int64]int32{}
	byName := map[rawName]int32{}
	// The scan interns texts: a text seen lately is the same string, and
	// comparing it with itself is a pointer comparison.
	type lately struct {
		text string
		name int32
		set  bool
	}
	var recent [64]lately
	nameOf := func(e *nsys.NVTXEvent) int32 {
		k := rawName{textID: e.TextID, text: e.Text, hasTextID: e.HasTextID}
		if k.hasTextID {
			k.text = ""
		} else {
			k.textID = 0
		}
		var i int32
		var ok bool
		switch {
		case e.DomainID != 0:
			k.pid, k.domain = nsys.Pid(e.GlobalTid), e.DomainID
			if i, ok = byName[k]; !ok {
				i = int32(len(part.names))
				byName[k] = i
			}
		case k.hasTextID:
			if i, ok = byTextID[k.textID]; !ok {
				i = int32(len(part.names))
				byTextID[k.textID] = i
			}
		default:
			slot := &recent[0]
			if len(k.text) > 0 {
				slot = &recent[(len(k.text)*7+int(k.text[0]))&63]
			}
			if slot.set && slot.text == k.text {
				return slot.name
			}
			if i, ok = byText[k.text]; !ok {
				i = int32(len(part.names))
				byText[k.text] = i
			}
			*slot = lately{k.text, i, true}
		}
		if !ok {
			part.names = append(part.names, k)
		}
		return i
	}
	for e, err := range f.NVTXEventsCoreIn(r) {
		if err != nil {
			return err
		}
		switch {
		case e.EventType == nsys.NVTXDomainCreate:
			out.domains = append(out.domains, e)
		case !nsys.IsRange(e.EventType):
		case !e.HasEnd:
			out.unclosed++
		case e.End < e.Start:
			// No duration to measure: kept as a zero-length instance, it
			// lowered its phase's mean.
			out.backwards++
		case e.GlobalTid == 0:
			// NULL: no process or thread (a real globalTid packs a pid, never
			// 0), so no step or phase of any thread can hold it.
			out.noThread++
		default:
			if e.HasEndTid && e.EndGlobalTid != e.GlobalTid {
				out.crossThread++
			}
			part.ranges = append(part.ranges, rawRange{start: e.Start, end: e.End, gtid: e.GlobalTid, name: nameOf(&e)})
		}
	}
	out.parts = []nvtxPart{part}
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
		cls := classifyAPI(name)
		if _, ok := tr.strs.Get(int64(nameID)); !ok {
			cls.dangling = true // no name to classify: unnamedClass, counted
		}
		tr.classes = append(tr.classes, cls)
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

// noteCorrelation words the joins of GPU work to API calls that went wrong:
// calls repeating a correlation id of their process (their GPU work is
// attributed to each of them) and GPU operations whose id matches no call
// (they are in no total).
func (tr *trace) noteCorrelation(dup, orphan int) {
	f := tr.file
	if dup > 0 {
		tr.warnings = append(tr.warnings, nsys.FileWarning(nsys.WarnDuplicateCorrelation, f.Path, "%d CUDA API %s (process, correlationId) with another call; GPU work joined on those ids counts for each of them",
			dup, plural.Of(dup, "call shares its", "calls share their")))
	}
	if orphan > 0 {
		tr.warnings = append(tr.warnings, nsys.FileWarning(nsys.WarnUnmatchedOps, f.Path, "%d GPU %s a correlationId that matches no CUDA API call of %s process; %s in no phase's GPU totals",
			orphan, plural.Of(orphan, "operation has", "operations have"), plural.Of(orphan, "its", "their"), plural.Of(orphan, "it is", "they are")))
	}
}

// noteDamage words the activity rows that were repaired or left out.
func (tr *trace) noteDamage(negAPI, negOps, badCorr, danglingAPI int) {
	f := tr.file
	if danglingAPI > 0 {
		tr.warnings = append(tr.warnings, nsys.FileWarning(nsys.WarnDanglingAPIName, f.Path, "%d CUDA API %s a nameId that StringIds lacks; each is classified by the GPU work or synchronization record of its correlation id (a kernel or graph: launch; a copy or memset: memcpy_api, or sync for a pageable copy; an event-less synchronization: sync), the others as other_api",
			danglingAPI, plural.Of(danglingAPI, "call names", "calls name")))
	}
	if negAPI > 0 {
		tr.warnings = append(tr.warnings, nsys.FileWarning(nsys.WarnEndBeforeStart, f.Path, "%d CUDA API %s before %s; counted as zero-length",
			negAPI, plural.Of(negAPI, "call ends", "calls end"), plural.Of(negAPI, "it starts", "they start")))
	}
	if negOps > 0 {
		tr.warnings = append(tr.warnings, nsys.FileWarning(nsys.WarnEndBeforeStart, f.Path, "%d GPU %s before %s; counted as zero-length",
			negOps, plural.Of(negOps, "operation ends", "operations end"), plural.Of(negOps, "it starts", "they start")))
	}
	if badCorr > 0 {
		tr.warnings = append(tr.warnings, nsys.Warning{Code: nsys.WarnCorrelationRange, File: f.Path, Message: fmt.Sprintf("%d API %s beyond 2^31 %s left out", badCorr, plural.Of(badCorr, "call with an id", "calls with ids"), plural.Of(badCorr, "was", "were"))})
	}
}

func byStart(a, b apiCall) int {
	return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end))
}

// markTopLevelFrom flags calls not nested inside an earlier call on the
// same thread, following calls already marked whose last top-level call
// ended at curEnd; it returns the new curEnd. Driver calls made by a
// runtime call lie inside it; their time is counted once, through the
// outer call.
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

// groupOpsInto groups ops by (pid, correlation id) in O(n) — a counting
// sort whose per-process bitmap ranks become the correlation index —
// instead of a comparison sort of the biggest structure, writing into buf
// when it is large enough (the engine reuses one buffer for every window).
// Within one id, ops keep the order of sources, then of each source. Each
// source is dropped (set to nil) once scattered. When keep is not nil, only
// the ops o = sources[s][i] with keep[s][i] are grouped: the engine selects
// a window's ops where they lie instead of copying them first. Every pass
// over the ops runs in parallel over the sources (the decoded parts: tens
// per window), each counting into its own ranks' range; only the sums of
// those counts are serial. Grouping each process in parallel instead (as
// before) left 14 of the GPU host's 16 cores idle: two processes, and each
// read every source three times.
func groupOpsInto(buf []gpuOp, sources [][]gpuOp, keep [][]bool) ([]gpuOp, corrIndex) {
	perSrc, entry := srcProcesses(sources, keep)
	ix, ps, idxOf := newPidIndexes(perSrc)
	markIDs(sources, entry, idxOf, ps)
	counts, rankAt := countByRank(sources, perSrc, entry, idxOf)
	off := assignSlots(counts, idxOf, ps)
	out := buf[:0]
	if cap(out) >= int(off) {
		out = out[:off]
	} else {
		out = make([]gpuOp, off)
	}
	parallelFor(len(sources), func(si int) {
		cs, ops, rs := counts[si], sources[si], rankAt[si]
		for i, k := range entry[si] {
			if k < 0 {
				continue
			}
			s := &cs[k].slot[rs[i]]
			out[*s] = ops[i]
			*s++
		}
	})
	clear(sources)
	return out, ix
}

// srcProcesses is, per source, in parallel: its processes and their ids'
// range, and each op's process entry (-1: not selected, or no id).
func srcProcesses(sources [][]gpuOp, keep [][]bool) (perSrc [][]srcPid, entry [][]int32) {
	perSrc = make([][]srcPid, len(sources))
	entry = make([][]int32, len(sources))
	parallelFor(len(sources), func(si int) {
		var list []srcPid
		var at map[int32]int // past a few processes
		last := -1
		ent := make([]int32, len(sources[si]))
		for i := range sources[si] {
			o := &sources[si][i]
			if keep != nil && !keep[si][i] || o.corr < 0 { // no id: attributable to no call
				ent[i] = -1
				continue
			}
			if last < 0 || list[last].pid != o.pid {
				last = findSrcPid(list, at, o.pid)
				if last < 0 {
					last = len(list)
					list = append(list, srcPid{pid: o.pid, minCorr: o.corr, maxCorr: o.corr})
					if at != nil || len(list) > 8 {
						at = indexSrcPids(list, at)
					}
				}
			}
			e := &list[last]
			e.minCorr, e.maxCorr = min(e.minCorr, o.corr), max(e.maxCorr, o.corr)
			ent[i] = int32(last)
		}
		perSrc[si], entry[si] = list, ent
	})
	return perSrc, entry
}

// newPidIndexes makes each process's index, its bitmap sized to the band
// of ids it has: the index, the processes' indexes in pid order, and per
// source the index of each of its process entries.
func newPidIndexes(perSrc [][]srcPid) (corrIndex, []*pidIndex, [][]*pidIndex) {
	type pidAcc struct {
		minCorr, maxCorr int32
		p                *pidIndex
	}
	accs := map[int32]*pidAcc{}
	var pids []int32
	for _, list := range perSrc {
		for _, e := range list {
			a := accs[e.pid]
			if a == nil {
				a = &pidAcc{minCorr: e.minCorr, maxCorr: e.maxCorr}
				accs[e.pid] = a
				pids = append(pids, e.pid)
			}
			a.minCorr, a.maxCorr = min(a.minCorr, e.minCorr), max(a.maxCorr, e.maxCorr)
		}
	}
	slices.Sort(pids)
	ix := corrIndex{byPid: make(map[int32]*pidIndex, len(pids))}
	ps := make([]*pidIndex, len(pids))
	for i, pid := range pids {
		a := accs[pid]
		// A window of the sweep holds a narrow band of large ids: the
		// bitmap starts at the band.
		base := int(a.minCorr) &^ 63
		a.p = &pidIndex{base: int32(base), bits: make([]uint64, (int(a.maxCorr)-base)>>6+1)}
		ix.byPid[pid] = a.p
		ps[i] = a.p
	}
	// Each source's entries point at their process's index.
	idxOf := make([][]*pidIndex, len(perSrc))
	for si, list := range perSrc {
		idxOf[si] = make([]*pidIndex, len(list))
		for k, e := range list {
			idxOf[si][k] = accs[e.pid].p
		}
	}
	return ix, ps, idxOf
}

// markIDs sets the bitmaps, in parallel over the sources (sources of
// different tables share words), then each process's word ranks.
func markIDs(sources [][]gpuOp, entry [][]int32, idxOf [][]*pidIndex, ps []*pidIndex) {
	parallelFor(len(sources), func(si int) {
		ops, idx := sources[si], idxOf[si]
		for i, k := range entry[si] {
			if k < 0 {
				continue
			}
			p := idx[k]
			c := ops[i].corr - p.base
			if w, bit := &p.bits[c>>6], uint64(1)<<(uint(c)&63); atomic.LoadUint64(w)&bit == 0 {
				atomic.OrUint64(w, bit)
			}
		}
	})
	parallelFor(len(ps), func(i int) {
		p := ps[i]
		p.rank = make([]int32, len(p.bits))
		var r int32
		for w, b := range p.bits {
			p.rank[w] = r
			r += int32(bits.OnesCount64(b))
		}
		p.starts = make([]int32, r+1)
	})
}

// rankOf is the rank of corr among the ids with ops (corr has ops).
func (p *pidIndex) rankOf(corr int32) int32 {
	corr -= p.base
	w := corr >> 6
	return p.rank[w] + int32(bits.OnesCount64(p.bits[w]&(1<<(uint(corr)&63)-1)))
}

// srcCounts is one source's ops per rank over one process's ids' range.
type srcCounts struct {
	lo   int32   // rank of the first id of the range
	slot []int32 // per rank from lo: the count, then the next free slot
}

// countByRank counts, per source and process, in parallel, its ops per
// rank, over the ranks of its ids' range only (a source is a part of one
// table: a narrow range). Each op's rank in that range is kept for the
// scatter.
func countByRank(sources [][]gpuOp, perSrc [][]srcPid, entry [][]int32, idxOf [][]*pidIndex) (counts [][]srcCounts, rankAt [][]int32) {
	counts = make([][]srcCounts, len(sources))
	rankAt = make([][]int32, len(sources)) // per selected op: its rank from its range's lo
	parallelFor(len(sources), func(si int) {
		list, idx, ops, ent := perSrc[si], idxOf[si], sources[si], entry[si]
		cs := make([]srcCounts, len(list))
		for k, e := range list {
			lo, hi := idx[k].rankOf(e.minCorr), idx[k].rankOf(e.maxCorr)
			cs[k] = srcCounts{lo: lo, slot: make([]int32, hi-lo+1)}
		}
		rs := make([]int32, len(ent))
		for i, k := range ent {
			if k < 0 {
				continue
			}
			r := idx[k].rankOf(ops[i].corr) - cs[k].lo
			cs[k].slot[r]++
			rs[i] = r
		}
		counts[si], rankAt[si] = cs, rs
	})
	return counts, rankAt
}

// assignSlots turns the counts into starts (absolute positions in the
// output, processes in pid order), then each source's first slot per
// rank: within one id, ops keep the order of sources, then of each
// source. It returns the number of ops.
func assignSlots(counts [][]srcCounts, idxOf [][]*pidIndex, ps []*pidIndex) int32 {
	for si, cs := range counts {
		for k, c := range cs {
			st := idxOf[si][k].starts[c.lo+1:]
			for r, n := range c.slot {
				st[r] += n
			}
		}
	}
	off := int32(0)
	next := make(map[*pidIndex][]int32, len(ps)) // next free slot per rank
	for _, p := range ps {
		p.starts[0] = off
		for r := 1; r < len(p.starts); r++ {
			p.starts[r] += p.starts[r-1]
		}
		off = p.starts[len(p.starts)-1]
		next[p] = slices.Clone(p.starts[:len(p.starts)-1])
	}
	for si, cs := range counts {
		for k, c := range cs {
			nx := next[idxOf[si][k]][c.lo:]
			for r, n := range c.slot {
				c.slot[r] = nx[r]
				nx[r] += n
			}
		}
	}
	return off
}

// srcPid is the selected ops of one process in one source of groupOpsInto.
type srcPid struct {
	pid              int32
	minCorr, maxCorr int32 // over its ops
}

// findSrcPid is the index of pid's entry in list, or -1; at, when not nil,
// maps pids to entries.
func findSrcPid(list []srcPid, at map[int32]int, pid int32) int {
	if at != nil {
		if k, ok := at[pid]; ok {
			return k
		}
		return -1
	}
	for k := range list {
		if list[k].pid == pid {
			return k
		}
	}
	return -1
}

// indexSrcPids maps every pid of list to its entry, in at if not nil.
func indexSrcPids(list []srcPid, at map[int32]int) map[int32]int {
	if at == nil {
		at = make(map[int32]int, len(list))
	}
	for k := range list {
		at[list[k].pid] = k
	}
	return at
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
		// The table names the OS pid only: a pid that processes on two
		// hosts share maps each of them.
		for _, id := range f.JoinPidsOfOS(r.Pid) {
			out[[2]int64{int64(id), r.CUDAID}] = int32(r.GPUID)
		}
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
