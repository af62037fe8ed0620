package phases

import (
	"cmp"
	"regexp"
	"slices"
	"sync"

	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/nsys"
)

// The ranges a segmentation works on: each thread's NVTX ranges with their
// names resolved and their parents linked, or, without NVTX, the
// whole-process and single-shot ranges that stand in for them.

// rng is one closed NVTX range.
type rng struct {
	start, end int64
	gtid       int64
	nm         *rangeName
	parent     int32 // index into the thread's ranges, -1 = top level
	depth      int32
}

// rangeName is what segmentation derives from one distinct range name. A
// trace repeats a few dozen names over tens of thousands of ranges: each is
// resolved, stripped, renamed and matched once, not once per range. Names
// belong to one analysis; the memos below are filled by one goroutine.
type rangeName struct {
	name   string // "<domain>:<text>" for a named domain, else the text; PyTorch ids stripped
	family string // name with standalone numbers as N (FamilyOf); == name when it has none
	text   string // the text alone: arm patterns match it, whatever the domain
	phase  string // the name as a phase: numbers folded at every depth (PhaseName)
	warmup bool   // the text names a warm-up range (isWarmupName)
	lib    bool   // written by a library or framework, not the program (IsLibraryRange)
	qual   bool   // lib, but only a C++-qualified code section (IsQualifiedRange): a phase where it sits

	armPat *regexp.Regexp // the pattern arm was matched with; nil: not yet
	arm    armMatch
}

// isOp reports an operator or library-call range: a library's range that
// is not merely a C++-qualified code section.
func (n *rangeName) isOp() bool { return n.lib && !n.qual }

// syntheticName names the ranges segmentation makes up (WholeProcess).
func syntheticName(name string) *rangeName {
	return &rangeName{name: name, family: name, text: name, phase: name, warmup: isWarmupName(name)}
}

// threadRanges are one thread's ranges sorted by (start, −end).
type threadRanges struct {
	gtid   int64
	ranges []rng
	tops   []int32 // top-level ranges (topLevel), once asked for
}

// buildRanges turns NVTX rows into per-thread range trees. Ranges that never
// closed are counted, not used.
func (tr *trace) buildRanges(opt Options, ex *Exclusions) []*threadRanges {
	nv := tr.nvtx
	tr.nvtx = nil // no longer needed; free before attribution
	if nv == nil {
		return nil
	}
	ex.UnclosedRanges += nv.unclosed
	ex.CrossThreadEnded += nv.crossThread
	if nv.backwards > 0 {
		tr.warnings = append(tr.warnings, nsys.FileWarning(nsys.WarnEndBeforeStart, tr.file.Path, "%d NVTX %s before %s and %s left out",
			nv.backwards, plural.Of(nv.backwards, "range ends", "ranges end"), plural.Of(nv.backwards, "it starts", "they start"), plural.Of(nv.backwards, "was", "were")))
	}
	if nv.noThread > 0 {
		tr.warnings = append(tr.warnings, nsys.FileWarning(nsys.WarnNoThreadRange, tr.file.Path, "%d NVTX %s no thread (a NULL globalTid) and %s left out: no phase holds %s",
			nv.noThread, plural.Of(nv.noThread, "range has", "ranges have"), plural.Of(nv.noThread, "was", "were"), plural.Of(nv.noThread, "it", "them")))
	}
	rn := tr.newRangeNamer(nv, opt)
	byTid := tr.threadsOf(nv, opt)
	for _, part := range nv.parts {
		partNames := make([]*rangeName, len(part.names))
		for i, pn := range part.names {
			partNames[i] = rn.name(pn)
		}
		var t *threadRanges
		lastTid := int64(0)
		for i := range part.ranges {
			e := &part.ranges[i]
			if t == nil || e.gtid != lastTid {
				t, lastTid = byTid[e.gtid], e.gtid
			}
			nm := partNames[e.name]
			if t == nil || nm == nil {
				continue
			}
			// A negative range is clamped to zero length (counted in
			// warnings by robustness tests).
			t.ranges = append(t.ranges, rng{start: e.start, end: max(e.end, e.start), gtid: e.gtid, nm: nm, parent: -1})
		}
	}
	out := make([]*threadRanges, 0, len(byTid))
	for _, t := range byTid {
		if t != nil && len(t.ranges) > 0 {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *threadRanges) int { return cmp.Compare(a.gtid, b.gtid) })
	// Threads' trees are independent: sorted and linked concurrently.
	var wg sync.WaitGroup
	for _, t := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slices.SortFunc(t.ranges, func(a, b rng) int {
				return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end))
			})
			linkParents(t)
		}()
	}
	wg.Wait()
	return out
}

// rangeNamer resolves each distinct (domain name, text) once; nil: dropped
// by the rules.
type rangeNamer struct {
	tr      *trace
	opt     Options
	domains map[domainKey]string
	names   map[nameKey]*rangeName
}

// domainKey is a process's NVTX domain.
type domainKey struct{ pid, domain int64 }

// nameKey is a range's name as recorded.
type nameKey struct {
	domain, text string
	textID       int64
	hasTextID    bool
}

func (tr *trace) newRangeNamer(nv *nvtxRows, opt Options) *rangeNamer {
	domains := map[domainKey]string{}
	for _, e := range nv.domains {
		name := e.Text
		if e.HasTextID {
			name = tr.strs.Name(e.TextID)
		}
		domains[domainKey{nsys.Pid(e.GlobalTid), e.DomainID}] = name
	}
	return &rangeNamer{tr: tr, opt: opt, domains: domains, names: map[nameKey]*rangeName{}}
}

// name is the resolved name of a part's range name.
func (r *rangeNamer) name(pn rawName) *rangeName {
	k := nameKey{text: pn.text, textID: pn.textID, hasTextID: pn.hasTextID}
	if pn.domain != 0 {
		k.domain = r.domains[domainKey{pn.pid, pn.domain}]
	}
	nm, ok := r.names[k]
	if !ok {
		nm = r.resolve(k)
		r.names[k] = nm
	}
	return nm
}

func (r *rangeNamer) resolve(k nameKey) *rangeName {
	text := k.text
	if k.hasTextID {
		text = r.tr.strs.Name(k.textID)
	}
	lib, qual := IsLibraryRange(k.domain, text), IsQualifiedRange(k.domain, text)
	text = PayloadName(StripTorchIDs(text))
	name := text
	if k.domain != "" {
		name = k.domain + ":" + text
	}
	if r.opt.Rules != nil {
		var keep bool
		if name, keep = r.opt.Rules.rename(name); !keep {
			return nil
		}
	}
	return &rangeName{name: name, family: FamilyOf(name), text: text, phase: PhaseName(name), warmup: isWarmupName(text), lib: lib, qual: qual}
}

// threadsOf is each thread's range list, counted first so it is allocated
// once at its size; nil: left out by the rules.
func (tr *trace) threadsOf(nv *nvtxRows, opt Options) map[int64]*threadRanges {
	byTid := map[int64]*threadRanges{}
	counts := map[int64]int{}
	for _, part := range nv.parts {
		rs := part.ranges
		for i := 0; i < len(rs); {
			j := i + 1
			for j < len(rs) && rs[j].gtid == rs[i].gtid {
				j++
			}
			counts[rs[i].gtid] += j - i
			i = j
		}
	}
	for g, n := range counts {
		if opt.Rules != nil && !opt.Rules.selectThread(nsys.Pid(g), tr.threadNm[g], tr.processName(nsys.Pid(g))) {
			byTid[g] = nil
			continue
		}
		byTid[g] = &threadRanges{gtid: g, ranges: make([]rng, 0, n)}
	}
	return byTid
}

// linkParents sets each range's parent and depth; t.ranges is sorted by
// (start, −end). Parent = the closest earlier-starting range that contains
// it. The explicit stack bounds memory even for very deep nesting.
func linkParents(t *threadRanges) {
	var stack []int32
	for i := range t.ranges {
		r := &t.ranges[i]
		r.parent, r.depth = -1, 0
		for len(stack) > 0 {
			p := &t.ranges[stack[len(stack)-1]]
			if r.start >= p.start && r.end <= p.end {
				break
			}
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			r.parent = stack[len(stack)-1]
			r.depth = t.ranges[r.parent].depth + 1
		}
		stack = append(stack, int32(i))
	}
}

// wholeProcessRanges makes one synthetic step range per process that made
// CUDA API calls: from its first call's start to its last call's end, on
// the thread that made the most calls (ties: the lower thread id).
func wholeProcessRanges(ext []nsys.ThreadExtent) []*threadRanges {
	type proc struct {
		lo, hi int64
		best   nsys.ThreadExtent
	}
	procs := map[int64]*proc{}
	for _, e := range ext {
		pid := nsys.Pid(e.GlobalTid)
		p := procs[pid]
		if p == nil {
			p = &proc{lo: e.Start, hi: e.End, best: e}
			procs[pid] = p
		}
		p.lo, p.hi = min(p.lo, e.Start), max(p.hi, e.End)
		if e.Calls > p.best.Calls || (e.Calls == p.best.Calls && e.GlobalTid < p.best.GlobalTid) {
			p.best = e
		}
	}
	out := make([]*threadRanges, 0, len(procs))
	nm := syntheticName(WholeProcess)
	for _, p := range procs {
		g := p.best.GlobalTid
		out = append(out, &threadRanges{gtid: g, ranges: []rng{{start: p.lo, end: max(p.lo, p.hi), gtid: g, nm: nm, parent: -1}}})
	}
	slices.SortFunc(out, func(a, b *threadRanges) int { return cmp.Compare(a.gtid, b.gtid) })
	return out
}

// wrapSingleShot puts each thread's ranges under one synthetic step range
// spanning them and the thread's CUDA API calls, and returns the depth that
// makes every range a phase. libraries: the threads hold only library
// ranges, and those are its phases (the step is marked as a library's, so
// its library children are not left out).
func wrapSingleShot(threads []*threadRanges, ext []nsys.ThreadExtent, libraries bool) int {
	byTid := map[int64]nsys.ThreadExtent{}
	for _, e := range ext {
		byTid[e.GlobalTid] = e
	}
	depth := 1
	nm := syntheticName(WholeProcess)
	nm.lib = libraries
	for _, t := range threads {
		lo, hi := t.ranges[0].start, t.ranges[0].end
		for _, r := range t.ranges {
			lo, hi = min(lo, r.start), max(hi, r.end)
		}
		if e, ok := byTid[t.gtid]; ok && e.Calls > 0 {
			lo, hi = min(lo, e.Start), max(hi, e.End)
		}
		t.ranges = append([]rng{{start: lo, end: hi, gtid: t.gtid, nm: nm, parent: -1}}, t.ranges...)
		linkParents(t)
		for _, r := range t.ranges {
			depth = max(depth, int(r.depth))
		}
	}
	return depth
}

func (tr *trace) processName(pid int64) string {
	return tr.threadNm[pid<<24|pid] // the main thread carries the process name
}

// isStep reports whether r is an instance of the step: its name, or its
// numbered family ("ProfilerStep#N" matches "ProfilerStep#12").
func (r *rng) isStep(step string) bool { return r.nm.name == step || r.nm.family == step }
