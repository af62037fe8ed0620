package analysis

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// UnitStarts is the one clock that orders units (blocks or profiles): each
// unit's block start, moved onto the capture's wall clock (Unix ns) when the
// export records its session start, since each export has its own timeline.
func UnitStarts(files []*FileResult) map[phases.UnitID]int64 {
	out := map[phases.UnitID]int64{}
	for _, fr := range files {
		st := fr.Result.InstanceStore()
		prev := -1
		for i := range st.Len() {
			b := st.BlockOf(i)
			if b == prev {
				continue // the same unit and start again
			}
			prev = b
			start := st.BlockStart(i)
			if fr.StartUTC != 0 {
				start = fr.StartUTC + (start - fr.MinTime)
			}
			out[st.Unit(i)] = start
		}
	}
	return out
}

// UnitPlan is the one adapter from phases to stats: it places every
// instance in its unit and kept step once; Units then builds the statistics'
// units of one phase (only the phases being analysed hold their per-step
// values), RegionUnits those of a region of phases (boundary), both by
// integer comparisons over the same placement.
type UnitPlan struct {
	xs                *phases.Store
	starts            map[phases.UnitID]int64 // unit → start (UnitStarts)
	ids               []phases.UnitID         // per unit, in order of first kept step
	arms, profiles    []string                // per unit
	kept              []int                   // per unit: kept steps
	unit, step, phase []int32                 // per instance: unit (-1: not kept), kept step, phase index (-1: none)
	byPhase           [][]int32               // per phase index: its kept instances, in order
	wallNull          []bool                  // per phase index: WallUnmeasured
}

// Units places the instances xs (steps followed by their phases, in file
// order) in units and kept steps; phaseNames index the phases Units takes.
// Warm-up steps (--skip-steps) and their phases are left out.
func Units(xs *phases.Store, phaseNames []string, starts map[phases.UnitID]int64) *UnitPlan {
	return unitsMerged(xs, phaseNames, starts, nil)
}

// unitsMerged is Units where alias maps units to the unit they belong to:
// the per-rank exports of one job are one run, so a rank's block is part
// of the first rank's block, never a unit of its own.
func unitsMerged(xs *phases.Store, phaseNames []string, starts map[phases.UnitID]int64, alias map[phases.UnitID]phases.UnitID) *UnitPlan {
	n := xs.Len()
	p := &UnitPlan{xs: xs, starts: starts, unit: make([]int32, n), step: make([]int32, n), phase: make([]int32, n)}
	phaseIdx := make(map[string]int32, len(phaseNames))
	for i, ph := range phaseNames {
		phaseIdx[ph] = int32(i)
	}
	unitIdx := map[phases.UnitID]int32{}
	cur, skipping := int32(-1), false
	lastPhase, lastIdx := "", int32(-1)
	for i := range n {
		if xs.IsStep(i) {
			skipping = xs.Warmup(i)
			if !skipping {
				unit, profile := xs.Unit(i), xs.File(i)
				if a, ok := alias[unit]; ok {
					unit, profile = a, a.File
				}
				u, ok := unitIdx[unit]
				if !ok {
					u = int32(len(p.ids))
					unitIdx[unit] = u
					p.ids, p.arms, p.profiles, p.kept = append(p.ids, unit), append(p.arms, xs.Arm(i)), append(p.profiles, profile), append(p.kept, 0)
				}
				cur = u
				p.kept[u]++
			}
		}
		if skipping {
			p.unit[i], p.phase[i] = -1, -1
			continue
		}
		if ph := xs.Phase(i); ph != lastPhase || lastIdx < 0 {
			idx, ok := phaseIdx[ph]
			if !ok {
				idx = -1
			}
			lastPhase, lastIdx = ph, idx
		}
		p.unit[i], p.step[i], p.phase[i] = cur, int32(p.kept[cur]-1), lastIdx
	}
	p.byPhase = make([][]int32, len(phaseNames))
	p.wallNull = make([]bool, len(phaseNames))
	for i, ph := range p.phase {
		if ph >= 0 {
			p.byPhase[ph] = append(p.byPhase[ph], int32(i))
			p.wallNull[ph] = p.wallNull[ph] || xs.Null(i)&(1<<uint(phases.Wall)) != 0
		}
	}
	return p
}

// statsBudget is the memory the phases whose statistics run at once may
// take together: each holds its per-step series of every metric (Units)
// and the statistics' working arrays, about statsBytesPerValue bytes a
// value. Each phase's statistics use every core already (stats'
// parallelFor), so more phases at once add memory more than speed: on 16
// cores the eight phases of large_interleaved at once held ~29 MB (~3.6
// MB a phase, as estimated), and the soft heap limit of memtune holds
// only if the live heap stays near the 2-core one (one phase at a time).
// 8 MiB lets two of them run at once.
const (
	statsBudget        = 8 << 20
	statsBytesPerValue = 20
)

// statsConcurrency is how many phases' statistics may run at once: at
// most limit, fewer when the largest phase's series would take more than
// statsBudget together (large_interleaved: two; a 30× export: one at a
// time, where eight would take ~700 MB), at least one.
func (p *UnitPlan) statsConcurrency(limit int) int {
	largest := 0
	for _, idx := range p.byPhase {
		largest = max(largest, len(idx))
	}
	per := largest * int(phases.NumMetrics()) * statsBytesPerValue
	if per == 0 {
		return max(1, limit)
	}
	return max(1, min(limit, statsBudget/per))
}

// nanSeries is nMetrics series of n steps, all NaN (absent).
func nanSeries(nMetrics, n int) [][]float64 {
	out := make([][]float64, nMetrics)
	for m := range out {
		vals := make([]float64, n)
		for k := range vals {
			vals[k] = math.NaN()
		}
		out[m] = vals
	}
	return out
}

// addTo adds v to a step's value; NaN marks a step without the phase, and a
// sum is never NaN.
func addTo(vals []float64, t int32, v float64) {
	if math.IsNaN(vals[t]) {
		vals[t] = v
	} else {
		vals[t] += v
	}
}

// unit is the stats unit u with its per-metric series.
func (p *UnitPlan) statsUnit(u int, series [][]float64) stats.Unit {
	return stats.Unit{ID: p.ids[u].String(), Arm: p.arms[u], Profile: p.profiles[u], Start: p.starts[p.ids[u]], Steps: series}
}

// Units returns the units of the phase with index ph in phaseNames: per
// unit, per metric, per kept step; a step without the phase gives NaN
// (absent), a step with several instances of it gives their sum. Units
// without the phase are left out.
//
// The units come ordered by arm, then as the statistics order them (start,
// then ID), and each metric's series of all units lie end to end in one
// array: the statistics read an arm's steps of a metric in place instead of
// copying them (stats.Unit).
func (p *UnitPlan) Units(ph int) []stats.Unit {
	idx := p.byPhase[ph]
	pos := make([]int, len(p.ids)) // unit → its first step in a metric's row, +1; 0: phase absent
	var us []int
	for _, i := range idx {
		if u := p.unit[i]; pos[u] == 0 {
			pos[u] = 1
			us = append(us, int(u))
		}
	}
	if len(us) == 0 {
		return nil
	}
	out := make([]stats.Unit, len(us))
	for k, u := range us {
		out[k] = p.statsUnit(u, nil)
	}
	order := make([]int, len(us)) // positions in out, sorted
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int {
		x, y := &out[a], &out[b]
		return cmp.Or(strings.Compare(x.Arm, y.Arm), cmp.Compare(x.Start, y.Start), strings.Compare(x.ID, y.ID))
	})
	sorted := make([]stats.Unit, len(us))
	total := 0
	for k, j := range order {
		sorted[k] = out[j]
		pos[us[j]] = total + 1
		total += p.kept[us[j]]
	}
	out = sorted
	unitOf := make([]int, len(us)) // position in out → unit
	for k, j := range order {
		unitOf[k] = us[j]
	}
	nm := int(phases.NumMetrics())
	rows := getRows(nm * total)
	if len(rows) > 0 {
		rows[0] = math.NaN()
		for n := 1; n < len(rows); n *= 2 {
			copy(rows[n:], rows[:n])
		}
	}
	slab := make([][]float64, nm*len(out))
	for k := range out {
		u := unitOf[k]
		o := pos[u] - 1
		series := slab[k*nm : (k+1)*nm : (k+1)*nm]
		for m := range series {
			series[m] = rows[m*total+o : m*total+o+p.kept[u]]
		}
		out[k].Steps = series
	}
	// A blocked transpose: a chunk of instances (tens of KB, cache
	// resident) is read once per metric, so each metric's row is written
	// in runs of consecutive steps rather than 40 rows a step apart.
	const chunk = 64
	var at [chunk]int
	var ms [chunk][phases.MaxMetrics]int64 // the chunk's measurements, decoded once
	for c0 := 0; c0 < len(idx); c0 += chunk {
		part := idx[c0:min(c0+chunk, len(idx))]
		for k, i := range part {
			at[k] = pos[p.unit[i]] - 1 + int(p.step[i])
			p.xs.Metrics(int(i), &ms[k])
		}
		for m := range nm {
			row := rows[m*total : (m+1)*total]
			for k := range part {
				// addTo: the first instance of a step sets it, later ones add.
				v := float64(ms[k][m])
				if w := row[at[k]]; math.IsNaN(w) {
					row[at[k]] = v
				} else {
					row[at[k]] = w + v
				}
			}
		}
	}
	if p.WallUnmeasured(ph) {
		// Another thread's row without ranges of its own: how long it
		// worked is unknown, its wall and cpu_other are absent, not 0.
		for _, m := range []phases.Metric{phases.Wall, phases.CPUOther} {
			row := rows[int(m)*total : (int(m)+1)*total]
			for k := range row {
				row[k] = math.NaN()
			}
		}
	}
	return out
}

// WallUnmeasured reports whether the phase with index ph has instances
// whose wall is not measured (another thread's row where the thread marks
// no range): its wall and cpu_other are absent, and wall has no
// decomposition into parts.
func (p *UnitPlan) WallUnmeasured(ph int) bool { return p.wallNull[ph] }

// rowPool recycles the arrays behind Units' series (a few MB per phase)
// between phases: ReleaseUnits hands them back.
var rowPool sync.Pool // *[]float64

func getRows(n int) []float64 {
	if b, ok := rowPool.Get().(*[]float64); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]float64, n)
}

// ReleaseUnits hands the series of units returned by Units back for reuse
// by a later call; neither units nor anything read from their series may be
// used afterwards.
func ReleaseUnits(units []stats.Unit) {
	if len(units) == 0 || len(units[0].Steps) == 0 {
		return
	}
	first := units[0].Steps[0] // the first unit's first metric starts the array
	rows := first[:cap(first)]
	rowPool.Put(&rows)
}

// RegionUnits returns, per arm that keep accepts, the units of a region's
// per-step series (boundaryMetrics) over the kept steps: the region's
// launch + cpu_other, launch, cpu_other and wall summed over its phase
// instances (inRegion), then the step's wall. A step without any region
// phase has NaN for the region metrics; its step wall is kept.
func (p *UnitPlan) RegionUnits(keep func(arm string) bool, inRegion func(phase string) bool) map[string][]stats.Unit {
	series := make([][][]float64, len(p.ids))
	for u := range p.ids {
		if keep(p.arms[u]) {
			series[u] = nanSeries(len(boundaryMetrics), p.kept[u])
		}
	}
	var m [phases.MaxMetrics]int64
	for i := range p.xs.Len() {
		u, t := p.unit[i], p.step[i]
		if u < 0 || series[u] == nil {
			continue
		}
		s := series[u]
		if p.xs.IsStep(i) {
			p.xs.Metrics(i, &m)
			s[4][t] = float64(m[phases.Wall])
			continue
		}
		if !inRegion(p.xs.Phase(i)) {
			continue
		}
		p.xs.Metrics(i, &m)
		addTo(s[0], t, float64(m[phases.Launch]+m[phases.CPUOther]))
		addTo(s[1], t, float64(m[phases.Launch]))
		addTo(s[2], t, float64(m[phases.CPUOther]))
		addTo(s[3], t, float64(m[phases.Wall]))
	}
	out := map[string][]stats.Unit{}
	for u, s := range series {
		if s != nil {
			out[p.arms[u]] = append(out[p.arms[u]], p.statsUnit(u, s))
		}
	}
	return out
}

// b2i is 1 for true, 0 for false (a straggler series' indicator).
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
