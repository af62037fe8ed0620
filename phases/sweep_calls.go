package phases

import (
	"cmp"
	"slices"
	"sort"

	"github.com/nsysphase/nsysphase/internal/base/corrset"
)

// The sweep's API calls: each thread's retained calls, put in final order
// with their top-level flags, let go behind the windows, and the
// correlation ids every process's calls carry.

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
