package stats

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Analyze computes, for one task (e.g. one phase), per-arm summaries of
// every metric and each arm's comparison with the baseline. key names the
// task; with the metric names and the arm names it selects the random
// streams, so equal inputs give byte-identical results.
func Analyze(key string, metrics []string, units []Unit, opt Options) (*Result, error) {
	cfg, err := resolveOptions(metrics, opt, minResamples)
	if err != nil {
		return nil, fmt.Errorf("analyze %q: %w", key, err)
	}
	return analyze(key, metrics, units, cfg)
}

var quantileStats = [...]struct {
	name string
	p    float64
}{{StatMedian, 0.5}, {StatP90, 0.9}, {StatP99, 0.99}}

func evalArmMetric(t *armTask, m int, name string, cfg *config) (ArmMetric, []Warning) {
	a, pl := t.a, t.ci
	am := ArmMetric{Metric: name, N: a.present[m], Present: float64(a.present[m]) / float64(a.steps()), Method: pl.method}
	var warns []Warning
	flag := func(code, msg string, vals map[string]float64) {
		if !slices.Contains(am.Flags, code) {
			am.Flags = append(am.Flags, code)
		}
		warns = append(warns, Warning{Code: code, Arm: a.name, Metric: name, Message: msg, Values: vals})
	}
	for i := range a.units {
		if a.unitCnt[m][i] > 0 {
			am.Units++
		}
	}
	if am.N == 0 {
		am.Method = MethodNone
		flag(WarnMetricAbsent, "no step of this arm has the metric", nil)
		return am, warns
	}
	am.Mean = a.mean(m)
	am.Median, am.P90, am.P99 = a.quant[m][0], a.quant[m][1], a.quant[m][2]
	am.TailSteps = a.tail[m]
	if am.TailSteps >= 1 && am.TailSteps <= 9 {
		flag(WarnTailLimitedMean, fmt.Sprintf("%d tail step(s) (modified z > 10) carry the mean: its CI may under-cover", am.TailSteps),
			map[string]float64{"tail_steps": float64(am.TailSteps)})
	}
	if cfg.primary[m] {
		d := armDiagnostics(a, m, cfg.confidence)
		am.Diagnostics = d
		if d.VIF >= 2 {
			flag(WarnAutocorrelation, fmt.Sprintf("steps are not independent: VIF %.3g, N_eff %.0f of %d; per-step i.i.d. CIs would be √VIF too narrow", d.VIF, d.NEff, am.N),
				map[string]float64{"rho1": d.Rho1, "tau": d.Tau, "vif": d.VIF, "n_eff": d.NEff})
		}
		if h := d.HeadEffect; h != nil && h.CI != nil && (h.CI[0] > 1 || h.CI[1] < 1) && math.Abs(h.Value-1) > 0.05 {
			flag(WarnHeadEffect, fmt.Sprintf("the first %d steps of each block average %.3g× the rest: trim more warm-up", headSteps, h.Value),
				map[string]float64{"ratio": h.Value, "lo": h.CI[0], "hi": h.CI[1]})
		}
		if d.Drift.significant() {
			flag(WarnDrift, fmt.Sprintf("unit means drift by %+.1f%% across the run (paired comparisons cancel additive drift)", 100*d.Drift.Change),
				map[string]float64{"slope_per_s": d.Drift.Slope, "change": d.Drift.Change})
		}
	}

	note := func(undefined int) {
		if undefined > 0 {
			flag(WarnUndefinedResamples, fmt.Sprintf("%d of %d resamples drew no present step; CIs use the rest", undefined, pl.b),
				map[string]float64{"undefined": float64(undefined), "b": float64(pl.b)})
		}
	}
	omit := func(reason string) { flag(WarnQuantileCIOmitted, reason, nil) }
	switch pl.method {
	case MethodBootstrap, MethodWithinRun:
		s := pl.sides[0]
		if s.present(m) == 0 {
			break
		}
		var und int
		if v, ok := s.constantMean(m); ok {
			// Every replicate is v: the interval of B equal values.
			if pl.b >= 2 {
				am.MeanCI = &[2]float64{v, v}
			}
		} else {
			am.MeanCI, und = pl.releasedInterval(pl.meanValues(0, m))
			note(und)
		}
		if pl.method == MethodBootstrap && am.MeanCI != nil && am.Mean > 0 {
			j := logScaleJackknife(pl, func(cs [][]int32) float64 { return s.mean(m, cs[0]) }, true, cfg.confidence)
			if j != nil && skewed(*am.MeanCI, *j) {
				flag(WarnSkewedOrTailLimited, "the jackknife-t and bootstrap mean CIs disagree by more than 25% of the width",
					map[string]float64{"boot_lo": am.MeanCI[0], "boot_hi": am.MeanCI[1], "jack_lo": j[0], "jack_hi": j[1]})
			}
			am.MeanCI = hullCI(am.MeanCI, j)
		}
		if !cfg.primary[m] {
			break
		}
		am.MedianCI, und = pl.releasedInterval(pl.quantileValues(0, m, 0.5))
		note(und)
		if !cfg.quantiles {
			break
		}
		for _, q := range quantileStats[1:] {
			ok, reason, approx := quantileRule(q.p, pl.n, pl.method, s.present(m))
			if !ok {
				omit(reason)
				continue
			}
			ci, und := pl.releasedInterval(pl.quantileValues(0, m, q.p))
			note(und)
			if q.p == 0.9 {
				am.P90CI = ci
			} else {
				am.P99CI = ci
			}
			if approx {
				flag(WarnApproximateQuantileCI, fmt.Sprintf("p%g CI rests on fewer than 50 steps beyond p", 100*q.p), nil)
			}
		}
	case MethodJackknife:
		s := pl.sides[0]
		am.MeanCI = logScaleJackknife(pl, func(cs [][]int32) float64 { return s.mean(m, cs[0]) }, true, cfg.confidence)
		if cfg.primary[m] {
			am.MedianCI = logScaleJackknife(pl, func(cs [][]int32) float64 { return s.quantile(m, 0.5, cs[0]) }, false, cfg.confidence)
			if cfg.quantiles {
				omit(fmt.Sprintf("p90/p99 CIs need ≥ 8 resampled units (the jackknife fails for extreme quantiles), have %d", pl.n))
			}
		}
	}
	return am, warns
}

// unitValues returns statistic f of each group of each side alone.
func unitValues(pl *plan, f statFunc) [][]float64 {
	out := make([][]float64, len(pl.sides))
	for i, s := range pl.sides {
		for g := range s.groups {
			c := make([]int32, s.groups+1)
			c[g] = 1
			out[i] = append(out[i], f(i, c))
		}
	}
	return out
}

// groupValues is the present values of metric m in the groups c counts,
// in a pooled buffer.
func (s *side) groupValues(m int, c []int32) []float64 {
	vals := getBuf(len(s.arm.vals[m]))[:0]
	for i, v := range s.arm.vals[m] {
		if !math.IsNaN(v) && int(s.stepGrp[i]) < s.groups && c[s.stepGrp[i]] > 0 {
			vals = append(vals, v)
		}
	}
	return vals
}

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

// bootCI sets c's bootstrap intervals (hulled with the jackknife-t's for
// the mean of a bootstrap plan).
func (e *metricEval) bootCI(c *Comparison, p float64, fBase statFunc, withRatio bool) {
	m, st := e.m, c.Stat
	base, pl := e.t.d.base, e.t.ci
	var und int
	var unbounded bool
	vals := func(i int) []float64 { return pl.quantileValues(i, m, p) }
	if st == StatMean {
		vals = func(i int) []float64 { return pl.meanValues(i, m) }
	}
	va, okA := pl.sides[0].constantMean(m)
	vb, okB := pl.sides[1].constantMean(m)
	if st == StatMean && okA && okB {
		c.RatioCI, c.DiffCI, und, unbounded = constantCompare(va, vb, pl.b, withRatio)
	} else {
		c.RatioCI, c.DiffCI, und, unbounded = bootCompareValues(pl, vals, pl.classes(), withRatio)
	}
	if und > 0 {
		e.flag(c, WarnUndefinedResamples, fmt.Sprintf("%d of %d resamples drew no present step in some arm; CIs use the rest", und, pl.b),
			map[string]float64{"undefined": float64(und), "b": float64(pl.b)})
	}
	if unbounded {
		e.flag(c, WarnUnboundedCI, "a resampled baseline value was 0: the ratio CI is unbounded and omitted", nil)
	}
	if st == StatMean && pl.method == MethodBootstrap {
		jr, jd := jackCompare(base, fBase, withRatio, true, e.cfg.confidence)
		c.JackknifeRatioCI = jr
		if (c.RatioCI != nil && jr != nil && skewed(logCI(*c.RatioCI), logCI(*jr))) ||
			(c.DiffCI != nil && jd != nil && skewed(*c.DiffCI, *jd)) {
			e.flag(c, WarnSkewedOrTailLimited, "the jackknife-t and bootstrap CIs disagree by more than 25% of the width", nil)
		}
		c.RatioCI, c.DiffCI = hullCI(c.RatioCI, jr), hullCI(c.DiffCI, jd)
	}
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
