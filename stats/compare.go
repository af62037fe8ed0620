package stats

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// An arm against the baseline: each metric's comparison per statistic
// (ratio and difference with their CIs, the verdict), and the per-unit
// values given where there is no between-unit CI.

// groupQuantile is the quantile p of the steps of side i in the groups c
// counts, for metrics without a quantile index: Quantile of the sorted
// steps, found by selection (the same element, in linear time; a thousand
// pooled ranks make each group tens of thousands of steps). The values
// are gathered once per side and groups for all of e's statistics (the
// median, p90 and p99 of one metric select from the same values, which
// selection leaves a permutation of them).
func (e *metricEval) groupQuantile(sides []*side, i int, c []int32, p float64) float64 {
	key := make([]byte, 0, 4+4*len(c))
	key = binary.LittleEndian.AppendUint32(key, uint32(i))
	for _, v := range c {
		key = binary.LittleEndian.AppendUint32(key, uint32(v))
	}
	vals, ok := e.groupVals[string(key)]
	if !ok {
		vals = sides[i].groupValues(e.m, c)
		if e.groupVals == nil {
			e.groupVals = map[string][]float64{}
		}
		e.groupVals[string(key)] = vals
	}
	if len(vals) == 0 {
		return math.NaN()
	}
	return selectKth(vals, empiricalRank(p, len(vals)))
}

func ratioPtr(b, a float64) *float64 {
	if !(a > 0) || math.IsNaN(b) {
		return nil
	}
	r := b / a
	return &r
}

func evalComparison(t *cmpTask, m int, name string, cfg *config) ([]Comparison, []Warning) {
	base := t.d.base
	s0, s1 := base.sides[0], base.sides[1]
	armName, baseName := s1.arm.name, s0.arm.name
	if s0.present(m) == 0 || s1.present(m) == 0 {
		who := baseName
		if s0.present(m) > 0 {
			who = armName
		}
		return nil, []Warning{{Code: WarnMetricAbsent, Arm: armName, Metric: name,
			Message: fmt.Sprintf("arm %q has no present step of the metric: no comparison", who)}}
	}
	tailLimited := false
	for _, s := range base.sides {
		if n := s.arm.tail[m]; n >= 1 && n <= 9 {
			tailLimited = true
		}
	}
	e := &metricEval{t: t, m: m, name: name, cfg: cfg}
	var rows []Comparison
	for _, st := range []string{StatMean, StatMedian, StatP90, StatP99} {
		rows = append(rows, e.compare(st, tailLimited))
	}
	for _, v := range e.groupVals {
		putBuf(v)
	}
	return rows, e.warns
}

// metricEval compares one metric of a comparison task, collecting the
// warnings of every statistic.
type metricEval struct {
	t     *cmpTask
	m     int
	name  string
	cfg   *config
	warns []Warning
	// groupVals holds groupQuantile's values, by side and groups.
	groupVals map[string][]float64
}

// flag marks c with code and, with a message, warns.
func (e *metricEval) flag(c *Comparison, code, msg string, vals map[string]float64) {
	if !slices.Contains(c.Warnings, code) {
		c.Warnings = append(c.Warnings, code)
	}
	if msg != "" {
		e.warns = append(e.warns, Warning{Code: code, Arm: c.Arm, Metric: e.name, Message: c.Stat + ": " + msg, Values: vals})
	}
}

// compare is the comparison of statistic st.
func (e *metricEval) compare(st string, tailLimited bool) Comparison {
	t, m, cfg := e.t, e.m, e.cfg
	base, pl := t.d.base, t.ci
	s0, s1 := base.sides[0], base.sides[1]
	c := Comparison{Metric: e.name, Stat: st, Baseline: s0.arm.name, Arm: s1.arm.name, Method: pl.method,
		NUnits: base.n, Paired: pl.paired, Warnings: slices.Clone(t.codes)}
	f, fBase, p, want := e.point(&c, tailLimited)
	c.Ratio = ratioPtr(c.ArmValue, c.BaselineValue)
	c.Diff = c.ArmValue - c.BaselineValue
	withRatio := c.Ratio != nil && c.ArmValue > 0
	if want {
		switch pl.method {
		case MethodBootstrap, MethodWithinRun:
			e.bootCI(&c, p, fBase, withRatio)
		case MethodJackknife:
			c.RatioCI, c.DiffCI = jackCompare(pl, f, withRatio, st == StatMean, cfg.confidence)
		}
	}
	if c.RatioCI != nil && (c.Method == MethodBootstrap || c.Method == MethodJackknife) {
		c.Verdict = c.IntervalVerdict()
		c.Significant = c.Verdict == VerdictChanged
	}
	if base.n <= 2 {
		unitRows(&c, base, fBase)
	}
	if st == StatMean && t.d.conditional && t.d.profiles == 2 {
		c.Profiles = profileMeans(s0.arm, s1.arm, m)
	}
	if st == StatMean && cfg.primary[m] && base.paired && base.n >= 3 {
		c.Drift = roundDrift(base, m, cfg.confidence)
		if c.Drift.significant() {
			e.flag(&c, WarnDrift, fmt.Sprintf("the per-round ratio drifts by %+.1f%% across rounds: an arm × time interaction that pairing does not cancel", 100*c.Drift.Change),
				map[string]float64{"slope_per_round": c.Drift.Slope, "change": c.Drift.Change})
		}
	}
	return c
}

// point sets c's point values and gives the statistic on the CI plan's
// sides (f) and on the design's (fBase), its quantile p (0 for the mean),
// and whether it gets an interval.
func (e *metricEval) point(c *Comparison, tailLimited bool) (f, fBase statFunc, p float64, want bool) {
	m, cfg, st := e.m, e.cfg, c.Stat
	base, pl := e.t.d.base, e.t.ci
	s0, s1 := base.sides[0], base.sides[1]
	if st == StatMean {
		c.BaselineValue, c.ArmValue = s0.mean(m, s0.ones), s1.mean(m, s1.ones)
		f, fBase = meanStat(pl.sides, m), meanStat(base.sides, m)
		want = true
		if tailLimited {
			e.flag(c, WarnTailLimitedMean, "", nil)
		}
		return f, fBase, p, want
	}
	p = 0.5
	if st == StatP90 {
		p = 0.9
	} else if st == StatP99 {
		p = 0.99
	}
	c.BaselineValue, c.ArmValue = s0.pointQuantile(m, p), s1.pointQuantile(m, p)
	if cfg.primary[m] {
		f, fBase = quantileStat(pl.sides, m, p), quantileStat(base.sides, m, p)
	} else {
		fBase = func(i int, cc []int32) float64 { return e.groupQuantile(base.sides, i, cc, p) }
	}
	switch {
	case !cfg.primary[m] || (st != StatMedian && !cfg.quantiles):
		e.flag(c, WarnNotRequested, "", nil)
	case st == StatMedian:
		want = true
	default:
		ok, reason, approx := quantileRule(p, pl.n, pl.method, pl.sides[0].present(m), pl.sides[1].present(m))
		want = ok
		if !ok && pl.method != MethodNone {
			e.flag(c, WarnQuantileCIOmitted, reason, nil)
		}
		if ok && approx {
			e.flag(c, WarnApproximateQuantileCI, "the CI rests on fewer than 50 steps beyond p in some arm", nil)
		}
	}
	return f, fBase, p, want
}

// unitRows lists each round's (paired) or unit's values of a design of
// one or two units.
func unitRows(c *Comparison, base *plan, fBase statFunc) {
	s0 := base.sides[0]
	vals := unitValues(base, fBase)
	if base.paired {
		for g := range s0.groups {
			a, b := vals[0][g], vals[1][g]
			if !math.IsNaN(a) && !math.IsNaN(b) {
				c.Rounds = append(c.Rounds, RoundValue{Round: g + 1, Label: s0.labels[g], Baseline: a, Arm: b, Ratio: ratioPtr(b, a)})
			}
		}
		return
	}
	for i, s := range base.sides {
		for g, v := range vals[i] {
			if !math.IsNaN(v) {
				c.Units = append(c.Units, UnitValue{Arm: s.arm.name, Label: s.labels[g], Value: v})
			}
		}
	}
}

// profileMeans is the mean of each arm inside each profile that holds both.
func profileMeans(a0, a1 *armData, m int) []RoundValue {
	var out []RoundValue
	for _, p := range a0.profiles {
		if !slices.Contains(a1.profiles, p) {
			continue
		}
		var v [2]float64
		for i, a := range []*armData{a0, a1} {
			var s, n float64
			for u, unit := range a.units {
				if unit.Profile == p {
					s += a.unitSum[m][u]
					n += a.unitCnt[m][u]
				}
			}
			v[i] = s / n
		}
		if !math.IsNaN(v[0]) && !math.IsNaN(v[1]) {
			out = append(out, RoundValue{Round: len(out) + 1, Label: p, Baseline: v[0], Arm: v[1], Ratio: ratioPtr(v[1], v[0])})
		}
	}
	return out
}
