package analysis

import (
	"math"

	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// UnitStarts is the one clock that orders units (blocks or profiles): each
// unit's block start, moved onto the capture's wall clock (Unix ns) when the
// export records its session start, since each export has its own timeline.
func UnitStarts(files []*FileResult) map[phases.UnitID]int64 {
	out := map[phases.UnitID]int64{}
	for _, fr := range files {
		for _, x := range fr.Result.Instances {
			start := x.BlockStart
			if fr.StartUTC != 0 {
				start = fr.StartUTC + (x.BlockStart - fr.MinTime)
			}
			out[x.Unit] = start
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
	xs                []phases.Instance
	starts            map[phases.UnitID]int64 // unit → start (UnitStarts)
	ids               []phases.UnitID         // per unit, in order of first kept step
	arms, profiles    []string                // per unit
	kept              []int                   // per unit: kept steps
	unit, step, phase []int32                 // per instance: unit (-1: not kept), kept step, phase index (-1: none)
}

// Units places the instances xs (steps followed by their phases, in file
// order) in units and kept steps; phaseNames index the phases Units takes.
// Warm-up steps (--skip-steps) and their phases are left out.
func Units(xs []phases.Instance, phaseNames []string, starts map[phases.UnitID]int64) *UnitPlan {
	p := &UnitPlan{xs: xs, starts: starts, unit: make([]int32, len(xs)), step: make([]int32, len(xs)), phase: make([]int32, len(xs))}
	phaseIdx := make(map[string]int32, len(phaseNames))
	for i, ph := range phaseNames {
		phaseIdx[ph] = int32(i)
	}
	unitIdx := map[phases.UnitID]int32{}
	cur, skipping := int32(-1), false
	lastPhase, lastIdx := "", int32(-1)
	for i := range xs {
		x := &xs[i]
		if x.IsStep {
			skipping = x.Warmup
			if !skipping {
				u, ok := unitIdx[x.Unit]
				if !ok {
					u = int32(len(p.ids))
					unitIdx[x.Unit] = u
					p.ids, p.arms, p.profiles, p.kept = append(p.ids, x.Unit), append(p.arms, x.Arm), append(p.profiles, x.File), append(p.kept, 0)
				}
				cur = u
				p.kept[u]++
			}
		}
		if skipping {
			p.unit[i], p.phase[i] = -1, -1
			continue
		}
		if x.Phase != lastPhase || lastIdx < 0 {
			idx, ok := phaseIdx[x.Phase]
			if !ok {
				idx = -1
			}
			lastPhase, lastIdx = x.Phase, idx
		}
		p.unit[i], p.step[i], p.phase[i] = cur, int32(p.kept[cur]-1), lastIdx
	}
	return p
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
func (p *UnitPlan) Units(ph int) []stats.Unit {
	steps := make([][][]float64, len(p.ids)) // per unit, per metric, per kept step; nil: phase absent
	for i := range p.xs {
		if p.phase[i] != int32(ph) {
			continue
		}
		u, t := p.unit[i], p.step[i]
		if steps[u] == nil {
			steps[u] = nanSeries(int(phases.NumMetrics), p.kept[u])
		}
		for m, vals := range steps[u] {
			addTo(vals, t, float64(p.xs[i].M[m]))
		}
	}
	var out []stats.Unit
	for u, st := range steps {
		if st != nil {
			out = append(out, p.statsUnit(u, st))
		}
	}
	return out
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
	for i := range p.xs {
		u, t := p.unit[i], p.step[i]
		if u < 0 || series[u] == nil {
			continue
		}
		x := &p.xs[i]
		s := series[u]
		if x.IsStep {
			s[4][t] = float64(x.M[phases.Wall])
			continue
		}
		if !inRegion(x.Phase) {
			continue
		}
		addTo(s[0], t, float64(x.M[phases.Launch]+x.M[phases.CPUOther]))
		addTo(s[1], t, float64(x.M[phases.Launch]))
		addTo(s[2], t, float64(x.M[phases.CPUOther]))
		addTo(s[3], t, float64(x.M[phases.Wall]))
	}
	out := map[string][]stats.Unit{}
	for u, s := range series {
		if s != nil {
			out[p.arms[u]] = append(out[p.arms[u]], p.statsUnit(u, s))
		}
	}
	return out
}
