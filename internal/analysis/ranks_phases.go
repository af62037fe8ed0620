package analysis

import (
	"fmt"
	"math"
	"slices"

	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// rankCache is what the rank rows compute once per rank: its depth-1
// spans, and its instances by phase (one pass over a rank's instances, not
// one per phase and arm: a thousand ranks have a million).
type rankCache struct {
	spans   map[int]threadSpans
	byPhase map[int]map[string][]int32
}

// phase is the indices in xs, rank's instances, of phase ph's, ascending.
func (c *rankCache) phase(rank int, xs []rankInst, ph string) []int32 {
	if c.byPhase == nil {
		c.byPhase = map[int]map[string][]int32{}
	}
	m, ok := c.byPhase[rank]
	if !ok {
		m = map[string][]int32{}
		for j := range xs {
			m[xs[j].Phase] = append(m[xs[j].Phase], int32(j))
		}
		c.byPhase[rank] = m
	}
	return m[ph]
}

// rankPhases is each phase's mean wall and NCCL time per rank, and its
// imbalance across ranks.
func rankPhases(ps []phases.RankProcess, byRank map[int][]rankInst, order, arms []string, c *rankCache) []RankPhaseRow {
	var out []RankPhaseRow
	for _, ph := range order {
		for _, arm := range arms {
			out = append(out, rankPhaseArm(ps, byRank, ph, arm, c)...)
		}
	}
	return out
}

// rankPhaseArm is rankPhases for one phase of one arm.
func rankPhaseArm(ps []phases.RankProcess, byRank map[int][]rankInst, ph, arm string, c *rankCache) []RankPhaseRow {
	if c.spans == nil {
		c.spans = map[int]threadSpans{}
	}
	var rows []RankPhaseRow
	for i := range ps {
		p := &ps[i]
		xs := byRank[p.Rank]
		var n, busyN int
		var wall, busy, nccl, expos, other int64
		var own []int // indices of the phase's instances
		for _, j32 := range c.phase(p.Rank, xs, ph) {
			// A row with no wall of its own (another thread without
			// ranges) is no timed instance: it never counts here.
			if j := int(j32); xs[j].Arm == arm && !xs[j].Warmup && !xs[j].WallNull {
				n++
				// the instance's wall metric, not its span: the
				// (unannotated) row spans the step but its wall is the
				// step's time outside every phase
				wall += xs[j].Wall
				if !xs[j].BusyNull {
					busyN++
					busy += xs[j].Busy
				}
				own = append(own, j)
			}
		}
		if n == 0 {
			continue
		}
		phaseSpans, ok := c.spans[p.Rank]
		if !ok {
			phaseSpans = depthOneSpans(xs)
			c.spans[p.Rank] = phaseSpans
		}
		// NCCL kernels whose launching call lies in one of the phase's
		// instances on the instance's thread (both ends included); for
		// the (unannotated) row, outside every phase of the step.
		for _, c := range p.Collectives {
			if c.CallStart < 0 || p.Kind != "nccl" {
				continue
			}
			otherThread := false
			for _, j := range own {
				x := &xs[j]
				if x.Start <= c.CallStart && c.CallStart <= x.End {
					if x.Tid == c.Tid && (x.Phase != phases.Unannotated || !phaseSpans.holds(c.Tid, c.CallStart)) {
						nccl += c.End - c.Start
						expos += c.ExposedNs
						otherThread = false
						break
					}
					otherThread = x.Tid != c.Tid
				}
			}
			if otherThread {
				other += c.End - c.Start
			}
		}
		row := RankPhaseRow{Phase: ph, Arm: arm, Rank: p.Rank, N: n, WallMeanNs: float64(wall) / float64(n),
			NCCLNsMean: float64(nccl) / float64(n), NCCLExposedNsMean: float64(expos) / float64(n), OverlapShare: share(nccl-expos, nccl),
			NCCLOtherThreadNsMean: float64(other) / float64(n)}
		if busyN == n {
			b := float64(busy) / float64(n)
			row.GPUBusyMeanNs = &b
		}
		rows = append(rows, row)
	}
	hi, sum, fastest := 0.0, 0.0, math.Inf(1)
	for _, r := range rows {
		hi = max(hi, r.WallMeanNs)
		sum += r.WallMeanNs
		fastest = min(fastest, r.WallMeanNs)
	}
	for i := range rows {
		if sum > 0 {
			v := hi / (sum / float64(len(rows)))
			rows[i].Imbalance = &v
		}
		if rows[i].WallMeanNs > 0 {
			v := fastest / rows[i].WallMeanNs
			rows[i].RelativeScore = &v
		}
	}
	return rows
}

// rankComparisons compares the arms on each rank: per phase, the mean wall
// of the rank's kept instances, with the same statistics as the arms'
// comparisons (units = the rank's blocks, never single steps).
func (d *Doc) rankComparisons(ps []phases.RankProcess, byRank map[int][]rankInst, o *Options, c *rankCache) []RankComparison {
	out := []RankComparison{}
	if o.NoStats || len(d.Arms) < 2 {
		return out
	}
	for _, ph := range d.Phases {
		for i := range ps {
			var units []stats.Unit
			at := map[phases.UnitID]int{}
			xs := byRank[ps[i].Rank]
			for _, j := range c.phase(ps[i].Rank, xs, ph) {
				x := &xs[j]
				if x.Warmup || x.WallNull {
					continue
				}
				k, ok := at[x.Unit]
				if !ok {
					k = len(units)
					at[x.Unit] = k
					units = append(units, stats.Unit{ID: x.Unit.String(), Arm: x.Arm, Profile: x.File, Start: d.unitStart[x.Unit], Steps: [][]float64{nil}})
				}
				units[k].Steps[0] = append(units[k].Steps[0], float64(x.Wall))
			}
			base := d.Baseline
			if !slices.ContainsFunc(units, func(u stats.Unit) bool { return u.Arm == base }) || len(units) == 0 {
				continue
			}
			res, err := stats.Analyze(fmt.Sprintf("%s rank %d", ph, ps[i].Rank), []string{phases.Wall.Name()}, units,
				o.statsOptions(base, []int{}, false))
			if err != nil {
				continue
			}
			for _, c := range res.Comparisons {
				if c.Stat != stats.StatMean {
					continue
				}
				out = append(out, RankComparison{Phase: ph, Rank: ps[i].Rank, Baseline: c.Baseline, Arm: c.Arm, BaseMeanNs: c.BaselineValue, ArmMeanNs: c.ArmValue,
					RatioEstimate: c.RatioEstimate, Verdict: c.Verdict, Method: c.Method, NUnits: c.NUnits})
			}
		}
	}
	return out
}
