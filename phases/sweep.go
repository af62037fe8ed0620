package phases

import (
	"cmp"
	"errors"
	"github.com/nsysphase/nsysphase/internal/base/marks"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/nsysphase/nsysphase/internal/base/corrset"
	"github.com/nsysphase/nsysphase/nsys"
)

// The engine measures instances window by window while its source hands
// over the activity tables in start order, so memory follows the density
// of the trace (a few seconds of it), not its length. There is one engine;
// its source decides how much of the export is in memory:
//
//   - the stream source (the default) decodes rowid parts ahead of the
//     engine. nsys writes every activity table in start order (all
//     fixtures: zero inversions); the engine relies on it and checks it row
//     by row: API calls and each GPU-op table must be in start order, no
//     GPU op may start more than the margin after its launch call has been
//     measured, and none may start before its call once the engine has let
//     that time go. Any breach stops the stream, and the engine starts over
//     on the memory source, with a warning;
//   - the memory source holds the whole export, sorted by start: one window
//     of unlimited length, which no order can breach.
//
// Results are identical either way; only the memory differs.

// engineConfig is the engine's tuning; the zero value is the default.
// Tests pick the memory source or tiny windows through Options.engine;
// the warning of a fallback says why the stream gave way.
type engineConfig struct {
	// inMemory starts on the memory source (one unlimited window).
	inMemory bool
	// span is the time a window's steps span at least before it is
	// measured. Fewer, larger windows re-read less of the margin; smaller
	// ones hold less in memory — two windows are in flight, one measured
	// while the next is prepared (large_interleaved, 2 cores: peak RSS
	// 145–148 MB at 1 s, 149–155 MB at 2 s, 165–171 MB at 4 s, same CPU);
	// 0: 1 s.
	span int64
	// margin is how far past a window's last range end GPU ops are read
	// before it is measured: the longest launch-to-start delay the stream
	// waits for (large_interleaved: 13.6 ms at most); 0: 1 s.
	margin int64
	// partRows is the rows of one decoded part of a table: small enough
	// that a part is consumed while it is still in the CPU's caches
	// (65Ki-row parts cost 5-10% more CPU in a full analysis, 256Ki 45%);
	// 0: 16Ki.
	partRows int64
}

func (c engineConfig) withDefaults() engineConfig {
	if c.span <= 0 {
		c.span = 1_000_000_000
	}
	if c.margin <= 0 {
		c.margin = 1_000_000_000
	}
	if c.partRows <= 0 {
		c.partRows = 1 << 14
	}
	return c
}

// unorderedError says why the stream source cannot serve this export; the
// engine starts over on the memory source.
type unorderedError struct{ what string }

func (e *unorderedError) Error() string { return "activity not in time order: " + e.what }

// measureAll measures every instance in place with sw, the engine started
// with the analysis, falling back to the memory source when the stream
// breaks the order the engine relies on. It returns the call recorder when
// calls are recorded.
func (tr *trace) measureAll(sw *sweep, st *Store, gtids []int64, spans []stepSpan, calls bool) (*callRecorder, error) {
	rec, err := sw.measure(st, gtids, spans, calls)
	var uo *unorderedError
	if !errors.As(err, &uo) {
		return rec, err
	}
	sw.close()
	// Worth a word: memory then grows with the export.
	tr.warnings = append(tr.warnings, nsys.FileWarning(nsys.WarnWholeRead, tr.file.Path, "%s: the activity tables were read whole, which takes about as much memory as the export", uo.what))
	st.dropMetrics()
	whole := newSweep(startMemory(tr.file, tr.gpuOf, sw.cfg.partRows), sw.cfg, true)
	whole.tr = tr
	defer whole.close()
	return whole.measure(st, gtids, spans, calls)
}

// measureWindow measures the instances of window w: it decodes their keys
// into buf (the window's instances, a few thousand, are the only ones ever
// held whole), measures them, completes each step from its phases
// (finishSpan) and stores their measurements.
func (tr *trace) measureWindow(st *Store, buf *[]Instance, gtids []int64, spans []stepSpan, w sweepWindow, rec *callRecorder) {
	n := w.end - w.first
	xs := slices.Grow((*buf)[:0], n)[:n]
	for i := range xs {
		st.getKey(w.first+i, &xs[i])
	}
	tr.measureRange(xs, gtids[w.first:w.end], w.first, rec)
	for _, sp := range spans[w.sp0:w.sp1] {
		finishSpan(xs, sp, w.first)
	}
	st.setMetrics(xs, w.first)
	clear(xs) // no strings kept alive by the buffer
	*buf = xs
}

// measureRange measures the instances xs (index base on in the result,
// threads gtids): in parallel chunks, or in order when calls are recorded
// (a step's records come before its phases').
func (tr *trace) measureRange(xs []Instance, gtids []int64, base int, rec *callRecorder) {
	if rec == nil {
		measureParallel(tr, xs, gtids)
		return
	}
	at := newAttributor(tr)
	at.rec = rec
	for i := range xs {
		at.inst = int32(base + i)
		at.measure(&xs[i], gtids[i])
	}
}

// sweepWindow is a run of consecutive step spans: instances [first, end),
// starting at lo or later and ending by hi.
type sweepWindow struct {
	first, end int
	lo, hi     int64
	sp0, sp1   int // its spans
}

// planWindows groups the spans (steps in start order) into windows of at
// least span.
func planWindows(st *Store, spans []stepSpan, span int64) []sweepWindow {
	var out []sweepWindow
	for i := 0; i < len(spans); {
		w := sweepWindow{first: spans[i].step, lo: math.MaxInt64, hi: math.MinInt64, sp0: i}
		for ; i < len(spans); i++ {
			sp := spans[i]
			if w.end > w.first && w.hi-w.lo >= span {
				break
			}
			for j := sp.step; j < sp.end; j++ { // the step, then its phases
				w.lo, w.hi = min(w.lo, st.keys[j].start), max(w.hi, st.keys[j].end)
			}
			w.end = sp.end
		}
		w.sp1 = i
		out = append(out, w)
	}
	return out
}

// threadBuf is the retained API calls of one thread: buf[:marked] are in
// final order with their top-level flags set; buf[0] is the anchor when
// hasAnchor: the last top-level call before the retained time, followed
// by the calls nested in it up to buf[head] (none is top-level, and none
// starts in the retained time: no window looks at them).
type threadBuf struct {
	tc        *threadCalls
	gtid      int64
	pid       int32
	buf       []apiCall
	spare     []apiCall // the other buffer: letGo copies the kept calls into it
	marked    int
	head      int // the first retained call after the anchor and its nested calls; 0 without an anchor
	hasAnchor bool
	curEnd    int64   // end of the last top-level call marked
	anchorOps []gpuOp // the anchor's GPU ops that were let go (a copy's pageable check needs them)
	// The process's sets of correlation ids (sweep.used and sweep.evicted),
	// looked up once: they are read for every call.
	used, evicted *corrset.Set
	seen          *corrset.Set // sweep.seen's set of the process
}

// letGo drops the marked calls that start before keep, keeping as the
// anchor the last top-level one of them (or the anchor before). evicted
// holds the correlation ids whose ops were let go: a new anchor must not
// be one of them. The kept calls are copied into the spare buffer and the
// buffers swapped: the window being measured still reads the other
// (sweep.view), which becomes the spare, written only once that window is
// measured.
func (b *threadBuf) letGo(keep int64, evicted *corrset.Set) error {
	k := sort.Search(b.marked, func(i int) bool { return b.buf[i].start >= keep })
	if k <= b.head {
		return nil
	}
	a := k - 1
	for a >= 0 && !b.buf[a].topLevel() {
		a--
	}
	from := k // the first call kept
	switch {
	case a < 0: // no top-level call before keep: no anchor
		b.head, b.hasAnchor = 0, false
		b.anchorOps = b.anchorOps[:0]
	default:
		if a > 0 || !b.hasAnchor { // a new anchor
			if evicted.Has(b.buf[a].corr) {
				return &unorderedError{"a GPU operation starts before its launch call"}
			}
			b.anchorOps = b.anchorOps[:0]
		}
		from, b.head, b.hasAnchor = a, k-a, true
	}
	kept := append(b.spare[:0], b.buf[from:]...)
	b.spare, b.buf, b.marked = b.buf[:0], kept, b.marked-from
	b.tc.calls = b.buf[:b.marked]
	return nil
}

// retained are the marked calls after the anchor and its nested calls.
func (b *threadBuf) retained() []apiCall { return b.buf[b.head:b.marked] }

// sweep is the engine: the activity its source has handed over and not yet
// let go, and the GPU busy time accounted so far.
type sweep struct {
	tr  *trace // set once the NVTX side is loaded
	src activitySource
	cfg engineConfig
	// span and margin are the window's: the config's for the stream
	// source, unlimited for the memory source.
	span, margin int64

	apiFront    int64
	apiDone     bool
	bufs        []*threadBuf
	bufOf       map[int64]*threadBuf
	last        *threadBuf
	threadCache [64]*threadBuf // by thread id, see threadOf

	opBuf   [numSources]opQueue
	opFront [numSources]int64
	opDone  [numSources]bool
	// gather's selection, reused across windows.
	selSources [][]gpuOp
	selKeeps   [][]bool
	selMask    []bool
	selMaxEnd  []int64
	// The op index of a window and its view's busy intervals: two of
	// each, for the window measured and the one prepared.
	ops       [2][]gpuOp
	index     [2]corrIndex
	busyArena [2][]interval
	// account's slab: the busy lists' parts in it, and their ends before clipping.
	slabLists [][]interval
	slabClips []slabClip

	used map[int32]*corrset.Set // corr ids of calls a measured window could see
	// settledHi: every call that starts before it is in used.
	settledHi int64
	evicted   map[int32]*corrset.Set // corr ids of ops let go

	// Busy intervals are merged as ops are committed in start order (the
	// four tables merged), so no window sorts; busy time is accounted in
	// slabs of time no unread op can reach, and intervals that end before
	// doneT are dropped.
	busy    []*busyList // in (gpu, pid) order: a trace has a few
	doneT   int64
	overlap int64

	negAPI, negOps, badCorr int
	danglingAPI             int // calls whose nameId StringIds lacks

	// seen holds every call's correlation id, per process, as the API
	// table is read: a call repeating an id (its ops would count twice) and
	// an op whose id no call has (it is in no total) are counted.
	seen              map[int32]*corrset.Set
	dupCorr, orphanOp int

	tally, commitTally marks.Tally // NSYSPHASE_MARKS: time per stage of the loop
}

// startSweep starts the engine's source on f — decoding begins at once, so
// that the tables are read while the NVTX ranges are loaded and laid out;
// close stops it.
func startSweep(f *nsys.File, gpuOf map[[2]int64]int32, cfg engineConfig) *sweep {
	cfg = cfg.withDefaults()
	if cfg.inMemory {
		return newSweep(startMemory(f, gpuOf, cfg.partRows), cfg, true)
	}
	return newSweep(startStream(f, gpuOf, cfg.partRows), cfg, false)
}

func newSweep(src activitySource, cfg engineConfig, whole bool) *sweep {
	s := &sweep{
		src: src, cfg: cfg, span: cfg.span, margin: cfg.margin,
		apiFront: math.MinInt64, bufOf: map[int64]*threadBuf{},
		used: map[int32]*corrset.Set{}, evicted: map[int32]*corrset.Set{}, seen: map[int32]*corrset.Set{},
		doneT: math.MinInt64, settledHi: math.MinInt64,
	}
	for src := range s.opFront {
		// Timestamps may be negative (a kernel at −1632 ns is valid data):
		// no op may read as "before the first".
		s.opFront[src] = math.MinInt64
	}
	if whole {
		s.span, s.margin = math.MaxInt64, math.MaxInt64
	}
	return s
}

// close stops the source; it may be called more than once.
func (s *sweep) close() { s.src.close() }

// measure measures xs window by window as the tables stream. A window is
// measured on a frozen view of what it can see (windowView) while the
// next one is read, marked and indexed: at most two windows are in
// flight, one being measured and one being prepared.
func (s *sweep) measure(st *Store, gtids []int64, spans []stepSpan, calls bool) (rec *callRecorder, err error) {
	tr := s.tr
	tr.threads = map[int64]*threadCalls{}
	tr.procThreads = map[int32][]*threadCalls{}
	tr.resetClasses()
	if calls {
		if rec, err = newCallRecorder(tr); err != nil {
			return nil, err
		}
	}
	wins := planWindows(st, spans, s.span)
	var buf []Instance // the window being measured
	// keepFrom[i]: the earliest start of windows i.. — what must be retained.
	keepFrom := make([]int64, len(wins)+1)
	keepFrom[len(wins)] = math.MaxInt64
	for i := len(wins) - 1; i >= 0; i-- {
		keepFrom[i] = min(keepFrom[i+1], wins[i].lo)
	}
	var measuring sync.WaitGroup // the window in flight; nothing writes st once measure returns
	defer measuring.Wait()
	marks.Markf("sweep starts: %d windows", len(wins))
	s.tally.Start()
	for wi, w := range wins {
		if err := s.prepareWindow(w, wi&1); err != nil {
			return nil, err
		}
		// The last window is measured on the engine's own busy lists (no
		// copy: nothing is merged or accounted until it is measured), the
		// others on copies.
		last := wi == len(wins)-1
		v := s.view(w, wi&1, !last)
		s.tally.Lap("view")
		s.settle(w)
		s.tally.Lap("settle")
		measuring.Wait() // the window before: its view's buffers are reused next
		s.tally.Lap("wait for measure")
		r := rec // not the result, which a return overwrites while r is in use
		if r != nil {
			r.tr = v
		}
		if last {
			v.measureWindow(st, &buf, gtids, spans, w, r)
		} else {
			measuring.Go(func() { v.measureWindow(st, &buf, gtids, spans, w, r) })
		}
		s.tally.Lap("measure last")
		if err := s.evict(keepFrom[wi+1]); err != nil {
			return nil, err
		}
		s.tally.Lap("evict")
	}
	measuring.Wait()
	s.tally.Print("sweep")
	s.commitTally.Print("sweep")
	marks.Mark("windows measured")
	if rec != nil {
		rec.tr = tr
	}
	if err := s.drain(); err != nil {
		return nil, err
	}
	tr.noteDamage(s.negAPI, s.negOps, s.badCorr, s.danglingAPI)
	tr.noteCorrelation(s.dupCorr, s.orphanOp)
	tr.overlapNs, tr.use = s.overlap, s.gpuUse()
	return rec, nil
}

// prepareWindow reads the tables far enough for w, marks its calls,
// indexes its ops into buffer k and merges the busy intervals.
func (s *sweep) prepareWindow(w sweepWindow, k int) error {
	for !s.apiDone && s.apiFront < w.hi {
		if err := s.pullAPI(); err != nil {
			return err
		}
	}
	s.tally.Lap("pullAPI")
	target := satAdd(w.hi, s.margin)
	if err := s.pullOps(target); err != nil {
		return err
	}
	s.tally.Lap("pullOps")
	s.mark()
	s.tally.Lap("mark")
	for {
		// Busy intervals are merged (commit) while the window's ops are
		// indexed (gather): they share no state, and commit is
		// incremental — ops pulled after it are committed by the next.
		var busy sync.WaitGroup
		busy.Go(func() {
			s.commitTally.Start()
			s.commit()
			s.commitTally.Lap("commit beside gather")
		})
		maxEnd, err := s.gather(w.hi, k)
		busy.Wait()
		s.tally.Lap("wait for commit")
		if err != nil {
			return err
		}
		// Overlap with other processes needs every op that starts before
		// the window's own ops end.
		if maxEnd <= target || s.opsDone() {
			break
		}
		target = maxEnd
		if err := s.pullOps(target); err != nil {
			return err
		}
	}
	s.commit()
	s.tally.Lap("commit")
	return nil
}

// settle records the correlation ids of the calls w could see: an op of
// theirs arriving later came too late.
// Processes are settled in parallel (their threads share a set).
func (s *sweep) settle(w sweepWindow) {
	var pids []int32
	for _, b := range s.bufs {
		if !slices.Contains(pids, b.pid) {
			pids = append(pids, b.pid)
		}
	}
	parallelFor(len(pids), func(i int) {
		for _, b := range s.bufs {
			if b.pid != pids[i] {
				continue
			}
			used := b.used
			if b.hasAnchor && b.buf[0].start < w.hi {
				used.Add(b.buf[0].corr)
			}
			// Calls before settledHi were retained and settled then (a
			// retained call only ever becomes the anchor's nested call or
			// is let go).
			calls := b.retained()
			from := sort.Search(len(calls), func(j int) bool { return calls[j].start >= s.settledHi })
			for _, c := range calls[from:] {
				if c.start >= w.hi {
					break
				}
				used.Add(c.corr)
			}
		}
	})
	s.settledHi = max(s.settledHi, w.hi)
}

// view is what attribution of w reads: a copy of the trace whose calls,
// op index (buffer k) and busy intervals are w's. With copies, the busy
// intervals are copied into buffer k's arena, so that the engine may
// merge and account them while w is measured; without, they are the
// engine's own.
func (s *sweep) view(w sweepWindow, k int, copies bool) *trace {
	tr := s.tr
	v := *tr
	v.ops, v.index = s.ops[k], s.index[k]
	// Calls: each thread's up to the first that starts at w.hi or later
	// (no instance of w reads further). The engine does not change them
	// while w is measured: it appends after them, marks after them and
	// lets go by copying the kept calls into the thread's other buffer.
	tcs := make([]threadCalls, len(s.bufs))
	v.threads = make(map[int64]*threadCalls, len(s.bufs))
	for i, b := range s.bufs {
		calls := b.buf[:b.marked]
		cut := sort.Search(len(calls), func(j int) bool { return calls[j].start >= w.hi })
		tc := &tcs[i]
		tc.globalTid, tc.calls = b.tc.globalTid, calls[:cut:cut]
		v.threads[tc.globalTid] = tc
	}
	v.procThreads = make(map[int32][]*threadCalls, len(tr.procThreads))
	for pid, ts := range tr.procThreads {
		vts := make([]*threadCalls, len(ts))
		for j, tc := range ts {
			vts[j] = v.threads[tc.globalTid]
		}
		v.procThreads[pid] = vts
	}
	// Busy intervals, and those of the other processes.
	ivs := s.busyArena[k][:0]
	if copies {
		n := 0
		for _, bl := range s.busy {
			n += len(bl.iv)
		}
		ivs = slices.Grow(ivs, n)
	}
	v.busy = map[int32]map[int32][]interval{}
	v.gpusOf = map[int32][]procGPU{}
	for _, bl := range s.busy {
		if v.busy[bl.gpu] == nil {
			v.busy[bl.gpu] = map[int32][]interval{}
		}
		iv := bl.iv
		if copies {
			from := len(ivs)
			ivs = append(ivs, bl.iv...)
			iv = ivs[from:len(ivs):len(ivs)]
		}
		v.busy[bl.gpu][bl.pid] = iv
		v.gpusOf[bl.pid] = append(v.gpusOf[bl.pid], procGPU{bl.gpu, bl.first})
	}
	s.busyArena[k] = ivs[:0]
	v.buildOthers()
	return &v
}

// unreadFrom is the earliest start any op still unread can have.
func (s *sweep) unreadFrom() int64 {
	t := int64(math.MaxInt64)
	for src := range s.opFront {
		if !s.opDone[src] {
			t = min(t, s.opFront[src])
		}
	}
	return t
}

func (s *sweep) opsDone() bool {
	for _, d := range s.opDone {
		if !d {
			return false
		}
	}
	return true
}

// pullAPI appends the next part of the API table to the thread buffers.
func (s *sweep) pullAPI() error {
	p, ok, err := s.src.nextAPI()
	s.tally.Lap("pullAPI: wait")
	if err != nil || !ok {
		s.apiDone = !ok
		return err
	}
	s.negAPI += p.negAPI
	s.badCorr += p.badCorr
	for _, c := range p.calls {
		if c.start < s.apiFront {
			return &unorderedError{"CUDA API rows are not in start order"}
		}
		s.apiFront = c.start
		b := s.last
		if b == nil || b.gtid != c.gtid {
			b = s.threadOf(c.gtid)
		}
		// A call whose ops were let go came after them: its id is in
		// evicted. If seen lacked the id then, the op was counted an orphan:
		// while there is none, only a repeated id can be in evicted (one
		// lookup per call, not two).
		corr, repeated := c.corr, false
		if corr > 0 {
			repeated = !b.seen.AddNew(corr)
		}
		if (repeated || corr <= 0 || s.orphanOp > 0) && b.evicted.Has(corr) {
			return &unorderedError{"a GPU operation starts before its launch call"}
		}
		if repeated {
			s.dupCorr++
		}
		cl := s.tr.classOf(int32(c.name))
		if s.tr.classes[cl].dangling {
			if err := s.noteNameless(); err != nil {
				return err
			}
		}
		b.buf = append(b.buf, apiCall{start: c.start, end: c.end, corr: corr, tag: uint32(cl)})
	}
	s.src.reuseAPI(p)
	s.tally.Lap("pullAPI: calls")
	return nil
}

// noteNameless counts a call whose name is dangling; the first reads the
// synchronization records that classify such calls (unnamedClass), so an
// export without one never reads them.
func (s *sweep) noteNameless() error {
	s.danglingAPI++
	if s.tr.syncs != nil {
		return nil
	}
	ev, err := readSyncEvidence(s.tr.file)
	s.tr.syncs = ev
	return err
}

// threadOf is gtid's buffer, created on first sight; it becomes s.last.
// Threads' calls alternate: a small cache by thread id spares most map
// lookups (a fifth of pullAPI's time with 40 threads).
func (s *sweep) threadOf(gtid int64) *threadBuf {
	slot := &s.threadCache[uint64(gtid^gtid>>24)%uint64(len(s.threadCache))]
	b := *slot
	if b == nil || b.gtid != gtid {
		if b = s.bufOf[gtid]; b == nil {
			b = s.newThread(gtid)
		}
		*slot = b
	}
	s.last = b
	return b
}

func (s *sweep) newThread(gtid int64) *threadBuf {
	tr := s.tr
	tc := &threadCalls{globalTid: gtid}
	b := &threadBuf{tc: tc, gtid: gtid, pid: tr.file.JoinPid(gtid), curEnd: -1 << 62}
	b.used, b.evicted, b.seen = corrSetOf(s.used, b.pid), corrSetOf(s.evicted, b.pid), corrSetOf(s.seen, b.pid)
	s.bufOf[gtid] = b
	s.bufs = append(s.bufs, b)
	tr.threads[gtid] = tc
	ts := tr.procThreads[b.pid]
	i, _ := slices.BinarySearchFunc(ts, gtid, func(t *threadCalls, g int64) int { return cmp.Compare(t.globalTid, g) })
	tr.procThreads[b.pid] = slices.Insert(ts, i, tc)
	return b
}

// pullOps reads every op table until its next op starts at target or later.
func (s *sweep) pullOps(target int64) error {
	for src := range s.opBuf {
		for !s.opDone[src] && s.opFront[src] < target {
			if err := s.pullOpPart(src); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *sweep) pullOpPart(src int) error {
	p, ok, err := s.src.nextOps(src)
	s.tally.Lap("pullOps: wait")
	if err != nil || !ok {
		s.opDone[src] = !ok
		return err
	}
	s.negOps += p.neg
	kept := p.ops[:0] // filtered in place: the part is kept, not copied
	used := corrCache{m: s.used}
	for _, o := range p.ops {
		if o.start < s.opFront[src] {
			return &unorderedError{"GPU operation rows are not in start order"}
		}
		s.opFront[src] = o.start
		if o.corr < 0 { // no correlation: attributable to no call
			continue
		}
		if used.of(o.pid).Has(o.corr) {
			return &unorderedError{"a GPU operation starts more than the sweep margin after its launch"}
		}
		kept = append(kept, o)
	}
	if len(kept) == 0 {
		s.src.reuseOps(src, p)
		return nil
	}
	p.ops = kept
	q := &s.opBuf[src]
	q.chunks = append(q.chunks, opChunk{part: p, ops: kept})
	return nil
}

// opQueue is one GPU-op table's retained ops: the decoded parts themselves
// (filtered in place, none empty), in table order, each handed back to the
// source once all its ops are let go — no copy, no growing buffer.
type opQueue struct {
	chunks []opChunk
	cc, ci int // the next op to commit: chunks[cc].ops[ci]; cc == len(chunks): none
}

// opChunk is a decoded part and its ops not yet let go (a suffix of part.ops).
type opChunk struct {
	part opPart
	ops  []gpuOp
}

// next returns the next op to commit.
func (q *opQueue) next() (*gpuOp, bool) {
	if q.cc == len(q.chunks) {
		return nil, false
	}
	return &q.chunks[q.cc].ops[q.ci], true
}

// advance marks the next op committed.
func (q *opQueue) advance() {
	q.ci++
	if q.ci == len(q.chunks[q.cc].ops) {
		q.cc, q.ci = q.cc+1, 0
	}
}

// mark puts the calls that can no longer gain an earlier-starting
// neighbour in final order and flags the top-level ones.
// Threads are independent: they are marked in parallel.
func (s *sweep) mark() {
	parallelFor(len(s.bufs), func(i int) {
		b := s.bufs[i]
		lim := len(b.buf)
		if !s.apiDone {
			lim = b.marked + sort.Search(lim-b.marked, func(i int) bool { return b.buf[b.marked+i].start >= s.apiFront })
		}
		tail := b.buf[b.marked:lim]
		if !slices.IsSortedFunc(tail, byStart) {
			slices.SortStableFunc(tail, byStart)
		}
		b.curEnd = markTopLevelFrom(tail, b.curEnd)
		b.marked = lim
		b.tc.calls = b.buf[:b.marked]
	})
}

// parallelFor calls f(0) … f(n-1), on up to GOMAXPROCS goroutines (the
// caller's among them), and returns when all have returned.
func parallelFor(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= n {
				return
			}
			f(i)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// gather indexes the retained ops of the calls that start before hi (and of
// the anchors) by correlation id into buffer k; it returns their latest end.
func (s *sweep) gather(hi int64, k int) (int64, error) {
	// Per process, the band of correlation ids of those calls (ids grow
	// with time); an anchor can be old, so its ops are picked by id.
	type band struct{ lo, hi int32 }
	bands := map[int32]band{}
	anchors := s.anchorsNeedingOps()
	// Each thread's band, in parallel, then each process's.
	type threadBand struct {
		band
		any, early bool // early: a call whose ops were let go
	}
	tbs := make([]threadBand, len(s.bufs))
	parallelFor(len(s.bufs), func(i int) {
		b, tb := s.bufs[i], &tbs[i]
		tb.band = band{math.MaxInt32, math.MinInt32}
		for _, c := range b.retained() {
			if c.start >= hi {
				break
			}
			if b.evicted.Has(c.corr) {
				tb.early = true
				return
			}
			tb.any = true
			tb.lo, tb.hi = min(tb.lo, c.corr), max(tb.hi, c.corr)
		}
	})
	s.tally.Lap("gather: bands")
	for i, tb := range tbs {
		if tb.early {
			return 0, &unorderedError{"a GPU operation starts before its launch call"}
		}
		if !tb.any {
			continue
		}
		pid := s.bufs[i].pid
		bd, ok := bands[pid]
		if !ok {
			bd = band{math.MaxInt32, math.MinInt32}
		}
		bands[pid] = band{min(bd.lo, tb.lo), max(bd.hi, tb.hi)}
	}
	pids := make([]int32, 0, len(bands))
	bandOf := make([]band, 0, len(bands))
	for p, bd := range bands {
		pids, bandOf = append(pids, p), append(bandOf, bd)
	}
	// The selection is a mask over the ops where they lie (opBuf, then the
	// anchors' ops): groupOpsInto copies the selected ops once, into the
	// window's index.
	sources, keeps := s.selSources[:0], s.selKeeps[:0]
	n := 0
	add := func(ops []gpuOp) {
		if len(ops) > 0 {
			sources, n = append(sources, ops), n+len(ops)
		}
	}
	for src := range s.opBuf {
		for _, c := range s.opBuf[src].chunks {
			add(c.ops)
		}
	}
	for _, b := range s.bufs {
		add(b.anchorOps)
	}
	full := slices.Grow(s.selMask[:0], n)[:n]
	mask := full
	for _, ops := range sources {
		keeps = append(keeps, mask[:len(ops):len(ops)])
		mask = mask[len(ops):]
	}
	s.tally.Lap("gather: sources")
	// The sources (decoded parts, mostly) are masked in parallel.
	maxEnds := s.selMaxEnd[:0]
	for range sources {
		maxEnds = append(maxEnds, math.MinInt64)
	}
	parallelFor(len(sources), func(si int) {
		ops, in := sources[si], keeps[si]
		maxEnd := int64(math.MinInt64)
		for i := range ops {
			o := &ops[i]
			ok, bd := false, band{}
			for k, p := range pids { // a few processes: no map lookup per op
				if p == o.pid {
					ok, bd = true, bandOf[k]
					break
				}
			}
			in[i] = ok && o.corr >= bd.lo && o.corr <= bd.hi ||
				len(anchors) > 0 && anchors[[2]int32{o.pid, o.corr}] != nil
			if in[i] {
				maxEnd = max(maxEnd, o.end)
			}
		}
		maxEnds[si] = maxEnd
	})
	maxEnd := int64(math.MinInt64)
	for _, e := range maxEnds {
		maxEnd = max(maxEnd, e)
	}
	s.selMaxEnd = maxEnds[:0]
	s.tally.Lap("gather: mask")
	s.ops[k], s.index[k] = groupOpsInto(s.ops[k], sources, keeps) // the window before the last is measured
	s.tally.Lap("gather: group")
	clear(sources) // hold no op buffer past the window
	s.selSources, s.selKeeps, s.selMask = sources[:0], keeps[:0], full[:0]
	return maxEnd, nil
}

// busyList is one process's merged busy intervals on one GPU, and the busy
// time already accounted and dropped.
type busyList struct {
	gpu, pid int32
	iv       []interval
	doneNs   int64
	first    int64 // start of the process's first op on the GPU: the GPU is the process's from then on
}

// commit merges into busy the buffered ops that start before every op
// still unread, in start order.
func (s *sweep) commit() {
	t := s.unreadFrom()
	for {
		best, bestStart := -1, t
		for src := range s.opBuf {
			if o, ok := s.opBuf[src].next(); ok && o.start < bestStart {
				best, bestStart = src, o.start
			}
		}
		if best < 0 {
			return
		}
		o, _ := s.opBuf[best].next()
		s.opBuf[best].advance()
		if o.end <= o.start {
			continue
		}
		bl := s.busyOf(o.gpu, o.pid, o.start)
		if n := len(bl.iv); n > 0 && o.start <= bl.iv[n-1].end {
			bl.iv[n-1].end = max(bl.iv[n-1].end, o.end)
		} else {
			bl.iv = append(bl.iv, interval{o.start, o.end})
		}
	}
}

// busyOf returns the busy list of (gpu, pid), creating it. A linear search
// of the few lists beats map lookups per op when two processes' ops
// alternate.
func (s *sweep) busyOf(gpu, pid int32, start int64) *busyList {
	for _, bl := range s.busy {
		if bl.gpu == gpu && bl.pid == pid {
			return bl
		}
	}
	bl := &busyList{gpu: gpu, pid: pid, first: start}
	i, _ := slices.BinarySearchFunc(s.busy, bl, func(a, b *busyList) int {
		return cmp.Or(cmp.Compare(a.gpu, b.gpu), cmp.Compare(a.pid, b.pid))
	})
	s.busy = slices.Insert(s.busy, i, bl)
	return bl
}

// byGPU calls f with the busy lists of each GPU in turn.
func (s *sweep) byGPU(f func(lists []*busyList)) {
	for lo := 0; lo < len(s.busy); {
		hi := lo + 1
		for hi < len(s.busy) && s.busy[hi].gpu == s.busy[lo].gpu {
			hi++
		}
		f(s.busy[lo:hi])
		lo = hi
	}
}

// evict lets go of what no later window needs: calls and ops that start
// before keep (keeping each thread's anchor), accounting the GPU busy time
// that has become final.
func (s *sweep) evict(keep int64) error {
	// Threads are independent: their calls are let go in parallel.
	errs := make([]error, len(s.bufs))
	parallelFor(len(s.bufs), func(i int) { errs[i] = s.bufs[i].letGo(keep, s.bufs[i].evicted) })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	s.tally.Lap("evict: calls")
	anchorCorr := s.anchorsNeedingOps()
	// Ops: those that start before keep and before what is still unread,
	// API calls included (an op is let go only once its call has been read).
	s.commit()
	opKeep := min(keep, s.unreadFrom())
	if !s.apiDone {
		opKeep = min(opKeep, s.apiFront)
	}
	if opKeep <= s.doneT {
		return nil
	}
	// The busy time of the slab is accounted while the ops are let go:
	// the busy lists and the op queues share no state.
	var busy sync.WaitGroup
	busy.Go(func() { s.account(opKeep) })
	defer func() {
		busy.Wait()
		s.tally.Lap("evict: wait for account")
	}()
	s.tally.Lap("evict: commit")
	drops, pids := s.opsBefore(opKeep)
	s.letGoOps(&drops, pids, anchorCorr)
	s.tally.Lap("evict: ops")
	s.trimOps(&drops)
	return nil
}

// opCut is where a queue's let-go prefix ends: chunks before chunk whole,
// then n ops of chunk.
type opCut struct{ chunk, n int }

// pidList is a list of distinct processes, a set past a few.
type pidList struct {
	pids []int32
	seen map[int32]bool // past a few processes
}

func (l *pidList) add(p int32) {
	if l.seen != nil {
		if !l.seen[p] {
			l.seen[p] = true
			l.pids = append(l.pids, p)
		}
		return
	}
	if !slices.Contains(l.pids, p) {
		if l.pids = append(l.pids, p); len(l.pids) > 8 {
			l.seen = map[int32]bool{}
			for _, q := range l.pids {
				l.seen[q] = true
			}
		}
	}
}

// opsBefore finds the ops let go: a prefix of each queue's committed ops
// starting before opKeep, chunk by chunk (drop[src] chunks whole, then cut
// ops of the next), and the processes they belong to.
func (s *sweep) opsBefore(opKeep int64) ([numSources]opCut, []int32) {
	var drops [numSources]opCut
	var pl pidList
	for src := range s.opBuf {
		q := &s.opBuf[src]
		for drops[src].chunk < len(q.chunks) {
			ops := q.chunks[drops[src].chunk].ops
			committed := len(ops) // only committed ops are let go
			if c := drops[src].chunk; c == q.cc {
				committed = q.ci
			} else if c > q.cc {
				committed = 0
			}
			k := sort.Search(committed, func(i int) bool { return ops[i].start >= opKeep })
			last := int32(-1)
			for i := range ops[:k] {
				if p := ops[i].pid; p != last {
					pl.add(p)
					last = p
				}
			}
			if k < len(ops) {
				drops[src].n = k
				break
			}
			drops[src].chunk++
		}
	}
	return drops, pl.pids
}

// letGoOps adds each dropped op's id to its process's evicted set; an id
// no call has is an orphan. Processes have their own sets and anchors: a
// few are let go in parallel, each reading every op let go.
func (s *sweep) letGoOps(drops *[numSources]opCut, pids []int32, anchorCorr map[[2]int32]*threadBuf) {
	for _, p := range pids {
		corrSetOf(s.evicted, p)
	}
	groups := [][]int32{pids}
	if len(pids) > 1 && len(pids) <= 8 {
		groups = make([][]int32, len(pids))
		for i := range pids {
			groups[i] = pids[i : i+1]
		}
	}
	orphans := make([]int, len(groups))
	parallelFor(len(groups), func(g int) {
		mine := groups[g]
		evicted := corrCache{m: s.evicted}
		seen := corrCache{m: s.seen}
		dropOps := func(ops []gpuOp) {
			for _, o := range ops {
				if len(mine) == 1 && o.pid != mine[0] {
					continue
				}
				evicted.of(o.pid).Add(o.corr)
				if !seen.of(o.pid).Has(o.corr) { // every call that can launch it has been read
					orphans[g]++
				}
				if len(anchorCorr) > 0 {
					if b := anchorCorr[[2]int32{o.pid, o.corr}]; b != nil {
						b.anchorOps = append(b.anchorOps, o)
					}
				}
			}
		}
		for src := range s.opBuf {
			q, d := &s.opBuf[src], drops[src]
			for c := range d.chunk {
				dropOps(q.chunks[c].ops)
			}
			if d.chunk < len(q.chunks) {
				dropOps(q.chunks[d.chunk].ops[:d.n])
			}
		}
	})
	for _, n := range orphans {
		s.orphanOp += n
	}
}

// trimOps removes the dropped ops from the queues, handing whole chunks
// back to their source for reuse.
func (s *sweep) trimOps(drops *[numSources]opCut) {
	for src := range s.opBuf {
		q, d := &s.opBuf[src], drops[src]
		if d.chunk < len(q.chunks) {
			q.chunks[d.chunk].ops = q.chunks[d.chunk].ops[d.n:]
			if d.chunk == q.cc {
				q.ci -= d.n
			}
		}
		for _, c := range q.chunks[:d.chunk] {
			s.src.reuseOps(src, c.part)
		}
		n := copy(q.chunks, q.chunks[d.chunk:])
		clear(q.chunks[n:])
		q.chunks, q.cc = q.chunks[:n], q.cc-d.chunk
	}
}

// anchorsNeedingOps maps (pid, corr) of each anchor whose category depends
// on its ops — a non-blocking copy turns sync when it touches pageable
// memory, a nameless call is classified by them — to its thread.
func (s *sweep) anchorsNeedingOps() map[[2]int32]*threadBuf {
	var m map[[2]int32]*threadBuf
	for _, b := range s.bufs {
		if !b.hasAnchor {
			continue
		}
		c := b.buf[0]
		if cls := s.tr.classes[c.class()]; cls.isCopy && cls.sync == SyncNone || cls.dangling {
			if m == nil {
				m = map[[2]int32]*threadBuf{}
			}
			m[[2]int32{b.pid, c.corr}] = b
		}
	}
	return m
}

// account adds the busy and overlap time of the slab [doneT, t), which no
// unread op can reach, and drops the intervals that end by t. A busy list
// is sorted, disjoint and holds nothing that ends by doneT, so its part in
// the slab is its intervals that start before t, the first and the last
// clipped: they are clipped in place for the overlap and then restored,
// instead of being copied.
func (s *sweep) account(t int64) {
	s.byGPU(func(lists []*busyList) {
		slab, clipped := s.slabLists[:0], s.slabClips[:0]
		for _, bl := range lists {
			j := sort.Search(len(bl.iv), func(i int) bool { return bl.iv[i].start >= t })
			if j == 0 {
				continue
			}
			in := bl.iv[:j]
			clipped = append(clipped, slabClip{in[0].start, in[j-1].end})
			in[0].start, in[j-1].end = max(in[0].start, s.doneT), min(in[j-1].end, t)
			for _, x := range in {
				bl.doneNs += x.end - x.start
			}
			slab = append(slab, in)
		}
		s.overlap += overlapLength(slab)
		for i, in := range slab {
			in[0].start, in[len(in)-1].end = clipped[i].start, clipped[i].end
		}
		for _, bl := range lists {
			k := sort.Search(len(bl.iv), func(i int) bool { return bl.iv[i].end > t })
			bl.iv = append(bl.iv[:0], bl.iv[k:]...)
		}
		clear(slab)
		s.slabLists, s.slabClips = slab[:0], clipped[:0]
	})
	s.doneT = t
}

// slabClip is the first start and the last end of a busy list's part of a
// slab before account clipped them.
type slabClip struct{ start, end int64 }

// drain reads what no window needs, for the busy-time totals and the
// counts of damaged rows.
func (s *sweep) drain() error {
	for !s.apiDone {
		p, ok, err := s.src.nextAPI()
		if err != nil {
			return err
		}
		if !ok {
			s.apiDone = true
			break
		}
		s.negAPI += p.negAPI
		s.badCorr += p.badCorr
		seen := corrCache{m: s.seen, create: true}
		for _, c := range p.calls {
			s.noteCorr(seen.of(s.tr.file.JoinPid(c.gtid)), c.corr)
		}
	}
	for !s.opsDone() {
		for src := range s.opBuf {
			if !s.opDone[src] {
				if err := s.pullOpPart(src); err != nil {
					return err
				}
			}
		}
		if err := s.evict(math.MaxInt64); err != nil {
			return err
		}
	}
	return s.evict(math.MaxInt64)
}

// gpuUse lists, per GPU in order, its processes and their busy time.
func (s *sweep) gpuUse() []GPUUse {
	var use []GPUUse
	s.byGPU(func(lists []*busyList) {
		u := GPUUse{GPU: int64(lists[0].gpu)}
		for _, bl := range lists {
			u.Pids = append(u.Pids, s.tr.file.JoinPidOS(bl.pid))
			u.BusyNs = append(u.BusyNs, bl.doneNs)
		}
		use = append(use, u)
	})
	return use
}

// satAdd is a + b, at most math.MaxInt64 (b ≥ 0).
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// corrCache looks up one process's set in m, remembering the last: ops
// come in runs of one process. With create, a missing set is made.
type corrCache struct {
	m      map[int32]*corrset.Set
	create bool
	pid    int32
	set    *corrset.Set
	ok     bool
}

func (c *corrCache) of(pid int32) *corrset.Set {
	if !c.ok || pid != c.pid {
		if c.create {
			c.set = corrSetOf(c.m, pid)
		} else {
			c.set = c.m[pid]
		}
		c.pid, c.ok = pid, true
	}
	return c.set
}

func corrSetOf(m map[int32]*corrset.Set, pid int32) *corrset.Set {
	c := m[pid]
	if c == nil {
		c = &corrset.Set{}
		m[pid] = c
	}
	return c
}

// noteCorr records a call's correlation id in its process's set, counting
// a repeat (0 and negative ids mean none).
func (s *sweep) noteCorr(set *corrset.Set, corr int32) {
	if corr <= 0 {
		return
	}
	if set.Has(corr) {
		s.dupCorr++
		return
	}
	set.Add(corr)
}
