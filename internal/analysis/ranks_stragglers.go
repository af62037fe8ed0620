package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// rankStepKeys identify steps across ranks: the numbered family's label
// when the step has one, else arm, block and the step's index among the
// process's steps of that block (Instance.Step counts the steps of every
// process of the block).
func rankStepKeys(steps []rankInst) []string {
	out := make([]string, len(steps))
	idx := map[string]int{}
	for i := range steps {
		x := &steps[i]
		if x.StepLabel != "" {
			out[i] = x.StepLabel
			continue
		}
		b := fmt.Sprintf("%s block %d", orDash(x.Arm), x.Block)
		out[i] = fmt.Sprintf("%s step %d", b, idx[b])
		idx[b]++
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// collGroup is one rank's collectives under one key: a step's, or one
// collective alone.
type collGroup struct {
	order int
	block string // the step's block (unit) label, which the CIs resample
	wall  int64  // the step's wall; -1 for a collective alone
	arr   []int64
	end   []int64  // each collective's end, beside its arrival
	name  []string // each collective's kernel or call name
	init  bool     // outside the counted steps (initialisation, warm-up)
}

// add appends one collective of the rank to the group.
func (g *collGroup) add(p *phases.RankProcess, c *phases.Collective, clock func(*phases.RankProcess, int64) int64) {
	g.arr, g.end, g.name = append(g.arr, clock(p, c.Start)), append(g.end, clock(p, c.End)), append(g.name, c.Name)
}

// collectiveGroups places each rank's collectives in groups: by step
// (bySteps), or each collective alone (matched by order); those of
// initialisation and warm-up are matched by order among themselves. keys
// are in first-seen order; matched counts the keys outside them that every
// rank holds.
func collectiveGroups(ps []phases.RankProcess, byRank map[int][]rankInst, clock func(*phases.RankProcess, int64) int64, haveSteps, bySteps bool) (per []map[string]*collGroup, keys []string, matched int) {
	per = make([]map[string]*collGroup, len(ps))
	seen := map[string]bool{}
	add := func(i int, k string, g *collGroup) *collGroup {
		if per[i][k] == nil {
			per[i][k] = g
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		return per[i][k]
	}
	for i := range ps {
		p := &ps[i]
		per[i] = map[string]*collGroup{}
		var steps []rankInst
		var skeys []string
		if haveSteps {
			steps = stepsOf(byRank[p.Rank])
			skeys = rankStepKeys(steps)
		}
		n, m := 0, 0
		for ci := range p.Collectives {
			c := &p.Collectives[ci]
			t := c.CallStart
			if t < 0 {
				t = c.Start
			}
			block, init := "run", false
			if haveSteps {
				// the step of the process that holds the launching call
				j, _ := slices.BinarySearchFunc(steps, t, func(x rankInst, t int64) int { return cmp.Compare(x.Start, t+1) })
				inStep := j > 0 && t <= steps[j-1].End
				init = !inStep || steps[j-1].Warmup
				switch {
				case init && bySteps:
					// initialisation or warm-up: outside the counted
					// steps, matched by order among themselves and
					// reported apart from the steady state
					g := add(i, fmt.Sprintf("init collective %d", m), &collGroup{order: m, block: "init", wall: -1, init: true})
					g.add(p, c, clock)
					m++
					continue
				case bySteps:
					g := add(i, skeys[j-1], &collGroup{order: j - 1, block: steps[j-1].Unit.String(), wall: steps[j-1].End - steps[j-1].Start})
					g.add(p, c, clock)
					continue
				case init:
					block = "init"
				}
			}
			// Matched by order, every collective keeps its place in the
			// rank's sequence, initialisation or not: a first collective
			// whose call lies just outside one rank's first step (or was
			// not traced) must not shift that rank's sequence against the
			// others'. A collective that is initialisation in any rank is
			// initialisation for all (anyInit).
			g := add(i, fmt.Sprintf("collective %d", n), &collGroup{order: n, block: block, wall: -1, init: init})
			g.add(p, c, clock)
			n++
		}
	}
	for _, k := range keys {
		gs := make([]*collGroup, len(per))
		all := true
		for i := range per {
			gs[i] = per[i][k]
			all = all && gs[i] != nil
		}
		if all && !anyInit(gs) {
			matched++
		}
	}
	return per, keys, matched
}

// anyInit reports whether any rank's group of a key is initialisation.
func anyInit(gs []*collGroup) bool {
	return slices.ContainsFunc(gs, func(g *collGroup) bool { return g != nil && g.init })
}

// stragglerSeries are what the matched steps give, per rank: the series
// the CIs resample and the sums the means divide.
type stragglerSeries struct {
	lateness, strag     [][]float64 // per rank and matched step: lateness (ns), 1 when it was last
	blocks              []string    // per matched step: its block, the unit the CIs resample
	waitSum, afterSum   []int64     // per rank, over the matched steps
	initLate            []int64     // per rank, over the initialisation collectives
	initN, uneven, step int         // initialisation collectives, steps with uneven counts, matched steps
	// matched collectives, and those whose ranks ran different kernels or
	// calls (the first such, by rank, in mismatch)
	collectives, mismatched int
	mismatch                []string
	ops                     map[string]string // collectiveOp of each distinct name, worked out once
}

// stragglers matches the ranks' steps (or, without steps, their
// collectives by order), finds who arrives last, and summarizes per rank
// with the block bootstrap over consecutive steps.
func (d *Doc) stragglers(s *RanksSection, ps []phases.RankProcess, byRank map[int][]rankInst, clock func(*phases.RankProcess, int64) int64, o *Options) {
	haveSteps := true
	for i := range ps {
		if len(stepsOf(byRank[ps[i].Rank])) == 0 {
			haveSteps = false
		}
	}
	per, keys, matched := collectiveGroups(ps, byRank, clock, haveSteps, haveSteps)
	if haveSteps && matched >= minStragglerSteps {
		s.Matching = "steps matched by step number (numbered families) or by arm, block and step index; within a step, collectives matched by order"
		s.Settings.Unit = "step"
	} else {
		per, keys, _ = collectiveGroups(ps, byRank, clock, haveSteps, false)
		s.Matching = fmt.Sprintf("collectives matched by order (%d matched %s collectives, fewer than %d)", matched, plural.Of(matched, "step holds", "steps hold"), minStragglerSteps)
		if !haveSteps {
			s.Matching = "collectives matched by order (not every rank has steps)"
		}
		s.Settings.Unit = "collective"
	}
	ser := &stragglerSeries{lateness: make([][]float64, len(ps)), strag: make([][]float64, len(ps)),
		waitSum: make([]int64, len(ps)), afterSum: make([]int64, len(ps)), initLate: make([]int64, len(ps))}
	for _, k := range keys {
		gs := make([]*collGroup, len(ps))
		n := math.MaxInt
		for i := range ps {
			gs[i] = per[i][k]
			if gs[i] == nil {
				n = 0
				break
			}
			n = min(n, len(gs[i].arr))
		}
		if n == 0 {
			continue
		}
		if anyInit(gs) {
			ser.addInit(gs, n)
			continue
		}
		s.addStragglerStep(ser, ps, gs, k, n)
	}
	s.Settings.Steps = ser.step
	s.Settings.InitCollectives = ser.initN
	for i := range ps {
		s.Ranks[i].InitLatenessNs = ser.initLate[i]
	}
	s.Settings.Confidence, s.Settings.Resamples, s.Settings.Seed = d.Settings.Confidence, d.Settings.Resamples, d.Settings.Seed
	if ser.mismatched > 0 {
		d.Warnings = append(d.Warnings, Warning{Code: WarnCollectivesMismatched, Values: map[string]float64{"mismatched": float64(ser.mismatched), "collectives": float64(ser.collectives)},
			Message: fmt.Sprintf("in %d of %d matched %s the ranks ran different operations (first: %s): their sequences of collectives differ "+
				"(collectives of a subgroup, or one that a rank's trace lacks), so lateness and waits there compare different operations",
				ser.mismatched, ser.collectives, plural.Of(ser.collectives, "collective", "collectives"), mismatchText(ser.mismatch, ps))})
	}
	if ser.uneven > 0 {
		d.Warnings = append(d.Warnings, Warning{Code: WarnCollectiveCounts, Message: fmt.Sprintf("in %d of %d matched %s the ranks ran different numbers of collectives: the first ones of each rank were matched",
			ser.uneven, ser.step, plural.Of(ser.step, "step", "steps"))})
	}
	if ser.step == 0 {
		return
	}
	for i := range ps {
		n := 0
		for _, v := range ser.strag[i] {
			n += int(v)
		}
		s.Ranks[i].StragglerSteps = n
		s.Ranks[i].StragglerShare = share(int64(n), int64(ser.step))
		sum := stats.Summarize(ser.lateness[i])
		m, med := sum.Mean, sum.Median
		s.Ranks[i].LatenessMeanNs, s.Ranks[i].LatenessMedianNs = &m, &med
		w := float64(ser.waitSum[i]) / float64(ser.step)
		s.Ranks[i].WaitMeanNs = &w
		a := float64(ser.afterSum[i]) / float64(ser.step)
		s.Ranks[i].AfterLastMeanNs = &a
		s.Ranks[i].Method = stats.MethodNone
	}
	if o.NoStats {
		return
	}
	d.stragglerCIs(s, ps, ser, o)
}

// addInit adds n initialisation collectives of every rank (gs): each
// rank's arrival after the first.
func (ser *stragglerSeries) addInit(gs []*collGroup, n int) {
	for c := range n {
		lo := int64(math.MaxInt64)
		for i := range gs {
			lo = min(lo, gs[i].arr[c])
		}
		for i := range gs {
			ser.initLate[i] += gs[i].arr[c] - lo
		}
	}
	ser.initN += n
}

// addStragglerStep adds the matched step k (the first n collectives of
// every rank, gs): per rank its lateness after the first arrival, its wait
// for the last and its time after the last arrived, and who was last.
func (s *RanksSection) addStragglerStep(ser *stragglerSeries, ps []phases.RankProcess, gs []*collGroup, k string, n int) {
	for i := range gs {
		if len(gs[i].arr) != n {
			ser.uneven++
			break
		}
	}
	late, wait := make([]int64, len(ps)), make([]int64, len(ps))
	var skew int64
	for c := range n {
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for i := range gs {
			lo, hi = min(lo, gs[i].arr[c]), max(hi, gs[i].arr[c])
		}
		skew += hi - lo
		ser.countMismatch(gs, c)
		for i := range gs {
			late[i] += gs[i].arr[c] - lo
			wait[i] += hi - gs[i].arr[c]
			// the time in the collective once the last rank arrived:
			// the transfer itself, apart from the wait before it
			ser.afterSum[i] += max(0, gs[i].end[c]-hi)
		}
	}
	last := 0
	for i := range late {
		if late[i] > late[last] {
			last = i
		}
	}
	for i := range ps {
		var wall *int64
		if gs[i].wall >= 0 {
			wall = &gs[i].wall
		}
		s.Steps = append(s.Steps, StragglerStep{Step: ser.step, Label: k, Rank: ps[i].Rank, Collectives: n, ArrivalNs: gs[i].arr[0], StepWallNs: wall,
			LatenessNs: late[i], Straggler: i == last, SkewNs: skew, WaitNs: wait[i]})
		ser.waitSum[i] += wait[i]
		ser.lateness[i] = append(ser.lateness[i], float64(late[i]))
		if i == 0 {
			ser.blocks = append(ser.blocks, gs[0].block)
		}
		ser.strag[i] = append(ser.strag[i], float64(b2i(i == last)))
	}
	ser.step++
}

// stragglerCIs are the per-rank CIs of lateness and of the straggler
// share: each rank is an "arm" whose units are the blocks of its steps
// (arm blocks, else the run): consecutive steps stay together, so their
// autocorrelation is kept (docs/statistics.md §3–4; one block gives the
// within-run batch CI of §4c).
func (d *Doc) stragglerCIs(s *RanksSection, ps []phases.RankProcess, ser *stragglerSeries, o *Options) {
	blocks := ser.blocks
	var units []stats.Unit
	for i := range ps {
		arm := fmt.Sprintf("rank %d", ps[i].Rank)
		for _, r := range blockRuns(blocks) {
			lo, hi := r[0], r[1]
			units = append(units, stats.Unit{ID: arm + " " + blocks[lo], Arm: arm, Profile: ps[i].File, Start: int64(lo),
				Steps: [][]float64{ser.lateness[i][lo:hi], ser.strag[i][lo:hi]}})
		}
	}
	res, err := stats.Analyze("stragglers", []string{"lateness_ns", "straggler"}, units,
		o.statsOptions("", []int{0}, false))
	if err != nil {
		d.Warnings = append(d.Warnings, Warning{Code: "straggler_ci", Message: "straggler CIs not computed: " + err.Error()})
		return
	}
	for _, a := range res.Arms {
		for i := range ps {
			if a.Arm != fmt.Sprintf("rank %d", ps[i].Rank) {
				continue
			}
			row := &s.Ranks[i]
			row.Method = a.Method
			for _, m := range a.Metrics {
				switch m.Metric {
				case "lateness_ns":
					row.LatenessCI, row.Diagnostics = m.MeanCI, m.Diagnostics
				case "straggler":
					if c := m.MeanCI; c != nil { // a share: the log-scale CI may pass 1
						row.StragglerShareCI = &[2]float64{max(0, c[0]), min(1, c[1])}
					}
				}
			}
		}
	}
}

// countMismatch counts the matched collective c and whether its ranks ran
// different operations, keeping the first such one's names.
func (ser *stragglerSeries) countMismatch(gs []*collGroup, c int) {
	ser.collectives++
	op := ser.op(gs[0].name[c])
	for i := range gs[1:] {
		if ser.op(gs[i+1].name[c]) != op {
			ser.mismatched++
			if ser.mismatch == nil {
				for _, g := range gs {
					ser.mismatch = append(ser.mismatch, g.name[c])
				}
			}
			return
		}
	}
}

// op is collectiveOp of name: a job runs few distinct kernels, a rank view
// of 1,024 ranks compares each collective 1,024 times.
func (ser *stragglerSeries) op(name string) string {
	op, ok := ser.ops[name]
	if !ok {
		if ser.ops == nil {
			ser.ops = map[string]string{}
		}
		op = collectiveOp(name)
		ser.ops[name] = op
	}
	return op
}

// collectiveOps are the operations a collective's kernel or call name
// says, most specific first ("allreduce" before "reduce").
var collectiveOps = []string{"reducescatter", "allreduce", "allgather", "alltoall", "broadcast", "sendrecv", "send", "recv", "reduce", "barrier", "gather", "scatter", "bcast"}

// collectiveOp is the operation of a collective's name (an NCCL kernel
// such as ncclDevKernel_AllReduce_Sum_f32_RING_LL, or an MPI call), so
// that the same collective run with another protocol or data type on
// another rank still matches; a name that says none is itself.
func collectiveOp(name string) string {
	l := strings.ToLower(name)
	for _, op := range collectiveOps {
		if strings.Contains(l, op) {
			return op
		}
	}
	return name
}

// mismatchText names each rank's operation of a mismatched collective.
func mismatchText(names []string, ps []phases.RankProcess) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s on rank %d", n, ps[i].Rank)
	}
	return strings.Join(parts, ", ")
}
