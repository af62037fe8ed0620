package phases

import (
	"slices"
	"sort"
	"sync"
)

// Letting go: the calls and ops no later window needs leave memory, with
// the correlation ids of the ops let go and the anchors that still need
// theirs.

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
