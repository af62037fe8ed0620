package phases

import (
	"math"
	"slices"
)

// The sweep's GPU ops: each op table's queue of decoded parts, read up to
// a window's end and indexed by correlation id for it.

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
