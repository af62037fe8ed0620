package phases

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// GPU busy time in the sweep: each process's merged busy intervals per
// GPU, accounted slab by slab once no unread op can reach them.

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
