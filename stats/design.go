package stats

import (
	"cmp"
	"fmt"
	"math"
	"strings"
)

func unitBefore(a, b *Unit) bool {
	return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.ID, b.ID)) < 0
}

// ladder returns the CI method for n resampled units (docs/statistics.md §3.4).
func ladder(n int) string {
	switch {
	case n >= 8:
		return MethodBootstrap
	case n >= 3:
		return MethodJackknife
	default:
		return MethodWithinRun
	}
}

// comparisonDesign is the block- or profile-level structure of one comparison.
type comparisonDesign struct {
	base           *plan // sides: baseline, arm; groups are rounds (paired) or units
	nonInterleaved bool
	conditional    bool // ≤ 2 profiles: blocks resampled, process variance left out
	profiles       int
	dropped        []string
	included       [2][]int // per side: units inside some group
}

type seqEntry struct{ side, idx int }

// pairConsecutive splits a time-ordered sequence of sides into consecutive
// pairs. ok is false unless every pair holds one unit of each side, i.e.
// the arms alternate or are randomised within rounds. An odd trailing entry
// is returned as trailing (−1 when none).
func pairConsecutive(sides []int) (pairs [][2]int, trailing int, ok bool) {
	trailing = -1
	for i := 0; i+1 < len(sides); i += 2 {
		if sides[i] == sides[i+1] {
			return nil, -1, false
		}
		pairs = append(pairs, [2]int{i, i + 1})
	}
	if len(sides)%2 == 1 {
		trailing = len(sides) - 1
	}
	return pairs, trailing, len(pairs) > 0
}

// mixedProfiles reports whether every profile holds both arms.
func mixedProfiles(order []string, byProf map[string][]seqEntry, has func([]seqEntry) [2]bool) bool {
	for _, p := range order {
		if h := has(byProf[p]); !h[0] || !h[1] {
			return false
		}
	}
	return true
}

// buildComparison finds rounds (docs/statistics.md §3.1, §4): with ≥ 3 profiles the profile is
// the unit (paired when every profile holds both arms, or when single-arm
// profiles alternate); with ≤ 2 profiles it descends to blocks, paired
// inside each profile when the blocks alternate. Anything else is stratified.
func buildComparison(a0, a1 *armData, primary []bool, forceStratified bool) *comparisonDesign {
	arms := [2]*armData{a0, a1}
	profOrder, byProf := profileRuns(arms)
	d := &comparisonDesign{profiles: len(profOrder)}
	r := &roundDesign{
		arms:    arms,
		unitGrp: [2][]int32{make([]int32, len(a0.units)), make([]int32, len(a1.units))},
		level:   LevelBlock,
	}

	// Profiles are the unit only when each arm has at least three of them
	// (docs/statistics.md §4b: with n_profiles ≤ 2 descend one level, to the blocks).
	if len(profOrder) >= 3 && len(a0.profiles) >= 3 && len(a1.profiles) >= 3 || len(profOrder) >= 3 && mixedProfiles(profOrder, byProf, armsOf) {
		r.profileRounds(d, profOrder, byProf)
	} else {
		r.blockRounds(d, profOrder, byProf, forceStratified)
	}

	for _, e := range r.dropped {
		d.dropped = append(d.dropped, arms[e.side].units[e.idx].ID)
	}
	pl := &plan{paired: r.paired, level: r.level}
	for s, a := range arms {
		g := len(r.labels[s])
		for i, grp := range r.unitGrp[s] {
			if int(grp) < g {
				d.included[s] = append(d.included[s], i)
			}
		}
		pl.sides = append(pl.sides, newSide(a, unitStepGroups(a, r.unitGrp[s]), g, r.labels[s], primary))
	}
	if r.paired {
		pl.n = pl.sides[0].groups
	} else {
		pl.n = min(pl.sides[0].groups, pl.sides[1].groups)
	}
	pl.method = ladder(pl.n)
	d.base = pl
	return d
}

// profileRuns merges both arms' units in run order and groups them by
// profile, profiles in order of first appearance.
func profileRuns(arms [2]*armData) (profOrder []string, byProf map[string][]seqEntry) {
	a0, a1 := arms[0], arms[1]
	var seq []seqEntry
	for i, j := 0, 0; i < len(a0.units) || j < len(a1.units); {
		if j >= len(a1.units) || (i < len(a0.units) && unitBefore(a0.units[i], a1.units[j])) {
			seq = append(seq, seqEntry{0, i})
			i++
		} else {
			seq = append(seq, seqEntry{1, j})
			j++
		}
	}
	byProf = map[string][]seqEntry{}
	for _, e := range seq {
		p := arms[e.side].units[e.idx].Profile
		if _, ok := byProf[p]; !ok {
			profOrder = append(profOrder, p)
		}
		byProf[p] = append(byProf[p], e)
	}
	return profOrder, byProf
}

// armsOf says which arms have an entry in es.
func armsOf(es []seqEntry) (h [2]bool) {
	for _, e := range es {
		h[e.side] = true
	}
	return h
}

// roundDesign is the grouping of each arm's units that buildComparison
// settles on: each unit's group (its round when paired), the groups'
// labels, and the entries left out of every round.
type roundDesign struct {
	arms    [2]*armData
	unitGrp [2][]int32
	labels  [2][]string
	paired  bool
	level   string
	dropped []seqEntry
}

// assignRounds makes round k of every listed pair of entry groups.
func (r *roundDesign) assignRounds(rounds [][2][]seqEntry) {
	r.paired = true
	for s := range r.unitGrp {
		for i := range r.unitGrp[s] {
			r.unitGrp[s][i] = int32(len(rounds)) // outside every round until assigned
		}
	}
	for k, rd := range rounds {
		var ids [2][]string
		for _, half := range rd {
			for _, e := range half {
				r.unitGrp[e.side][e.idx] = int32(k)
				u := r.arms[e.side].units[e.idx]
				name := u.ID
				if r.level == LevelProfile {
					name = u.Profile
				}
				if len(ids[e.side]) == 0 || ids[e.side][len(ids[e.side])-1] != name {
					ids[e.side] = append(ids[e.side], name)
				}
			}
		}
		label := strings.Join(ids[0], "+") + " | " + strings.Join(ids[1], "+")
		if r.level == LevelProfile && len(ids[0]) == 1 && len(ids[1]) == 1 && ids[0][0] == ids[1][0] {
			label = ids[0][0] // a mixed profile is its own round
		}
		r.labels[0] = append(r.labels[0], label)
		r.labels[1] = append(r.labels[1], label)
	}
}

// profileRounds groups the units by profile: one round per mixed profile,
// rounds of consecutive single-arm profiles, else strata of each arm's
// profiles.
func (r *roundDesign) profileRounds(d *comparisonDesign, profOrder []string, byProf map[string][]seqEntry) {
	r.level = LevelProfile
	mixed, single := true, true
	for _, p := range profOrder {
		if h := armsOf(byProf[p]); h[0] && h[1] {
			single = false
		} else {
			mixed = false
		}
	}
	switch {
	case mixed:
		var rounds [][2][]seqEntry
		for _, p := range profOrder {
			rounds = append(rounds, [2][]seqEntry{byProf[p], nil})
		}
		r.assignRounds(rounds)
	case single:
		sides := make([]int, len(profOrder))
		for i, p := range profOrder {
			sides[i] = byProf[p][0].side
		}
		if pairs, trailing, ok := pairConsecutive(sides); ok {
			var rounds [][2][]seqEntry
			for _, pr := range pairs {
				rounds = append(rounds, [2][]seqEntry{byProf[profOrder[pr[0]]], byProf[profOrder[pr[1]]]})
			}
			r.assignRounds(rounds)
			if trailing >= 0 {
				r.dropped = byProf[profOrder[trailing]]
			}
		} else {
			d.nonInterleaved = true
		}
	}
	if !r.paired { // stratified over each arm's profiles
		for s, a := range r.arms {
			for i, u := range a.units {
				for g, p := range a.profiles {
					if p == u.Profile {
						r.unitGrp[s][i] = int32(g)
					}
				}
			}
			r.labels[s] = a.profiles
		}
	}
}

// blockRounds pairs consecutive blocks of opposite arms within each
// profile, else (or when forced) makes each block its own stratum.
func (r *roundDesign) blockRounds(d *comparisonDesign, profOrder []string, byProf map[string][]seqEntry, forceStratified bool) {
	d.conditional = true
	ok := true
	var rounds [][2][]seqEntry
	var trailing []seqEntry
	for _, p := range profOrder {
		es := byProf[p]
		if h := armsOf(es); !h[0] || !h[1] {
			ok = false
			break
		}
		sides := make([]int, len(es))
		for i, e := range es {
			sides[i] = e.side
		}
		pairs, tr, okP := pairConsecutive(sides)
		if !okP {
			ok = false
			break
		}
		for _, pr := range pairs {
			rounds = append(rounds, [2][]seqEntry{{es[pr[0]]}, {es[pr[1]]}})
		}
		if tr >= 0 {
			trailing = append(trailing, es[tr])
		}
	}
	if ok && !forceStratified {
		r.assignRounds(rounds)
		r.dropped = trailing
	} else {
		d.nonInterleaved = !ok
		for s, a := range r.arms {
			r.labels[s] = nil
			for i, u := range a.units {
				r.unitGrp[s][i] = int32(i)
				r.labels[s] = append(r.labels[s], u.ID)
			}
		}
	}
}

// buildArmPlan groups one arm's units for its own summary: by profile when
// it has ≥ 3 profiles, else by unit (block).
func buildArmPlan(a *armData, primary []bool) *plan {
	unitGrp := make([]int32, len(a.units))
	var labels []string
	level := LevelBlock
	if len(a.profiles) >= 3 {
		level = LevelProfile
		labels = a.profiles
		for i, u := range a.units {
			for g, p := range a.profiles {
				if p == u.Profile {
					unitGrp[i] = int32(g)
				}
			}
		}
	} else {
		for i, u := range a.units {
			unitGrp[i] = int32(i)
			labels = append(labels, u.ID)
		}
	}
	pl := &plan{level: level, sides: []*side{newSide(a, unitStepGroups(a, unitGrp), len(labels), labels, primary)}}
	pl.n = len(labels)
	pl.method = ladder(pl.n)
	return pl
}

// Batching of one run (docs/statistics.md §4c).
const (
	minBatchLen = 20
	maxBatches  = 20
	minBatches  = 5
)

// batchLength is m = max(20, ⌈5·τ̂⌉), τ̂ the largest integrated
// autocorrelation time of log x over the primary metrics of the listed units.
func batchLength(arms []*armData, include [][]int, metrics []int) (m int, tau float64) {
	tau = 1
	for s, a := range arms {
		for _, mi := range metrics {
			var series [][]float64
			for _, i := range include[s] {
				series = append(series, logIfPositive(a.unitSteps(mi, i)))
			}
			tau = max(tau, integratedTau(series))
		}
	}
	return max(minBatchLen, int(math.Ceil(5*tau))), tau
}

// batchPlan cuts each arm's included units into contiguous batches of at
// least m steps (at most 20 per arm) and makes a stratified plan over them: a
// non-overlapping block bootstrap. n is the fewest batches of any arm.
func batchPlan(arms []*armData, include [][]int, m int, primary []bool) *plan {
	pl := &plan{level: LevelBatch}
	pl.n = math.MaxInt
	for s, a := range arms {
		total := 0
		for _, i := range include[s] {
			total += a.offset[i+1] - a.offset[i]
		}
		mm := max(m, (total+maxBatches-1)/maxBatches)
		stepGrp := make([]int32, a.steps())
		for i := range stepGrp {
			stepGrp[i] = -1
		}
		var labels []string
		for _, i := range include[s] {
			n := a.offset[i+1] - a.offset[i]
			k := n / mm
			for j := range k {
				t0, t1 := j*n/k, (j+1)*n/k
				for t := t0; t < t1; t++ {
					stepGrp[a.offset[i]+t] = int32(len(labels))
				}
				labels = append(labels, fmt.Sprintf("%s[%d:%d]", a.units[i].ID, t0, t1))
			}
		}
		for i, g := range stepGrp {
			if g < 0 {
				stepGrp[i] = int32(len(labels))
			}
		}
		pl.sides = append(pl.sides, newSide(a, stepGrp, len(labels), labels, primary))
		pl.n = min(pl.n, len(labels))
	}
	pl.method = MethodWithinRun
	if pl.n < minBatches {
		pl.method = MethodNone
	}
	return pl
}
