package phases

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/nsysphase/nsysphase/internal/base/corrset"
	"github.com/nsysphase/nsysphase/internal/base/marks"
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
