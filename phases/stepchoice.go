package phases

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/nsys"
)

// How the step is chosen when the user does not name it. Candidates are
// range names (numbered families folded) ranked by what they hold, not by
// count alone:
//
//   - whose annotation: only the program's own ranges can be the step;
//     ranges libraries and frameworks write (annotation.go) never are;
//   - structure: children of arm blocks first; then a numbered family
//     ("ProfilerStep#N") that holds most of its level's time; then the
//     shallowest level of a thread's tree where a name repeats, where a
//     fixed cycle of several names makes one implicit step per cycle, and
//     where a name repeated many times inside each instance of the chosen
//     one (an outer loop) hands the step down to it;
//   - coverage: the share of its processes' traced time inside its
//     instances breaks ties within a level;
//   - single range: when nothing repeats, one user range with user
//     children that encloses most of its process's CUDA work is a step
//     measured once;
//   - none: "whole process", its top-level user ranges as phases.

// Candidate is one range name considered as the step.
type Candidate struct {
	Name      string  `json:"name"`
	Rule      string  `json:"rule"`      // the Step* mode this candidate would be chosen by
	Instances int     `json:"instances"` // ranges of this name or family (not nested in one another)
	Coverage  float64 `json:"coverage"`  // Σ instance wall ÷ Σ traced span of the processes holding it
	Library   bool    `json:"library"`   // written by a library or framework (never chosen)
	Depth     int     `json:"depth"`     // shallowest depth in a thread's range tree
	Score     float64 `json:"score"`     // rule weight + coverage; the step has the highest
}

// Step choice modes added by the evidence rules (StepChoice.Mode).
const (
	StepCycle       = "cycle"        // sibling ranges repeat in a fixed cycle: one implicit step per cycle
	StepNested      = "nested"       // a range repeated many times inside each instance of an outer loop
	StepSingleRange = "single_range" // no range repeats: one user range enclosing the CUDA work, n = 1
)

// Scores. Coverage comes first: a candidate's score is its coverage (0–1)
// times coverageWeight plus its rule's weight (0–5), so half the coverage
// outweighs any rule, and the rule orders candidates of similar coverage.
// The score reports the ranking; the choice itself applies the rules
// (coverageRatio, containerLoopShare) directly.
const coverageWeight = 10.0

const (
	weightContainer = 1.5 // a single range enclosing most of the process
	weightLibrary   = 0.0
	weightDeeper    = 1.0 // repeats, but below the level the step was chosen from
	weightSingle    = 1.0
	weightRepeated  = 2.0
	weightCycle     = 3.0
	weightNested    = 3.5
	weightFamily    = 4.0
	weightArm       = 5.0
)

// candTally accumulates one family's evidence over all threads.
type candTally struct {
	n, maxPerThread int
	perThread       int
	lastTid         int64
	numbered        bool
	lib             bool  // every instance is a library's range
	ns              int64 // Σ duration of instances not nested in one of the same family
	depth           int32
	pids            map[int64]bool
	// inArms: an instance lies inside an arm block. With arm blocks, a
	// name with none (a one-off setup before the first block) cannot be
	// the step — its steps would all be left out — so it is no candidate.
	inArms bool
}

// nestedMinRepeats and nestedMinShare define an outer loop: a child name
// that repeats at least this often per instance (median) and fills at least
// this share of it takes the step from it ("Steps" holding 1,000 "step").
const (
	nestedMinRepeats = 4
	nestedMinShare   = 0.5
)

// singleRangeMinShare: a single range is the step when it covers at least
// this share of its process's traced span (NVTX and CUDA API calls).
const singleRangeMinShare = 0.5

// chooser ranks step candidates on one export's range trees.
type chooser struct {
	threads []*threadRanges
	blocks  []armBlock
	pat     *regexp.Regexp
	tallies map[string]*candTally
	span    map[int64][2]int64 // per pid: first start, last end of its ranges
	// wrappers: program families whose every instance only wraps one
	// library call (wrapsOneCall): never the step.
	wrappers map[string]bool
}

func newChooser(threads []*threadRanges, blocks []armBlock, pat *regexp.Regexp) *chooser {
	c := &chooser{threads: threads, blocks: blocks, pat: pat, tallies: map[string]*candTally{}, span: map[int64][2]int64{}}
	for _, t := range threads {
		pid := nsys.Pid(t.gtid)
		for i := range t.ranges {
			r := &t.ranges[i]
			s, ok := c.span[pid]
			if !ok {
				s = [2]int64{r.start, r.end}
			}
			c.span[pid] = [2]int64{min(s[0], r.start), max(s[1], r.end)}
		}
	}
	wraps := map[string]bool{} // family → every instance only wraps one library call
	for _, t := range threads {
		// Instances nested in one of their own family count once.
		open := map[string]int64{} // family → end of the enclosing instance
		ci := newChildIndex(t)
		for i := range t.ranges {
			r := &t.ranges[i]
			if r.nm.armOf(pat).ok || r.nm.warmup {
				continue
			}
			fam := r.nm.family
			x := c.tallies[fam]
			if x == nil {
				x = &candTally{lastTid: -1, lib: true, depth: r.depth, pids: map[int64]bool{}}
				c.tallies[fam] = x
			}
			x.n++
			if x.lastTid != t.gtid {
				x.lastTid, x.perThread = t.gtid, 0
			}
			x.perThread++
			x.maxPerThread = max(x.maxPerThread, x.perThread)
			x.numbered = x.numbered || r.nm.name != r.nm.family
			x.lib = x.lib && r.nm.lib
			w, seen := wraps[fam]
			wraps[fam] = (w || !seen) && wrapsOneCall(t, ci, int32(i))
			x.depth = min(x.depth, r.depth)
			x.pids[nsys.Pid(t.gtid)] = true
			x.inArms = x.inArms || len(blocks) > 0 && inArmBlock(blocks, nsys.Pid(t.gtid), r.start, r.end) >= 0
			if end, ok := open[fam]; ok && r.start < end {
				continue
			}
			open[fam] = r.end
			x.ns += r.end - r.start
		}
	}
	// A program range that only wraps one library call ("allreduce"
	// around ncclAllReduce) is that call's annotation, not a step.
	c.wrappers = map[string]bool{}
	for fam, w := range wraps {
		if x := c.tallies[fam]; w && !x.lib {
			x.lib, c.wrappers[fam] = true, true
		}
	}
	return c
}

// wrapsOneCall reports whether range i holds exactly one range, an
// operator or library call, that fills at least 90% of it.
func wrapsOneCall(t *threadRanges, ci *childIndex, i int32) bool {
	kids := ci.of(i)
	if len(kids) != 1 {
		return false
	}
	r, k := &t.ranges[i], &t.ranges[kids[0]]
	return k.nm.isOp() && r.end > r.start && 10*(k.end-k.start) >= 9*(r.end-r.start)
}

// notUser reports a range that cannot be the step: a library's, or a
// program range that only wraps one library call.
func (c *chooser) notUser(r *rng) bool { return r.nm.lib || c.wrappers[r.nm.family] }

// coverage is a family's share of the traced span of its processes.
func (c *chooser) coverage(x *candTally) float64 {
	var span int64
	for pid := range x.pids {
		s := c.span[pid]
		span += s[1] - s[0]
	}
	if span <= 0 {
		return 0
	}
	return min(1, float64(x.ns)/float64(span))
}

// choice is the chooser's answer.
type choice struct {
	name   string
	n      int
	mode   string
	cycle  *cycleStep // mode StepCycle: the cycle to wrap into implicit steps
	inArms bool       // chosen among the children of arm blocks
	cands  []Candidate
	// mode StepSingleRange from preferContainer: the repeated range the
	// container won over and its coverage.
	over    string
	overCov float64
}

// choose ranks the candidates and returns the step; name "" when no user
// range repeats (the caller falls back to a single range or whole process).
func (c *chooser) choose() choice {
	scores := map[string]float64{}
	rules := map[string]string{}
	set := func(name, rule string, w float64) {
		x := c.tallies[name]
		s := w
		if x != nil {
			s += coverageWeight * c.coverage(x)
		}
		if s > scores[name] || rules[name] == "" {
			scores[name], rules[name] = s, rule
		}
	}
	for name, x := range c.tallies {
		switch {
		case x.lib:
			set(name, "library", weightLibrary)
		case x.maxPerThread >= 2:
			set(name, StepRepeated, weightDeeper)
		default:
			set(name, StepSingleShot, weightSingle-0.5)
		}
	}
	var ch choice
	if len(c.blocks) > 0 {
		name, n, fam := c.pickLevel(func(t *threadRanges, r *rng) bool {
			if r.parent >= 0 {
				return !r.nm.armOf(c.pat).ok && t.ranges[r.parent].nm.armOf(c.pat).ok
			}
			return inArmBlock(c.blocks, nsys.Pid(r.gtid), r.start, r.end) >= 0
		}, false, nil)
		if name != "" {
			set(name, StepRepeated, weightArm)
			ch = choice{name: name, n: n, mode: StepRepeated, inArms: true}
			if fam {
				ch.mode = StepFamily
			}
		}
	} else {
		ch = c.chooseByLevel(set, scores, rules)
		if ch.name != "" {
			ch = c.preferContainer(ch, set)
		}
	}
	for name, s := range scores {
		x := c.tallies[name]
		if len(c.blocks) > 0 && x != nil && !x.inArms {
			continue
		}
		cd := Candidate{Name: name, Rule: rules[name], Score: round3(s)}
		if x != nil {
			cd.Instances, cd.Coverage, cd.Library, cd.Depth = x.n, roundShare(c.coverage(x)), x.lib, int(x.depth)
		} else if ch.cycle != nil && name == ch.cycle.name {
			cd.Instances, cd.Coverage, cd.Depth = ch.cycle.count, roundShare(ch.cycle.coverage), int(ch.cycle.depth)
		}
		ch.cands = append(ch.cands, cd)
	}
	slices.SortFunc(ch.cands, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(b.Instances, a.Instances), strings.Compare(a.Name, b.Name))
	})
	// The chosen step heads the list whatever its score (a tie within a
	// level goes to the name that repeats most, as it always has).
	if ch.name != "" {
		if i := slices.IndexFunc(ch.cands, func(cd Candidate) bool { return cd.Name == ch.name }); i > 0 {
			cd := ch.cands[i]
			copy(ch.cands[1:i+1], ch.cands[:i])
			ch.cands[0] = cd
		}
	}
	return ch
}

// coverageRatio: coverage comes first. A repeated candidate that covers
// less than this share of what the best-covering repeated candidate covers
// cannot win by structure (by repeating most, being numbered or nesting):
// an operator or layer repeated inside each iteration loses to the loop.
const coverageRatio = 0.5

// containerLoopShare: a single range enclosing most of its process (main,
// profile, Run Benchmark) yields to a repeated range only when that one
// covers at least this share of the process's traced time (the loop inside
// the container); layers repeated inside one iteration never do.
const containerLoopShare = 0.25

// bestRepeated is the coverage of the best-covering repeated user family.
func (c *chooser) bestRepeated() float64 {
	best := 0.0
	for _, x := range c.tallies {
		if !x.lib && x.maxPerThread >= 2 {
			best = max(best, c.coverage(x))
		}
	}
	return best
}

// chooseByLevel walks a thread's range tree from the top: at the shallowest
// level where a user range repeats, a numbered family, a fixed cycle or the
// name that repeats most, among the candidates that cover enough (coverage
// first), then an outer loop hands the step down.
func (c *chooser) chooseByLevel(set func(string, string, float64), scores map[string]float64, rules map[string]string) choice {
	floor := coverageRatio * c.bestRepeated()
	eligible := func(name string) bool {
		x := c.tallies[name]
		return x != nil && c.coverage(x) >= floor
	}
	maxDepth := int32(0)
	for _, t := range c.threads {
		for i := range t.ranges {
			maxDepth = max(maxDepth, t.ranges[i].depth)
		}
	}
	for d := int32(0); d <= maxDepth; d++ {
		level := func(_ *threadRanges, r *rng) bool { return r.depth == d }
		if any, _, _ := c.pickLevel(level, true, nil); any == "" {
			continue // no user range repeats at this level
		}
		name, n, fam := c.pickLevel(level, true, eligible)
		if cy := c.findCycle(d); cy != nil && cy.coverage >= floor && (name == "" || !fam) {
			scores[cy.name], rules[cy.name] = weightCycle+cy.coverage*coverageWeight, StepCycle
			return choice{name: cy.name, n: cy.count, mode: StepCycle, cycle: cy}
		}
		if name == "" {
			continue
		}
		if fam {
			set(name, StepFamily, weightFamily)
			return choice{name: name, n: n, mode: StepFamily}
		}
		set(name, StepRepeated, weightRepeated)
		ch := choice{name: name, n: n, mode: StepRepeated}
		// An outer loop hands the step down to what it repeats.
		for {
			inner, k := c.innerLoop(ch.name)
			if inner == "" {
				break
			}
			set(inner, StepNested, weightNested)
			ch = choice{name: inner, n: k, mode: StepNested}
		}
		return ch
	}
	return choice{}
}

// preferContainer applies the loop-inside-a-container exception the other
// way round: when one top-level user range encloses most of its process
// (a container) and the repeated step covers less than containerLoopShare,
// the container is the step, measured once.
func (c *chooser) preferContainer(ch choice, set func(string, string, float64)) choice {
	cov := 0.0
	if x := c.tallies[ch.name]; x != nil {
		cov = c.coverage(x)
	} else if ch.cycle != nil {
		cov = ch.cycle.coverage
	}
	if cov >= containerLoopShare {
		return ch
	}
	name, n, ccov := c.container()
	if name == "" || ccov < cov {
		return ch
	}
	set(name, StepSingleRange, weightContainer)
	return choice{name: name, n: n, mode: StepSingleRange, over: ch.name, overCov: cov, cands: ch.cands}
}

// container is the longest top-level user range that does not repeat on
// its thread, holds user ranges and covers at least singleRangeMinShare of
// its process's traced span; its instance count (one per thread) and
// coverage; "" when none.
func (c *chooser) container() (string, int, float64) {
	best := longestEnclosing(c.threads, func(r *rng) bool {
		if c.notUser(r) || r.nm.warmup || r.nm.armOf(c.pat).ok {
			return false
		}
		x := c.tallies[r.nm.family]
		return x != nil && x.maxPerThread <= 1
	})
	if best == nil {
		return "", 0, 0
	}
	s := c.span[nsys.Pid(best.gtid)]
	cov := min(1, float64(best.end-best.start)/float64(max(1, s[1]-s[0])))
	if cov < singleRangeMinShare {
		return "", 0, 0
	}
	return best.nm.family, c.tallies[best.nm.family].n, cov
}

// longestEnclosing is the longest top-level range that keep accepts and
// that holds at least one range not a library's: the candidate container
// of both the step choice and the whole-process fallback.
func longestEnclosing(threads []*threadRanges, keep func(r *rng) bool) *rng {
	var best *rng
	for _, t := range threads {
		ci := newChildIndex(t)
		for i := range t.ranges {
			r := &t.ranges[i]
			if r.depth != 0 || !keep(r) {
				continue
			}
			if !slices.ContainsFunc(ci.of(int32(i)), func(k int32) bool { return !t.ranges[k].nm.lib }) {
				continue
			}
			if best == nil || r.end-r.start > best.end-best.start {
				best = r
			}
		}
	}
	return best
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// roundShare rounds a share (0–1) to 3 decimals, or to 2 significant
// digits below 0.001, where 3 decimals would make a short repeated range
// (5 launches of 9 µs in a 2 s program) a coverage of exactly 0.
func roundShare(f float64) float64 {
	if f <= 0 || f >= 0.001 {
		return round3(f)
	}
	scale := math.Pow(10, math.Floor(math.Log10(f))-1)
	return math.Round(f/scale) * scale
}

// SharePct writes a share (0–1) as a whole percentage, or with two
// significant digits below 1%, so that a share that is not 0 never reads
// "0%".
func SharePct(f float64) string {
	if f > 0 && f < 0.01 {
		return strconv.FormatFloat(100*f, 'g', 2, 64) + "%"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

// pickLevel is the step among the user ranges keep selects: the numbered
// family or name that repeats most (ties: the one that covers more, then the
// earlier). needPerThread: without arms, a step repeats on one thread, and a
// numbered family must also hold most of its level's range time — so
// "Identity_0" … "Identity_15" among the layers of one inference pass is not
// a step, but "ProfilerStep#1" … "#40" is. eligible (nil: all) says which
// names may win (coverage first).
func (c *chooser) pickLevel(keep func(t *threadRanges, r *rng) bool, needPerThread bool, eligible func(string) bool) (string, int, bool) {
	type lt struct {
		n, perThread, maxPerThread int
		lastTid, first, ns         int64
		numbered                   bool
	}
	counts := map[string]*lt{}
	var levelNs int64
	for _, t := range c.threads {
		for i := range t.ranges {
			r := &t.ranges[i]
			if c.notUser(r) || r.nm.warmup || r.nm.armOf(c.pat).ok || !keep(t, r) {
				continue
			}
			levelNs += r.end - r.start
			x := counts[r.nm.family]
			if x == nil {
				x = &lt{first: r.start, lastTid: -1}
				counts[r.nm.family] = x
			}
			x.n++
			if x.lastTid != t.gtid {
				x.lastTid, x.perThread = t.gtid, 0
			}
			x.perThread++
			x.maxPerThread = max(x.maxPerThread, x.perThread)
			x.first = min(x.first, r.start)
			x.numbered = x.numbered || r.nm.name != r.nm.family
			x.ns += r.end - r.start
		}
	}
	// Without arms a numbered family that qualifies wins over plain names.
	familyWins := false
	if needPerThread {
		for name, x := range counts {
			familyWins = familyWins || (x.numbered && x.maxPerThread >= 2 && 2*x.ns >= levelNs && (eligible == nil || eligible(name)))
		}
	}
	best, bestN := "", 1 // a step repeats: at least 2 instances
	for name, x := range counts {
		if eligible != nil && !eligible(name) {
			continue
		}
		if needPerThread && (x.maxPerThread < 2 || (x.numbered && 2*x.ns < levelNs) || (familyWins && !x.numbered)) {
			continue
		}
		if x.n > bestN || (x.n == bestN && best != "" && (x.first < counts[best].first || (x.first == counts[best].first && name < best))) {
			best, bestN = name, x.n
		}
	}
	if best == "" {
		return "", 0, false
	}
	return best, bestN, counts[best].numbered
}

// innerLoop returns the user family that repeats at least nestedMinRepeats
// times (median) directly inside each instance of step and fills at least
// nestedMinShare of them, with its instance count; "" when none does.
// Numbered steps are never outer loops: their instances are the steps.
func (c *chooser) innerLoop(step string) (string, int) {
	if x := c.tallies[step]; x == nil || x.numbered {
		return "", 0
	}
	type kid struct {
		perParent []int
		ns        int64
		n         int
	}
	kids := map[string]*kid{}
	var parents int
	var parentNs int64
	for _, t := range c.threads {
		ci := newChildIndex(t)
		for i := range t.ranges {
			r := &t.ranges[i]
			if r.nm.family != step {
				continue
			}
			parents++
			parentNs += r.end - r.start
			seen := map[string]int{}
			for _, k := range ci.of(int32(i)) {
				kr := &t.ranges[k]
				if c.notUser(kr) || kr.nm.warmup {
					continue
				}
				seen[kr.nm.family]++
				x := kids[kr.nm.family]
				if x == nil {
					x = &kid{}
					kids[kr.nm.family] = x
				}
				x.ns += kr.end - kr.start
				x.n++
			}
			for name, k := range seen {
				kids[name].perParent = append(kids[name].perParent, k)
			}
		}
	}
	best, bestN := "", 0
	for name, x := range kids {
		counts := append(x.perParent, make([]int, parents-len(x.perParent))...) // parents without it: 0
		slices.Sort(counts)
		if counts[len(counts)/2] < nestedMinRepeats || float64(x.ns) < nestedMinShare*float64(parentNs) {
			continue
		}
		if x.n > bestN || (x.n == bestN && name < best) {
			best, bestN = name, x.n
		}
	}
	return best, bestN
}

// cycleStep is an implicit step: sibling ranges that repeat in a fixed
// order with no enclosing range.
type cycleStep struct {
	name     string   // "<first member> … <last member>"
	members  []string // families in cycle order, from the first member
	count    int      // complete cycles
	coverage float64
	depth    int32
}

// cycleMinMembers: a cycle has at least two distinct names.
const cycleMinMembers = 2

// findCycle looks for a fixed cycle among the user ranges at depth d: on
// each thread (and parent), the names that repeat, read in time order, must
// follow one order exactly. Names that occur in fewer than half the cycles
// (data-dependent phases) are left out of the order; they become phases of
// the cycle they fall in. nil when there is no such cycle.
func (c *chooser) findCycle(d int32) *cycleStep {
	type seqKey struct {
		gtid   int64
		parent int32
	}
	seqs := map[seqKey][]*rng{}
	var keys []seqKey
	for _, t := range c.threads {
		for i := range t.ranges {
			r := &t.ranges[i]
			if r.depth != d || r.nm.lib || r.nm.warmup || r.nm.armOf(c.pat).ok {
				continue
			}
			k := seqKey{t.gtid, r.parent}
			if _, ok := seqs[k]; !ok {
				keys = append(keys, k)
			}
			seqs[k] = append(seqs[k], r)
		}
	}
	var order []string
	var cov struct{ ns, span int64 }
	total := 0
	pids := map[int64]bool{}
	for _, k := range keys {
		seq := seqs[k]
		count := map[string]int{}
		for _, r := range seq {
			count[r.nm.family]++
		}
		top := 0
		for _, n := range count {
			top = max(top, n)
		}
		if top < 2 {
			continue
		}
		var members []*rng
		for _, r := range seq {
			if 2*count[r.nm.family] > top {
				members = append(members, r)
			}
		}
		var first []string // member names in order of first appearance
		seen := map[string]bool{}
		for _, r := range members {
			if !seen[r.nm.family] {
				seen[r.nm.family] = true
				first = append(first, r.nm.family)
			}
		}
		if len(first) < cycleMinMembers {
			return nil
		}
		for i, r := range members {
			if r.nm.family != first[i%len(first)] {
				return nil
			}
		}
		// The cycle starts after its longest pause when that pause stands
		// out (a frame's reader after the last frame's post-processing),
		// else with the first name seen.
		gapBefore := make([]int64, len(first))
		gaps := make([]int, len(first))
		for i := 1; i < len(members); i++ {
			j := i % len(first)
			gapBefore[j] += max(0, members[i].start-members[i-1].end)
			gaps[j]++
		}
		startAt := 0
		mean := func(j int) float64 { return float64(gapBefore[j]) / float64(max(gaps[j], 1)) }
		for j := range first {
			if mean(j) > 4*mean(startAt) && mean(j) > mean(0)*4 {
				startAt = j
			}
		}
		rot := append(slices.Clone(first[startAt:]), first[:startAt]...)
		if order == nil {
			order = rot
		} else if !slices.Equal(order, rot) {
			return nil
		}
		for i := startAt; i+len(first) <= len(members); i += len(first) {
			total++
			cov.ns += members[i+len(first)-1].end - members[i].start
		}
		pids[nsys.Pid(k.gtid)] = true
	}
	if order == nil || total < 2 {
		return nil
	}
	for pid := range pids {
		s := c.span[pid]
		cov.span += s[1] - s[0]
	}
	cy := &cycleStep{members: order, count: total, depth: d}
	cy.name = order[0] + " … " + order[len(order)-1]
	if cov.span > 0 {
		cy.coverage = min(1, float64(cov.ns)/float64(cov.span))
	}
	return cy
}

// wrapCycles puts each complete cycle under one synthetic step range named
// after the cycle, so its members become the step's phases.
func wrapCycles(threads []*threadRanges, cy *cycleStep, pat *regexp.Regexp) {
	nm := syntheticName(cy.name)
	member := map[string]bool{}
	for _, m := range cy.members {
		member[m] = true
	}
	for _, t := range threads {
		var add []rng
		var cur []*rng
		for i := range t.ranges {
			r := &t.ranges[i]
			if r.depth != cy.depth || r.nm.lib || r.nm.warmup || r.nm.armOf(pat).ok || !member[r.nm.family] {
				continue
			}
			if r.nm.family == cy.members[0] {
				cur = cur[:0]
			}
			if len(cur) != slices.Index(cy.members, r.nm.family) || (len(cur) > 0 && cur[0].parent != r.parent) {
				cur = cur[:0]
				continue
			}
			cur = append(cur, r)
			if len(cur) == len(cy.members) {
				add = append(add, rng{start: cur[0].start, end: cur[len(cur)-1].end, gtid: t.gtid, nm: nm, parent: -1})
				cur = cur[:0]
			}
		}
		if len(add) == 0 {
			continue
		}
		t.ranges = append(t.ranges, add...)
		slices.SortFunc(t.ranges, func(a, b rng) int {
			return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end), cmp.Compare(b.depth, a.depth))
		})
		linkParents(t)
	}
}

// whyChosen is the first-line sentence of each rule, with its evidence.
func (ch choice) why(coverage float64) string {
	runner := ""
	for _, cd := range ch.cands[min(1, len(ch.cands)):] {
		if !cd.Library {
			runner = fmt.Sprintf("; runner-up %q (%s, %d %s, %s coverage)", cd.Name, cd.Rule, cd.Instances, plural.Of(cd.Instances, "instance", "instances"), SharePct(cd.Coverage))
			break
		}
	}
	cov := fmt.Sprintf("covers %s of its processes' traced time", SharePct(coverage))
	instances := plural.Of(ch.n, "instance", "instances")
	switch ch.mode {
	case StepFamily:
		return fmt.Sprintf("step %q: numbered family, %d %s, %s%s; override with --step NAME", ch.name, ch.n, instances, cov, runner)
	case StepCycle:
		return fmt.Sprintf("step %q: %d ranges repeat in a fixed cycle with no enclosing range, one step per cycle (%d), %s%s; override with --step NAME", ch.name, len(ch.cycle.members), ch.n, cov, runner)
	case StepNested:
		return fmt.Sprintf("step %q: repeated many times inside each instance of an outer range, %d %s, %s%s; override with --step NAME", ch.name, ch.n, instances, cov, runner)
	case StepSingleRange:
		return fmt.Sprintf("step %q: one range encloses %s of its process's traced time and holds the program's ranges; the repeated %q covers only %s (less than a quarter: a part of one iteration, not the loop), so the enclosing range is the step, measured once (n = 1, values without CIs); override with --step NAME", ch.name, SharePct(coverage), ch.over, SharePct(ch.overCov))
	}
	where := "at the top of a thread's range tree"
	if ch.inArms {
		where = "inside arm blocks"
	}
	return fmt.Sprintf("step %q: the program's range that repeats most %s, %d %s, %s%s; override with --step NAME", ch.name, where, ch.n, instances, cov, runner)
}

// maxCandidates is how many candidates a StepChoice lists.
const maxCandidates = 5

// stepChoice is the choice as reported: rule, coverage, runner-up and the
// top candidates.
func (ch choice) stepChoice() StepChoice {
	cov := 0.0
	if len(ch.cands) > 0 && ch.cands[0].Name == ch.name {
		cov = ch.cands[0].Coverage
	}
	sc := StepChoice{Mode: ch.mode, Step: ch.name, Count: ch.n, Rule: RuleText(ch.mode), Coverage: cov, Why: ch.why(cov)}
	if ch.inArms {
		sc.Rule += inArmBlocks
	}
	for _, cd := range ch.cands {
		if cd.Name != ch.name && !cd.Library {
			sc.RunnerUp = cd.Name
			break
		}
	}
	sc.Candidates = ch.cands[:min(len(ch.cands), maxCandidates)]
	return sc
}

// userThreads are the threads that hold at least one range that is not an
// operator or library call: the program's own, or a C++ code section.
func userThreads(threads []*threadRanges) []*threadRanges {
	var out []*threadRanges
	for _, t := range threads {
		if slices.ContainsFunc(t.ranges, func(r rng) bool { return !r.nm.isOp() }) {
			out = append(out, t)
		}
	}
	return out
}

// singleRange returns the single-range step when nothing repeats: the
// longest top-level user range that has user children and covers at least
// singleRangeMinShare of its process's traced span (its NVTX ranges and CUDA
// API calls); its instance count (one per thread) and coverage.
func singleRange(threads []*threadRanges, ext []nsys.ThreadExtent) (string, int, float64) {
	span := map[int64][2]int64{}
	grow := func(pid, lo, hi int64) {
		s, ok := span[pid]
		if !ok {
			s = [2]int64{lo, hi}
		}
		span[pid] = [2]int64{min(s[0], lo), max(s[1], hi)}
	}
	for _, t := range threads {
		for _, r := range t.ranges {
			grow(nsys.Pid(t.gtid), r.start, r.end)
		}
	}
	for _, e := range ext {
		if e.Calls > 0 {
			grow(nsys.Pid(e.GlobalTid), e.Start, e.End)
		}
	}
	best := longestEnclosing(threads, func(r *rng) bool { return !r.nm.lib && !r.nm.warmup })
	if best == nil {
		return "", 0, 0
	}
	s := span[nsys.Pid(best.gtid)]
	cov := float64(best.end-best.start) / float64(max(1, s[1]-s[0]))
	if cov < singleRangeMinShare {
		return "", 0, 0
	}
	n := 0
	for _, t := range threads {
		for _, r := range t.ranges {
			if r.depth == 0 && r.nm == best.nm {
				n++
			}
		}
	}
	return best.nm.name, n, min(1, cov)
}

// gpuCoverage is the share of the steps' processes' GPU busy time that the
// step instances and their other-thread rows hold; nil without GPU work.
func gpuCoverage(xs *Store, use []GPUUse) *float64 {
	var inSteps int64
	pids := map[int64]bool{}
	for i := range xs.Len() {
		if (xs.IsStep(i) || xs.OtherThread(i)) && xs.Null(i)&(1<<uint(GPUBusy)) == 0 {
			inSteps += xs.Metric(i, GPUBusy)
			pids[xs.Pid(i)] = true
		}
	}
	var total int64
	for _, u := range use {
		for i, p := range u.Pids {
			if pids[p] && i < len(u.BusyNs) {
				total += u.BusyNs[i]
			}
		}
	}
	if total <= 0 {
		return nil
	}
	v := roundShare(min(1, float64(inSteps)/float64(total)))
	return &v
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
			res.StepChoice.Coverage = roundShare(cov)
			res.StepChoice.Why = fmt.Sprintf("step %q: no range repeats; this one range encloses %s of its process's traced time and holds the program's ranges, so it is the step, measured once (n = 1, values without CIs); override with --step NAME", name, SharePct(cov))
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
