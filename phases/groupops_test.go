package phases

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// groupOpsReference is groupOpsInto as it was before its passes ran in
// parallel over the sources (one goroutine per process): the reference
// its output is compared with.
func groupOpsReference(buf []gpuOp, sources [][]gpuOp, keep [][]bool) ([]gpuOp, corrIndex) {
	type pidAcc struct {
		minCorr, maxCorr int
		p                *pidIndex
	}
	// Per source, in parallel, then per process: the selected ops' id range.
	perSrc := make([][]srcPid, len(sources))
	parallelFor(len(sources), func(si int) {
		var list []srcPid
		var at map[int32]int // past a few processes
		last := -1
		for i := range sources[si] {
			if keep != nil && !keep[si][i] {
				continue
			}
			o := &sources[si][i]
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
		}
		perSrc[si] = list
	})
	accs := map[int32]*pidAcc{}
	var pids []int32
	for _, list := range perSrc {
		for _, e := range list {
			a := accs[e.pid]
			if a == nil {
				a = &pidAcc{minCorr: int(e.minCorr)}
				accs[e.pid] = a
				pids = append(pids, e.pid)
			}
			a.minCorr = min(a.minCorr, int(e.minCorr))
			a.maxCorr = max(a.maxCorr, int(e.maxCorr))
		}
	}
	slices.Sort(pids)
	ix := corrIndex{byPid: map[int32]*pidIndex{}}
	accOf := make([]*pidAcc, len(pids))
	for i, pid := range pids {
		a := accs[pid]
		// A window of the sweep holds a narrow band of large ids: the
		// bitmap starts at the band.
		base := max(0, a.minCorr) &^ 63
		a.p = &pidIndex{base: int32(base), bits: make([]uint64, (a.maxCorr-base)>>6+1)}
		ix.byPid[pid] = a.p
		accOf[i] = a
	}
	// each calls f with the selected ops of pid, in order.
	each := func(pid int32, f func(o *gpuOp)) {
		for si, ops := range sources {
			if findSrcPid(perSrc[si], nil, pid) < 0 {
				continue // none of pid's ops
			}
			for i := range ops {
				if o := &ops[i]; o.pid == pid && (keep == nil || keep[si][i]) {
					f(o)
				}
			}
		}
	}
	rankOf := func(p *pidIndex, corr int32) int32 {
		corr -= p.base
		w := corr >> 6
		return p.rank[w] + int32(bits.OnesCount64(p.bits[w]&(1<<(uint(corr)&63)-1)))
	}
	// Per process: the bitmap, its ranks, and per-rank counts.
	parallelFor(len(pids), func(i int) {
		pid, a := pids[i], accOf[i]
		p := a.p
		each(pid, func(o *gpuOp) {
			if o.corr >= 0 {
				c := o.corr - p.base
				p.bits[c>>6] |= 1 << (uint(c) & 63)
			}
		})
		p.rank = make([]int32, len(p.bits))
		var r int32
		for w, b := range p.bits {
			p.rank[w] = r
			r += int32(bits.OnesCount64(b))
		}
		p.starts = make([]int32, r+1)
		each(pid, func(o *gpuOp) {
			if o.corr >= 0 { // no correlation: attributable to no call
				p.starts[rankOf(p, o.corr)+1]++
			}
		})
	})
	// Counts → starts (absolute positions in out), processes in order.
	off := int32(0)
	for _, a := range accOf {
		p := a.p
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
	parallelFor(len(pids), func(i int) {
		p := accOf[i].p
		fill := make([]int32, len(p.starts)-1) // next free slot per rank
		each(pids[i], func(o *gpuOp) {
			if o.corr >= 0 {
				r := rankOf(p, o.corr)
				out[p.starts[r]+fill[r]] = *o
				fill[r]++
			}
		})
	})
	clear(sources)
	return out, ix
}

// TestGroupOpsIntoSameAsReference: on random windows (processes whose ops
// interleave, up to 150 of them in one source, ids shared by ops of several tables, ops without an id, a
// selection mask), the grouped ops and the index equal the reference's.
func TestGroupOpsIntoSameAsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 200 {
		var sources, ref [][]gpuOp
		var keep [][]bool
		nsrc := 1 + rng.IntN(12)
		pids := []int32{int32(100 + rng.IntN(3)), int32(200 + rng.IntN(3)), 300}[:1+rng.IntN(3)]
		if trial%10 == 9 { // many processes in one source
			pids = pids[:0]
			for p := range int32(150) {
				pids = append(pids, 1000+p)
			}
		}
		base := int32(rng.IntN(1 << 20))
		for range nsrc {
			n := rng.IntN(300)
			ops := make([]gpuOp, n)
			k := make([]bool, n)
			lo := base + int32(rng.IntN(2000))
			for i := range ops {
				ops[i] = gpuOp{start: int64(i), end: int64(i + 1 + rng.IntN(5)), pid: pids[rng.IntN(len(pids))], corr: lo + int32(rng.IntN(500))}
				if rng.IntN(20) == 0 {
					ops[i].corr = -1
				}
				k[i] = rng.IntN(5) != 0
			}
			sources, ref, keep = append(sources, ops), append(ref, slices.Clone(ops)), append(keep, k)
		}
		var mask [][]bool
		if trial%4 != 0 {
			mask = keep
		}
		got, gix := groupOpsInto(nil, sources, mask)
		want, wix := groupOpsReference(nil, ref, mask)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: grouped ops differ", trial)
		}
		for _, pid := range pids {
			for c := base - 64; c < base+2600; c++ {
				if g, w := gix.lookup(got, pid, c), wix.lookup(want, pid, c); !slices.Equal(g, w) {
					t.Fatalf("trial %d: pid %d corr %d: %d ops, want %d", trial, pid, c, len(g), len(w))
				}
			}
		}
	}
}
