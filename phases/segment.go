package phases

import (
	"cmp"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nsysphase/nsysphase/internal/base/marks"
	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/nsys"
)

// Options control segmentation of one export.
type Options struct {
	ArmPattern *regexp.Regexp // nil: DefaultArmPattern
	Step       string         // step range name; "" = the name that repeats most
	Depth      int            // phase depth below the step (default 1: direct children)
	SkipSteps  int            // the first N steps of each block are flagged warm-up
	FileArm    string         // arm label given to the whole file ("" none)
	Rules      *Rules         // optional rules file
	Calls      bool           // also record each instance's top-level CUDA API calls (Result.Calls)
	// Compact leaves Result.Instances nil: the instances are in
	// Result.Store only (about a sixth of the memory).
	Compact bool

	engine engineConfig // the activity engine's tuning (tests); zero: the defaults
}

// Segment analyses one export: it builds range trees, finds arms, steps and
// phases, and attributes CUDA activity to every step and phase instance.
//
// A chosen step that holds almost none of its processes' GPU work (less
// than unusableGPUShare: a library's bookkeeping range, a compile) is no
// usable step: the export is analysed again as the whole process.
func Segment(f *nsys.File, opt Options) (*Result, error) {
	res, err := segmentOnce(f, opt, "")
	if err != nil || res.StepChoice.Mode == StepGiven || res.StepChoice.Mode == StepWholeProcess || res.StepChoice.Mode == StepSingleShot ||
		strings.HasSuffix(res.StepChoice.Rule, inArmBlocks) {
		return res, err
	}
	g := res.StepChoice.GPUCoverage
	if g == nil || *g >= unusableGPUShare {
		return res, nil
	}
	why := fmt.Sprintf("the best candidate %q holds %.1f%% of its processes' GPU work (%s)", res.StepChoice.Step, 100**g, res.StepChoice.Rule)
	return segmentOnce(f, opt, why)
}

// unusableGPUShare: a chosen step whose instances hold less than this share
// of their processes' GPU busy time is not the program's step.
const unusableGPUShare = 0.01

// segmentOnce is Segment; whole, when not "", says why no range is a
// usable step: the whole process is.
func segmentOnce(f *nsys.File, opt Options, whole string) (*Result, error) {
	if opt.ArmPattern == nil {
		opt.ArmPattern = defaultArmPattern()
	}
	if opt.Depth <= 0 {
		opt.Depth = 1
	}
	if opt.Rules != nil {
		opt = opt.Rules.apply(opt)
	}
	// The NVTX side first: it is the critical path until the engine
	// measures.
	head := startHead(f)
	// Physical GPUs (a tiny table): the sweep's decoders map each op as
	// they read it. They start now and read ahead (a few parts per table)
	// while the NVTX side is loaded and laid out.
	gpuOf, err := cudaDeviceMap(f)
	if err != nil {
		_, _ = head.wait(nil) // nothing reads the file once Segment returns
		return nil, err
	}
	sw := startSweep(f, gpuOf, opt.engine)
	defer sw.close()
	tr, err := head.wait(gpuOf)
	marks.Mark("nvtx loaded")
	if err != nil {
		return nil, err
	}
	if sw != nil {
		sw.tr = tr
	}
	res := &Result{}
	threads := tr.buildRanges(opt, &res.Excluded)
	marks.Mark("ranges built")
	blocks := findArmBlocks(threads, opt.ArmPattern)
	marks.Mark("arm blocks found")
	threads, stepName, err := chooseStep(f, threads, blocks, &opt, whole, res)
	if err != nil {
		return nil, err
	}
	if res.StepChoice.Rule == "" {
		res.StepChoice.Rule = RuleText(res.StepChoice.Mode)
	}
	res.StepName = stepName
	in := Input{File: f.Path, FileArm: opt.FileArm, NsysVersion: f.Export.ProductVersion, SchemaVersion: f.Export.SchemaVersion, GraphTraceMode: tr.graphMode, Step: stepName, StepChoice: res.StepChoice}
	for _, t := range nsys.ActivityTables {
		if !f.HasTable(t) {
			in.Absent = append(in.Absent, t)
		}
	}
	// The activity tables are read during attribution; their warnings come
	// first, as they concern the input itself.
	damageAt := len(res.Warnings)
	if res.Excluded.UnclosedRanges > 0 {
		res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnUnclosedRange, f.Path, "%d NVTX %s never closed (NULL end) and %s left out",
			res.Excluded.UnclosedRanges, plural.Of(res.Excluded.UnclosedRanges, "range was", "ranges were"), plural.Of(res.Excluded.UnclosedRanges, "was", "were")))
	}
	tr.absentNull = absentMask(in.Absent)
	marks.Mark("step chosen")
	if err := tr.segment(sw, threads, blocks, stepName, opt, res); err != nil {
		return nil, err
	}
	marks.Mark("segmented")
	res.Warnings = slices.Insert(res.Warnings, damageAt, tr.warnings...)
	res.Warnings = append(res.Warnings, idleStepThreads(res.Store, stepName, f.Path)...)
	in.CrossProcessOverlapNs, in.GPUUse = tr.overlapNs, tr.use
	if g := gpuCoverage(res.Store, tr.use); g != nil {
		res.StepChoice.GPUCoverage, in.StepChoice.GPUCoverage = g, g
	}
	steps, phaseNames := res.Store.StepsAndPhases()
	in.Phases = append(in.Phases, phaseNames...)
	in.Steps = steps
	if steps == 0 {
		return nil, &nsys.InputError{Path: f.Path, Problem: fmt.Sprintf("no instance of step %q found inside arm blocks or at top level", stepName), Hint: "check --step and --arm-pattern (nsysphase ranges FILE lists the range names)"}
	}
	res.Inputs = []Input{in}
	res.PhaseOrder = append([]string{stepName}, in.Phases...)
	res.Arms = armOrder(res.Store)
	if err := measureSamples(f, res, tr.use); err != nil {
		return nil, err
	}
	if !opt.Compact {
		res.Instances = res.Store.All()
	}
	marks.Mark("segment done")
	return res, nil
}

// warmupName matches a warm-up range's name anywhere, in any case
// ("warmup", "Warm-up Step 3", "warm_up_iters"): never the step; steps
// inside one are left out; it may be a phase.
var warmupName = regexp.MustCompile(`(?i)warm[-_ ]?up`)

func isWarmupName(name string) bool { return warmupName.MatchString(name) }

// segment finds the step instances and their phases and attributes activity.
func (tr *trace) segment(sw *sweep, threads []*threadRanges, blocks []armBlock, stepName string, opt Options, res *Result) error {
	st, gtids, spans := tr.layout(threads, blocks, stepName, opt, res)
	rec, err := tr.measureAll(sw, st, gtids, spans, opt.Calls)
	if err != nil {
		return err
	}
	st.addNull(tr.absentNull)
	res.Store = st
	if rec != nil {
		rec.finish(tr, res)
	}
	return nil
}

// finishSpan completes the step of span sp from its measured phases: its
// phase gap, its kernel time outside them and its (unannotated) row. xs
// holds the instances from index base on.
func finishSpan(xs []Instance, sp stepSpan, base int) {
	st := &xs[sp.step-base]
	var phaseIv []interval
	var phaseKernel int64
	var rest *Instance
	for i := sp.first; i < sp.end; i++ {
		ph := &xs[i-base]
		switch {
		case ph.Depth != 1 || ph.OtherThread:
		case ph.Phase == Unannotated && ph.Null == unannotatedNull():
			rest = ph
		default:
			phaseIv = append(phaseIv, interval{ph.Start, ph.End})
			phaseKernel += ph.M[KernelSum]
		}
	}
	// A row without ranges of its own has no wall: its nulled metrics
	// hold no measured value, so no aggregate that reads them counts the
	// step's span as its wall.
	for i := sp.first; i < sp.end; i++ {
		if ph := &xs[i-base]; ph.OtherThread && ph.Null != 0 {
			for m := range NumMetrics() {
				if ph.Null&(1<<uint(m)) != 0 {
					ph.M[m] = 0
				}
			}
		}
	}
	st.HasStepOnly = true
	st.PhaseGapNs = st.M[Wall] - totalLength(mergeIntervals(phaseIv))
	st.UnattrKerNs = st.M[KernelSum] - phaseKernel
	if rest != nil {
		fillUnannotated(rest, st, xs[sp.first-base:sp.end-base], st.PhaseGapNs)
	}
}

// layout finds the step instances and their phases and writes their keys
// to a store, measurements empty; it returns the store, each instance's
// thread and each step's span of instances.
func (tr *trace) layout(threads []*threadRanges, blocks []armBlock, stepName string, opt Options, res *Result) (*Store, []int64, []stepSpan) {
	blockIdx := armBlockIndices(blocks)
	steps := tr.findSteps(threads, blocks, stepName, res)

	// Number the steps (serial: numbering follows time order) and size each
	// one's phases, so every step's instances have a known place.
	byPid := map[int64][]*threadRanges{}
	for _, t := range threads {
		byPid[nsys.Pid(t.gtid)] = append(byPid[nsys.Pid(t.gtid)], t)
	}
	autograd := tr.autogradThreads(threads, byPid)
	l := stepLayout{blocks: blocks, blockIdx: blockIdx, byPid: byPid, autograd: autograd, stepName: stepName, opt: opt}
	plans, spans, at := tr.planSteps(&l, steps, res)
	st, gtids := tr.writeKeys(plans, spans, at, stepName, opt)
	return st, gtids, spans
}

// stepRef is a step range of a thread.
type stepRef struct {
	t     *threadRanges
	i     int
	block int // index into blocks, -1 none
}

// findSteps lists the outermost step ranges outside warm-up ranges (and,
// in a process with arm blocks, inside one) in start order.
func (tr *trace) findSteps(threads []*threadRanges, blocks []armBlock, stepName string, res *Result) []stepRef {
	hasArms := map[int64]bool{}
	for _, b := range blocks {
		hasArms[b.pid] = true
	}
	var steps []stepRef
	for _, t := range threads {
		// One pass down the tree (a parent precedes its children) says which
		// ranges lie under a step or a warm-up range: linear even on a
		// thread nested a million levels deep.
		underStep, underWarmup := ancestorFlags(t, stepName)
		for i := range t.ranges {
			r := &t.ranges[i]
			if !r.isStep(stepName) {
				continue
			}
			// Steps nested in a step of the same name (recursion) count once.
			if underStep[i] {
				continue
			}
			pid := nsys.Pid(r.gtid)
			if underWarmup[i] {
				res.Excluded.WarmupSteps++
				continue
			}
			b := -1
			if hasArms[pid] {
				b = inArmBlock(blocks, pid, r.start, r.end)
				if b < 0 {
					res.Excluded.OutsideArmSteps++
					continue
				}
			}
			steps = append(steps, stepRef{t: t, i: i, block: b})
		}
	}
	slices.SortFunc(steps, func(a, b stepRef) int {
		return cmp.Or(cmp.Compare(a.t.ranges[a.i].start, b.t.ranges[b.i].start), cmp.Compare(a.t.gtid, b.t.gtid))
	})
	if res.Excluded.OutsideArmSteps > 0 {
		res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnOutsideArm, tr.file.Path, "%d %q %s outside every arm block of %s process and %s left out",
			res.Excluded.OutsideArmSteps, stepName, plural.Of(res.Excluded.OutsideArmSteps, "range lies", "ranges lie"),
			plural.Of(res.Excluded.OutsideArmSteps, "its", "their"), plural.Of(res.Excluded.OutsideArmSteps, "was", "were")))
	}
	return steps
}

// autogradThreads is, per process, PyTorch's autograd threads without
// ranges of their own: they still get a row, the backward pass runs there.
// It sets tr.autogradMany.
func (tr *trace) autogradThreads(threads []*threadRanges, byPid map[int64][]*threadRanges) map[int64][]int64 {
	withRanges := map[int64]bool{}
	for _, t := range threads {
		withRanges[t.gtid] = true
	}
	autograd := map[int64][]int64{}
	for g, name := range tr.threadNm {
		if strings.HasPrefix(name, "pt_autograd") && !withRanges[g] {
			autograd[nsys.Pid(g)] = append(autograd[nsys.Pid(g)], g)
		}
	}
	for _, gs := range autograd {
		slices.Sort(gs)
	}
	// A process with several autograd threads (PyTorch starts one per
	// device; one is often idle) names each one's row after its thread:
	// one row per thread and step, never two rows of one name in a step,
	// so no aggregate counts a step twice.
	tr.autogradMany = map[int64]bool{}
	for pid, gs := range autograd {
		n := len(gs)
		for _, t := range byPid[pid] {
			if strings.HasPrefix(tr.threadNm[t.gtid], "pt_autograd") {
				n++
			}
		}
		tr.autogradMany[pid] = n > 1
	}
	return autograd
}

// stepLayout is what planSteps reads.
type stepLayout struct {
	blocks   []armBlock
	blockIdx []int
	byPid    map[int64][]*threadRanges
	autograd map[int64][]int64
	stepName string
	opt      Options
}

// procStep is a process's steps in a unit.
type procStep struct {
	unit UnitID
	pid  int64
}

// planSteps numbers the steps and sizes each one's instances: a plan and
// a span per step, and the number of instances.
func (tr *trace) planSteps(l *stepLayout, steps []stepRef, res *Result) ([]stepPlan, []stepSpan, int) {
	blocks, blockIdx, opt, stepName := l.blocks, l.blockIdx, l.opt, l.stepName
	stepInBlock := map[UnitID]int{}
	stepOfProc := map[procStep]int{}
	// A process with no more steps in its unit than --skip-steps keeps
	// them (one step per rank, say): skipping would leave nothing.
	stepsOfProc := map[procStep]int{}
	unitOf := func(s stepRef) UnitID {
		if s.block >= 0 {
			return UnitID{File: tr.file.Path, Arm: joinArm(opt.FileArm, blocks[s.block].arm), Block: blockIdx[s.block]}
		}
		return UnitID{File: tr.file.Path, Arm: joinArm(opt.FileArm, ""), Pid: nsys.Pid(s.t.ranges[s.i].gtid)}
	}
	for _, s := range steps {
		stepsOfProc[procStep{unitOf(s), nsys.Pid(s.t.ranges[s.i].gtid)}]++
	}
	kept := 0
	firstStart := map[UnitID]int64{}
	kids := map[*threadRanges]*childIndex{}
	plans := make([]stepPlan, len(steps))
	at := 0
	spans := make([]stepSpan, len(steps))
	for k, s := range steps {
		r := &s.t.ranges[s.i]
		nvtxArm, block, blockStart := "", 0, int64(0)
		if s.block >= 0 {
			nvtxArm, block, blockStart = blocks[s.block].arm, blockIdx[s.block], blocks[s.block].start
		}
		arm := joinArm(opt.FileArm, nvtxArm)
		unit := UnitID{File: tr.file.Path, Arm: arm, Block: block}
		if s.block < 0 {
			unit = UnitID{File: tr.file.Path, Arm: arm, Pid: nsys.Pid(r.gtid)}
			if _, ok := firstStart[unit]; !ok {
				firstStart[unit] = r.start
			}
			blockStart = firstStart[unit]
		}
		idx := stepInBlock[unit]
		stepInBlock[unit]++
		// Warm-up is each process's first steps: two ranks in one arm block
		// share the block's step numbering, not its warm-up.
		pk := procStep{unit, nsys.Pid(r.gtid)}
		warm := stepOfProc[pk] < opt.SkipSteps && stepsOfProc[pk] > opt.SkipSteps
		if stepOfProc[pk] == 0 && opt.SkipSteps > 0 && stepsOfProc[pk] <= opt.SkipSteps {
			kept++
		}
		stepOfProc[pk]++
		if warm {
			res.Excluded.SkippedSteps++
		}
		ci := kids[s.t]
		if ci == nil {
			ci = newChildIndex(s.t)
			kids[s.t] = ci
		}
		p := stepPlan{t: s.t, kids: ci, i: int32(s.i), at: at, arm: arm, block: block, blockStart: blockStart, unit: unit, step: idx, warm: warm}
		n := tr.stepRows(l, &p, r)
		spans[k] = stepSpan{step: at, first: at + 1, end: at + 1 + n}
		at += 1 + n
		plans[k] = p
	}
	if kept > 0 {
		res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnFewSteps, tr.file.Path, "%d %s no more %q steps than --skip-steps %d: %s steps are kept, not skipped as warm-up",
			kept, plural.Of(kept, "process (or block) holds", "processes (or blocks) hold"), stepName, opt.SkipSteps, plural.Of(kept, "its", "their")))
	}
	return plans, spans, at
}

// stepRows counts the rows under step p (range r): its phases, the
// unannotated row, and the other threads' rows, which it sets.
func (tr *trace) stepRows(l *stepLayout, p *stepPlan, r *rng) int {
	opt := l.opt
	n := p.count(p.i, 1, opt.Depth)
	if opt.Rules != nil && len(opt.Rules.Phases) > 0 {
		n = 0 // the rules select phases by name
		p.phases(opt, func(int32, int, string) { n++ })
	}
	// Every step with children gets the row, even when none of them is
	// a phase (PyTorch's ProfilerStep#N holds only operator ranges):
	// its depth-1 rows then still add up to it.
	if n > 0 || len(p.kids.of(p.i)) > 0 {
		p.unannotated = true
		n++
	}
	if l.stepName != WholeProcess {
		p.others = tr.otherThreadRows(l.byPid[nsys.Pid(r.gtid)], p.t, r.start, r.end)
		for _, g := range l.autograd[nsys.Pid(r.gtid)] {
			p.others = append(p.others, otherRow{gtid: g, start: r.start, end: r.end, name: tr.otherThreadName(g, nil, true), noRanges: true})
		}
		n += len(p.others)
	}
	return n
}

// writeKeys writes the instances' keys, concurrently: each plan's
// instances are filled in a small buffer and written to the store
// compactly. It returns the store and each instance's thread.
func (tr *trace) writeKeys(plans []stepPlan, spans []stepSpan, at int, stepName string, opt Options) (*Store, []int64) {
	st := NewStore()
	st.keys = make([]instKey, at)
	gtids := make([]int64, at)
	workers := min(runtime.GOMAXPROCS(0), max(1, len(plans)/256))
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(plans)/workers, (w+1)*len(plans)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			kw := st.keyWriter()
			var buf []Instance
			for k := lo; k < hi; k++ {
				p := &plans[k]
				n := spans[k].end - spans[k].step
				buf = slices.Grow(buf[:0], n)[:n]
				clear(buf)
				p.write(tr, stepName, opt, buf, gtids[p.at:p.at+n])
				for i := range buf {
					kw.write(p.at+i, &buf[i])
				}
			}
		}()
	}
	wg.Wait()
	return st, gtids
}

// stepPlan is one step instance laid out: where its instances go and what
// they share.
type stepPlan struct {
	t          *threadRanges
	kids       *childIndex
	i          int32 // the step's range
	at         int   // index of the step's instance; its phases follow
	arm        string
	block      int
	blockStart int64
	unit       UnitID
	step       int
	warm       bool // among its process's first --skip-steps steps of the block
	// unannotated: the step has phases, and a row for its time outside
	// them follows them; others: rows of other threads' work during it.
	unannotated bool
	others      []otherRow
}

// phases visits the step's phases in order: its descendants up to
// opt.Depth, named by their path below the step, selected by the rules.
func (p *stepPlan) phases(opt Options, visit func(c int32, depth int, name string)) {
	var walk func(i int32, depth int, prefix string)
	walk = func(i int32, depth int, prefix string) {
		for _, c := range p.kids.of(i) {
			if depth == 1 && p.libraryKid(c) {
				continue
			}
			name := p.t.ranges[c].nm.phase
			if prefix != "" {
				name = prefix + "/" + name
			}
			if opt.Rules != nil && !opt.Rules.isPhase(name) {
				continue
			}
			visit(c, depth, name)
			if depth < opt.Depth {
				walk(c, depth+1, name)
			}
		}
	}
	walk(p.i, 1, "")
}

// libraryKid reports whether range c is a library's or framework's range
// under a step of the program's own: those are not its phases (their time
// is in the step's unannotated remainder), so the phases are what the
// program marked. Deeper levels (--depth 2) keep them: asked for, they show
// what a phase calls.
func (p *stepPlan) libraryKid(c int32) bool {
	return p.t.ranges[c].nm.isOp() && !p.t.ranges[p.i].nm.lib
}

// count is the number of descendants of range i up to depth maxDepth, i at
// depth-1: the step's phases when no rule selects them by name.
func (p *stepPlan) count(i int32, depth, maxDepth int) int {
	n := 0
	for _, c := range p.kids.of(i) {
		if depth == 1 && p.libraryKid(c) {
			continue
		}
		n++
		if depth < maxDepth {
			n += p.count(c, depth+1, maxDepth)
		}
	}
	return n
}

// write writes the step's instances to xs and their threads to gtids
// (both start at the step).
func (p *stepPlan) write(tr *trace, stepName string, opt Options, xs []Instance, gtids []int64) {
	r := &p.t.ranges[p.i]
	pid, tid, thread := nsys.Pid(r.gtid), nsys.Tid(r.gtid), tr.threadNm[r.gtid]
	warmup := p.warm
	// x is zero: only what is not zero is written.
	fill := func(x *Instance, phase string, depth int, start, end int64) {
		x.File, x.Pid, x.Tid, x.Thread = tr.file.Path, pid, tid, thread
		x.Arm, x.Block, x.BlockStart, x.Unit, x.Step, x.Warmup = p.arm, p.block, p.blockStart, p.unit, p.step, warmup
		x.Phase, x.Depth, x.Start, x.End = phase, depth, start, end
	}
	st := &xs[0]
	fill(st, stepName, 0, r.start, r.end)
	st.IsStep = true
	if r.nm.name != stepName {
		st.StepLabel = r.nm.name // the instance's own name in a numbered family
	}
	gtids[0] = r.gtid
	j := 1
	p.phases(opt, func(c int32, depth int, name string) {
		cr := &p.t.ranges[c]
		fill(&xs[j], name, depth, cr.start, cr.end)
		gtids[j] = cr.gtid
		j++
	})
	if p.unannotated {
		// Filled from the step and its phases once they are measured; no
		// thread (gtid 0): the engine measures nothing for it.
		fill(&xs[j], Unannotated, 1, r.start, r.end)
		xs[j].Null = unannotatedNull()
		j++
	}
	for _, o := range p.others {
		x := &xs[j]
		fill(x, o.name, 1, o.start, o.end)
		x.Tid, x.Thread, x.OtherThread = nsys.Tid(o.gtid), tr.threadNm[o.gtid], true
		if o.noRanges {
			// The thread marks no range: how long it worked for the step is
			// unknown; its calls, GPU work and syncs during the step are not.
			// Nor are the parts of that unknown wall: other processes' GPU
			// time and idle GPU time inside it.
			x.Null |= 1<<uint(Wall) | 1<<uint(CPUOther) | 1<<uint(OtherProcessGPU) | 1<<uint(GPUIdle)
		}
		gtids[j] = o.gtid
		j++
	}
}

// childIndex lists each range's children (the ranges whose parent it is),
// in order, in one array.
type childIndex struct {
	off  []int32 // children of i: kids[off[i]:off[i+1]]
	kids []int32
}

func newChildIndex(t *threadRanges) *childIndex {
	ci := &childIndex{off: make([]int32, len(t.ranges)+1)}
	for i := range t.ranges {
		if p := t.ranges[i].parent; p >= 0 {
			ci.off[p+1]++
		}
	}
	for i := 1; i < len(ci.off); i++ {
		ci.off[i] += ci.off[i-1]
	}
	ci.kids = make([]int32, ci.off[len(ci.off)-1])
	fill := slices.Clone(ci.off[:len(t.ranges)])
	for i := range t.ranges {
		if p := t.ranges[i].parent; p >= 0 {
			ci.kids[fill[p]] = int32(i)
			fill[p]++
		}
	}
	return ci
}

func (ci *childIndex) of(i int32) []int32 { return ci.kids[ci.off[i]:ci.off[i+1]] }

// stepSpan is one step instance and its phases: instance indices, the step
// at step and its phases at [first, end).
type stepSpan struct{ step, first, end int }

// ancestorFlags reports, for every range of t, whether an ancestor is named
// step and whether an ancestor is a warm-up range.
func ancestorFlags(t *threadRanges, step string) (underStep, underWarmup []bool) {
	underStep = make([]bool, len(t.ranges))
	underWarmup = make([]bool, len(t.ranges))
	for i := range t.ranges {
		if p := t.ranges[i].parent; p >= 0 {
			pr := &t.ranges[p]
			underStep[i] = underStep[p] || pr.isStep(step)
			underWarmup[i] = underWarmup[p] || pr.nm.warmup
		}
	}
	return underStep, underWarmup
}

// measureParallel measures instances in blocks, one attributor per
// worker; each instance is written in place, so the result does not depend on
// scheduling.
func measureParallel(tr *trace, xs []Instance, gtids []int64) {
	// Workers take blocks of measureBlock instances as they finish the last
	// one: a window holds a few thousand instances of very unequal cost (a
	// step spans all its phases' calls), so fixed halves left most cores
	// idle while one worker measured the steps.
	workers := min(runtime.GOMAXPROCS(0), (len(xs)+measureBlock-1)/measureBlock)
	if workers <= 1 {
		at := newAttributor(tr)
		for i := range xs {
			at.measure(&xs[i], gtids[i])
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			at := newAttributor(tr)
			for {
				lo := int(next.Add(measureBlock)) - measureBlock
				if lo >= len(xs) {
					return
				}
				for i := lo; i < min(len(xs), lo+measureBlock); i++ {
					at.measure(&xs[i], gtids[i])
				}
			}
		})
	}
	wg.Wait()
}

// measureBlock is how many instances a measuring worker takes at a time.
const measureBlock = 64
