package phases

import (
	"cmp"
	"fmt"
	"github.com/nsysphase/nsysphase/internal/base/marks"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nsysphase/nsysphase/nsys"
)

// DefaultArmPattern recognises arm block ranges: "arm=<name> block=<i>".
const DefaultArmPattern = `^arm=(\S+)(?:\s+block=(\d+))?`

var defaultArmRe = regexp.MustCompile(DefaultArmPattern)

func defaultArmPattern() *regexp.Regexp { return defaultArmRe }

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

// armMatch is an arm pattern's match of a range name.
type armMatch struct {
	ok    bool
	arm   string
	block int // from block=<i>; -1 when absent
}

// armOf matches the arm pattern against the name, then the text (an arm
// range inside a named domain).
func (n *rangeName) armOf(pat *regexp.Regexp) *armMatch {
	if n.armPat == pat {
		return &n.arm
	}
	n.armPat, n.arm = pat, armMatch{}
	m := pat.FindStringSubmatch(n.name)
	if m == nil {
		m = pat.FindStringSubmatch(n.text)
	}
	if m == nil {
		return &n.arm
	}
	n.arm = armMatch{ok: true, arm: m[0], block: -1}
	if len(m) > 1 && m[1] != "" {
		n.arm.arm = m[1]
	}
	if len(m) > 2 && m[2] != "" {
		if b, err := strconv.Atoi(m[2]); err == nil {
			n.arm.block = b
		}
	}
	return &n.arm
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

// armBlock is one arm range.
type armBlock struct {
	arm        string
	block      int // from block=<i>; -1 when absent
	start, end int64
	pid        int64
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

// inArmBlocks ends the rule of a step chosen inside arm blocks.
const inArmBlocks = " in arm blocks"

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
		res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnUnclosedRange, f.Path, "%d NVTX ranges were never closed (NULL end) and were left out", res.Excluded.UnclosedRanges))
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

// chooseStep picks the step: given, chosen among the ranges, or each
// process's (or thread's) activity as one instance, whose threads it
// returns in place of threads.
func chooseStep(f *nsys.File, threads []*threadRanges, blocks []armBlock, opt *Options, whole string, res *Result) ([]*threadRanges, string, error) {
	stepName := opt.Step
	switch {
	case len(threads) == 0:
		// No NVTX ranges: each process's CUDA activity is one instance.
		if stepName != "" {
			return nil, "", &nsys.InputError{Path: f.Path, Problem: fmt.Sprintf("no closed NVTX ranges, so no step %q", stepName), Hint: "drop --step to analyse each process's CUDA activity as one phase, or mark each step with an NVTX range"}
		}
		threads, err := noNVTXSteps(f, res)
		if err != nil {
			return nil, "", err
		}
		opt.SkipSteps = 0 // one instance per process: there is no warm-up step to skip
		return threads, WholeProcess, nil
	case stepName != "":
		res.StepChoice = StepChoice{Mode: StepGiven, Step: stepName, Why: fmt.Sprintf("step %q: given by --step or the rules file", stepName)}
		return threads, stepName, nil
	}
	return autoStep(f, threads, blocks, opt, whole, res)
}

// noNVTXSteps makes each process's CUDA activity (else, with sampling
// alone, each sampled process) one instance of the step WholeProcess.
func noNVTXSteps(f *nsys.File, res *Result) ([]*threadRanges, error) {
	stepName := WholeProcess
	ext, err := f.APIExtents()
	if err != nil {
		return nil, err
	}
	threads := wholeProcessRanges(ext)
	samplesOnly := false
	if len(threads) == 0 {
		// Sampling alone (CPU samples, GPU metrics): each sampled
		// process is one phase over its samples.
		if threads, err = sampledProcessRanges(f); err != nil {
			return nil, err
		}
		samplesOnly = len(threads) > 0
	}
	if len(threads) == 0 {
		problem := "no events to analyse: no CUDA API calls and no closed NVTX ranges"
		if !f.HasTable(nsys.TableNVTX) && !f.HasTable(nsys.TableRuntime) {
			problem = "no events to analyse: no NVTX_EVENTS and no CUDA API table (CUDA and NVTX were not traced)"
		}
		return nil, &nsys.InputError{Path: f.Path, Problem: problem, Hint: "record with `nsys profile -t cuda,nvtx` and mark phases with NVTX ranges"}
	}
	res.StepChoice = StepChoice{Mode: StepWholeProcess, Step: stepName, Count: len(threads), Rule: "no NVTX ranges",
		Why: fmt.Sprintf("no NVTX ranges: each process's CUDA activity (first to last CUDA API call, on its busiest CUDA thread) is one phase %q, measured once per process (%d); to get phases, mark them with NVTX ranges (e.g. nvtx.annotate / nvtxRangePush) and record with `nsys profile -t cuda,nvtx`", stepName, len(threads))}
	if samplesOnly {
		res.StepChoice.Rule = "no CUDA or NVTX trace"
		res.StepChoice.Why = fmt.Sprintf("no CUDA API calls and no NVTX ranges, only sampling: each sampled process (first to last CPU sample, on its most sampled thread) is one phase %q, measured once per process (%d), with its GPU metrics and CPU samples; record with `nsys profile -t cuda,nvtx` for a breakdown", stepName, len(threads))
		res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnSamplesOnly, f.Path, "no CUDA or NVTX trace, only sampling; each sampled process is analysed as one phase %q (GPU metrics and CPU samples only)", stepName))
		return threads, nil
	}
	res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnNoNVTX, f.Path, "no NVTX ranges; each process's CUDA activity is analysed as one phase %q (mark steps and phases with NVTX ranges for a per-phase breakdown)", stepName))
	return threads, nil
}

// autoStep chooses the step among the ranges: a repeated range, else one
// range enclosing the program, else each thread's or process's activity.
func autoStep(f *nsys.File, threads []*threadRanges, blocks []armBlock, opt *Options, whole string, res *Result) ([]*threadRanges, string, error) {
	var ch choice
	if whole == "" {
		ch = newChooser(threads, blocks, opt.ArmPattern).choose()
	}
	if ch.name != "" {
		if ch.cycle != nil {
			wrapCycles(threads, ch.cycle, opt.ArmPattern)
		}
		res.StepChoice = ch.stepChoice()
		if ch.mode == StepSingleRange {
			opt.SkipSteps = 0 // one instance: there is no warm-up step to skip
			res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnSingleShot, f.Path, "single-shot program (the step encloses the program and is measured once): each range is reported as one measured value (n = 1), without confidence intervals"))
		}
		return threads, ch.name, nil
	}
	if len(blocks) > 0 {
		return nil, "", &nsys.InputError{Path: f.Path, Problem: "no repeated NVTX range inside the arm blocks to use as the step", Hint: "name the step with --step NAME"}
	}
	ext, err := f.APIExtents()
	if err != nil {
		return nil, "", err
	}
	if whole == "" {
		if name, n, cov := singleRange(threads, ext); name != "" {
			// One user range encloses the program's work: it is the step,
			// measured once (n = 1 per thread), its children the phases.
			opt.SkipSteps = 0 // one instance: there is no warm-up step to skip
			ch.name, ch.n, ch.mode = name, n, StepSingleRange
			res.StepChoice = ch.stepChoice()
			res.StepChoice.Coverage = round3(cov)
			res.StepChoice.Why = fmt.Sprintf("step %q: no range repeats; this one range encloses %.0f%% of its process's traced time and holds the program's ranges, so it is the step, measured once (n = 1, values without CIs); override with --step NAME", name, 100*cov)
			res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnSingleShot, f.Path, "single-shot program (no NVTX range repeats): each range is reported as one measured value (n = 1), without confidence intervals"))
			return threads, name, nil
		}
	}
	opt.SkipSteps = 0 // one instance per thread or process: there is no warm-up step to skip
	threads, err = wholeProcessStep(f, threads, ext, ch.cands, whole, res)
	if err != nil {
		return nil, "", err
	}
	return threads, WholeProcess, nil
}

// wholeProcessStep is the fallback when no range is a usable step: one
// "whole process" step per thread with the program's ranges (its top-level
// ranges the phases); without any, each process's CUDA activity; without
// CUDA either (a CPU-only program), one step per thread spanning its
// ranges, whoever wrote them, its top-level ranges the phases. whole, when
// not "", says why no candidate was usable. It returns the threads to lay
// out and sets res's step choice and warnings.
func wholeProcessStep(f *nsys.File, threads []*threadRanges, ext []nsys.ThreadExtent, cands []Candidate, whole string, res *Result) ([]*threadRanges, error) {
	stepName := WholeProcess
	because := "no NVTX range repeats on a thread as a step: single-shot program"
	if whole != "" {
		because = "no usable step: " + whole
	}
	user := userThreads(threads)
	if len(user) > 0 {
		wrapSingleShot(user, ext, false)
		res.StepChoice = StepChoice{Mode: StepSingleShot, Step: stepName, Count: len(user), Rule: RuleText(StepSingleShot), Candidates: cands,
			Why: fmt.Sprintf("%s; one %q step per thread (%d) with its top-level ranges as phases, each measured once (n = 1, values without CIs); name a range with --step NAME", because, stepName, len(user))}
		res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnSingleShot, f.Path, "single-shot program (no usable repeated NVTX range): each range is reported as one measured value (n = 1), without confidence intervals"))
		return user, nil
	}
	if cuda := wholeProcessRanges(ext); len(cuda) > 0 {
		res.StepChoice = StepChoice{Mode: StepWholeProcess, Step: stepName, Count: len(cuda), Rule: RuleText(StepWholeProcess), Candidates: cands,
			Why: fmt.Sprintf("no usable step annotation (only library or framework NVTX ranges): each process's CUDA activity (first to last CUDA API call, on its busiest CUDA thread) is one %q step (%d); name a range with --step NAME to use it", stepName, len(cuda))}
		return cuda, nil
	}
	if len(threads) == 0 {
		return nil, &nsys.InputError{Path: f.Path, Problem: "no events to analyse: no closed NVTX ranges and no CUDA API calls", Hint: "record with `nsys profile -t cuda,nvtx` and mark phases with NVTX ranges"}
	}
	// A CPU-only program annotated by its libraries alone (STDPAR, OpenMP):
	// its wall, and the libraries' top-level ranges as phases.
	wrapSingleShot(threads, ext, true)
	res.StepChoice = StepChoice{Mode: StepSingleShot, Step: stepName, Count: len(threads), Rule: RuleText(StepSingleShot), Candidates: cands,
		Why: fmt.Sprintf("no usable step annotation and no CUDA API calls (a CPU-only program with library ranges only): one %q step per thread (%d), first to last range, with its top-level ranges as phases, each measured once (n = 1, values without CIs); name a range with --step NAME", stepName, len(threads))}
	res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnSingleShot, f.Path, "single-shot program (no usable repeated NVTX range): each range is reported as one measured value (n = 1), without confidence intervals"))
	return threads, nil
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
		tr.warnings = append(tr.warnings, nsys.FileWarning(nsys.WarnEndBeforeStart, tr.file.Path, "%d NVTX ranges end before they start and were left out", nv.backwards))
	}
	if nv.noThread > 0 {
		tr.warnings = append(tr.warnings, nsys.FileWarning(nsys.WarnNoThreadRange, tr.file.Path, "%d NVTX ranges have no thread (a NULL globalTid) and were left out: no phase holds them", nv.noThread))
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

func findArmBlocks(threads []*threadRanges, pat *regexp.Regexp) []armBlock {
	var out []armBlock
	for _, t := range threads {
		for i := range t.ranges {
			r := &t.ranges[i]
			if m := r.nm.armOf(pat); m.ok {
				out = append(out, armBlock{arm: m.arm, block: m.block, start: r.start, end: r.end, pid: nsys.Pid(r.gtid)})
			}
		}
	}
	slices.SortFunc(out, func(a, b armBlock) int { return cmp.Compare(a.start, b.start) })
	return out
}

// warmupName matches a warm-up range's name anywhere, in any case
// ("warmup", "Warm-up Step 3", "warm_up_iters"): never the step; steps
// inside one are left out; it may be a phase.
var warmupName = regexp.MustCompile(`(?i)warm[-_ ]?up`)

func isWarmupName(name string) bool { return warmupName.MatchString(name) }

// inArmBlock returns the index of the arm block of process pid that contains
// [start, end], or -1.
func inArmBlock(blocks []armBlock, pid, start, end int64) int {
	for i := range blocks {
		b := &blocks[i]
		if b.pid == pid && start >= b.start && end <= b.end {
			return i
		}
	}
	return -1
}

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

// armBlockIndices is each arm block's index: block=<i> when given, else
// its order within the arm.
func armBlockIndices(blocks []armBlock) []int {
	blockIdx := make([]int, len(blocks))
	seenPerArm := map[string]int{}
	for i, b := range blocks {
		if b.block >= 0 {
			blockIdx[i] = b.block
		} else {
			blockIdx[i] = seenPerArm[b.arm]
		}
		seenPerArm[b.arm]++
	}
	return blockIdx
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
		res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnOutsideArm, tr.file.Path, "%d %q ranges lie outside every arm block of their process and were left out", res.Excluded.OutsideArmSteps, stepName))
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
		res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnFewSteps, tr.file.Path, "%d processes (or blocks) hold no more %q steps than --skip-steps %d: their steps are kept, not skipped as warm-up", kept, stepName, opt.SkipSteps))
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
			x.Null |= 1<<uint(Wall) | 1<<uint(CPUOther)
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

// isStep reports whether r is an instance of the step: its name, or its
// numbered family ("ProfilerStep#N" matches "ProfilerStep#12").
func (r *rng) isStep(step string) bool { return r.nm.name == step || r.nm.family == step }

// SingleArm names the one arm of an export without arm blocks or file
// arms: a name, never blank (a blank arm reads as a missing value in CSV
// and pandas, and leaves holes in sentences).
const SingleArm = "all"

// joinArm labels an arm from its file-level and NVTX parts.
func joinArm(fileArm, nvtxArm string) string {
	switch {
	case fileArm != "" && nvtxArm != "":
		return fileArm + "/" + nvtxArm
	case fileArm != "":
		return fileArm
	case nvtxArm == "":
		return SingleArm
	}
	return nvtxArm
}

// armOrder lists arms by the start of their first block.
func armOrder(st *Store) []string {
	first := st.ArmStarts()
	arms := make([]string, 0, len(first))
	for a := range first {
		arms = append(arms, a)
	}
	sort.Slice(arms, func(i, j int) bool {
		if first[arms[i]] != first[arms[j]] {
			return first[arms[i]] < first[arms[j]]
		}
		return arms[i] < arms[j]
	})
	return arms
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
