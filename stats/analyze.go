package stats

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// armTask is the summary of one arm.
type armTask struct {
	a       *armData
	base    *plan // units or profiles
	ci      *plan // the plan whose CIs are reported: base, or batches (docs/statistics.md §4c)
	codes   []string
	warns   []Warning
	metrics []ArmMetric
	mwarns  [][]Warning
}

// cmpTask is one arm against the baseline.
type cmpTask struct {
	d          *comparisonDesign
	ci         *plan
	design     Design
	codes      []string
	warns      []Warning
	rows       [][]Comparison
	mwarns     [][]Warning
	components []Component
}

func analyze(key string, metrics []string, units []Unit, cfg *config) (*Result, error) {
	sorted, err := validateUnits(metrics, units, cfg)
	if err != nil {
		return nil, fmt.Errorf("analyze %q: %w", key, err)
	}
	order, byArm, err := armOrder(key, sorted, cfg.baseline)
	if err != nil {
		return nil, err
	}
	nm := len(metrics)
	metricSet := strings.Join(metrics, ",")
	tauMetrics := cfg.primaryIdx
	if len(tauMetrics) == 0 {
		tauMetrics = []int{0}
	}

	arms := make([]*armData, len(order))
	parallelFor(len(order), func(i int) {
		arms[i] = newArmData(order[i], byArm[order[i]], nm, cfg.primary, cfg.tune)
	})

	armTasks := make([]*armTask, len(arms))
	cmpTasks := make([]*cmpTask, len(arms)-1)
	parallelFor(len(arms)+len(cmpTasks), func(i int) {
		if i < len(arms) {
			armTasks[i] = newArmTask(key, metricSet, arms[i], i == 0, tauMetrics, cfg)
		} else {
			cmpTasks[i-len(arms)] = newCmpTask(key, metricSet, arms[0], arms[i-len(arms)+1], tauMetrics, cfg)
		}
	})
	evalTasks(armTasks, cmpTasks, metrics, cfg)
	res := collectResult(key, metrics, order[0], armTasks, cmpTasks, cfg)
	releaseTasks(armTasks, cmpTasks)
	return res, nil
}

// armOrder groups the units by arm: the baseline arm first (the first arm
// seen when baseline is empty), then the others in order of first
// appearance.
func armOrder(key string, sorted []*Unit, baseline string) (order []string, byArm map[string][]*Unit, err error) {
	var names []string
	byArm = map[string][]*Unit{}
	for _, u := range sorted {
		if _, ok := byArm[u.Arm]; !ok {
			names = append(names, u.Arm)
		}
		byArm[u.Arm] = append(byArm[u.Arm], u)
	}
	if baseline == "" {
		baseline = names[0]
	} else if _, ok := byArm[baseline]; !ok {
		return nil, nil, fmt.Errorf("analyze %q: baseline arm %q not among arms %q", key, baseline, names)
	}
	order = []string{baseline}
	for _, n := range names {
		if n != baseline {
			order = append(order, n)
		}
	}
	return order, byArm, nil
}

// evalTasks evaluates every arm and comparison metric (and the
// decompositions) in one pool of work items.
func evalTasks(armTasks []*armTask, cmpTasks []*cmpTask, metrics []string, cfg *config) {
	nm := len(metrics)
	for _, t := range armTasks {
		t.metrics = make([]ArmMetric, nm)
		t.mwarns = make([][]Warning, nm)
	}
	for _, t := range cmpTasks {
		t.rows = make([][]Comparison, nm)
		t.mwarns = make([][]Warning, nm)
	}
	// One pool of work items: the decompositions (the largest items, so
	// first), then every arm and comparison metric.
	nDec := 0
	if cfg.decompose != nil {
		nDec = len(cmpTasks)
	}
	nArm := len(armTasks) * nm
	parallelFor(nDec+nArm+len(cmpTasks)*nm, func(i int) {
		if i < nDec {
			cmpTasks[i].components = evalDecomposition(cmpTasks[i], metrics, cfg)
			return
		}
		i -= nDec
		if i < nArm {
			t, m := armTasks[i/nm], i%nm
			t.metrics[m], t.mwarns[m] = evalArmMetric(t, m, metrics[m], cfg)
			return
		}
		i -= nArm
		t, m := cmpTasks[i/nm], i%nm
		t.rows[m], t.mwarns[m] = evalComparison(t, m, metrics[m], cfg)
	})
}

// collectResult gathers the evaluated tasks into the Result, warnings in
// task order.
func collectResult(key string, metrics []string, baseline string, armTasks []*armTask, cmpTasks []*cmpTask, cfg *config) *Result {
	res := &Result{
		Key: key, Metrics: slices.Clone(metrics), Baseline: baseline,
		B: cfg.b, Seed: cfg.seed, Confidence: cfg.confidence,
		Arms: []ArmSummary{}, Designs: []Design{}, Comparisons: []Comparison{}, Warnings: []Warning{},
	}
	conditional := false
	for i, t := range armTasks {
		a := t.a
		res.Arms = append(res.Arms, ArmSummary{
			Arm: a.name, Baseline: i == 0, Units: len(a.units), Profiles: len(a.profiles), Steps: a.steps(),
			Level: t.ci.level, N: t.ci.n, Method: t.ci.method, Metrics: t.metrics,
		})
		res.Warnings = append(res.Warnings, t.warns...)
		for _, w := range t.mwarns {
			res.Warnings = append(res.Warnings, w...)
		}
		conditional = conditional || (t.base.level == LevelBlock && len(a.profiles) <= 2)
	}
	for _, t := range cmpTasks {
		res.Designs = append(res.Designs, t.design)
		res.Warnings = append(res.Warnings, t.warns...)
		for m, rows := range t.rows {
			res.Comparisons = append(res.Comparisons, rows...)
			res.Warnings = append(res.Warnings, t.mwarns[m]...)
		}
		res.Decomposition = append(res.Decomposition, t.components...)
		conditional = conditional || t.d.conditional
	}
	if conditional {
		res.Warnings = append(res.Warnings, Warning{
			Code: WarnConditionalOnProfiles,
			Message: "units are blocks inside at most 2 profiles: the CIs are conditional on those processes " +
				"and leave out run-to-run (process) variance; record more runs to include it",
		})
	}
	for _, c := range res.Comparisons {
		if (c.Method == MethodBootstrap || c.Method == MethodJackknife) && (c.RatioCI != nil || c.DiffCI != nil) {
			res.Cells++
		}
	}
	if len(res.Designs) > 0 {
		res.Method, res.N = res.Designs[0].Method, res.Designs[0].N
	} else {
		res.Method, res.N = res.Arms[0].Method, res.Arms[0].N
	}
	return res
}

// releaseTasks returns the tasks' plans' buffers.
func releaseTasks(armTasks []*armTask, cmpTasks []*cmpTask) {
	for _, t := range armTasks {
		t.ci.release()
		if t.base != t.ci {
			t.base.release()
		}
	}
	for _, t := range cmpTasks {
		t.ci.release()
		if t.d.base != t.ci {
			t.d.base.release()
		}
	}
}

func newArmTask(key, metricSet string, a *armData, isBaseline bool, tauMetrics []int, cfg *config) *armTask {
	t := &armTask{a: a, base: buildArmPlan(a, cfg.primary)}
	t.ci = t.base
	n := t.base.n
	switch t.base.method {
	case MethodJackknife:
		t.codes = append(t.codes, WarnLowReplication)
		t.warns = append(t.warns, Warning{Code: WarnLowReplication, Arm: a.name,
			Message: fmt.Sprintf("%d %ss: cluster jackknife-t CIs for means and medians only; they are wide", n, t.base.level),
			Values:  map[string]float64{"n": float64(n)}})
	case MethodWithinRun:
		all := make([]int, len(a.units))
		for i := range all {
			all[i] = i
		}
		m, tau := batchLength([]*armData{a}, [][]int{all}, tauMetrics)
		t.ci = batchPlan([]*armData{a}, [][]int{all}, m, cfg.primary)
		t.codes = append(t.codes, WarnNoReplication, WarnRunToRunExcluded)
		msg := fmt.Sprintf("within-run CI from %d batches of ≥ %d steps (τ̂ = %.3g): it leaves out run-to-run variance and is not a population CI", t.ci.n, m, tau)
		if t.ci.method == MethodNone {
			msg = fmt.Sprintf("fewer than %d batches of ≥ %d steps: no CI at all", minBatches, m)
		}
		t.warns = append(t.warns,
			Warning{Code: WarnNoReplication, Arm: a.name,
				Message: fmt.Sprintf("%d %s(s): no between-unit CI", n, t.base.level),
				Values:  map[string]float64{"n": float64(n)}},
			Warning{Code: WarnRunToRunExcluded, Arm: a.name, Message: msg,
				Values: map[string]float64{"batches": float64(t.ci.n), "batch_len": float64(m), "tau": tau}})
	}
	if g := t.base.sides[0]; g.groups >= 2 {
		sizes := make([]float64, g.groups)
		for _, grp := range g.stepGrp {
			if int(grp) < g.groups {
				sizes[grp]++
			}
		}
		lo, hi := slices.Min(sizes), slices.Max(sizes)
		if hi > 2*lo {
			t.warns = append(t.warns, Warning{Code: WarnUnequalUnits, Arm: a.name,
				Message: fmt.Sprintf("%s sizes differ more than 2×: %g to %g steps; the mean weights larger units more", t.base.level, lo, hi),
				Values:  map[string]float64{"min_steps": lo, "max_steps": hi}})
		}
	}
	if t.ci.method == MethodBootstrap || t.ci.method == MethodWithinRun {
		t.ci.draw(cfg.seed, key+"\x00"+metricSet+"\x00arm\x00"+a.name, cfg.b, cfg.confidence)
		t.ci.prepare()
	}
	return t
}

func newCmpTask(key, metricSet string, a0, a1 *armData, tauMetrics []int, cfg *config) *cmpTask {
	d := buildComparison(a0, a1, cfg.primary, cfg.stratified)
	t := &cmpTask{d: d, ci: d.base}
	n := d.base.n
	lo, hi := a0.name, a1.name
	if hi < lo {
		lo, hi = hi, lo
	}
	stream := key + "\x00" + metricSet + "\x00cmp\x00" + lo + "\x00" + hi
	add := func(code, msg string, vals map[string]float64) {
		t.codes = append(t.codes, code)
		t.warns = append(t.warns, Warning{Code: code, Arm: a1.name, Message: msg, Values: vals})
	}
	if d.nonInterleaved {
		add(WarnNonInterleaved, "arms were not run in alternating or randomised rounds: the comparison is confounded with time; resampled stratified (no pairing)", nil)
	}
	if len(d.dropped) > 0 {
		add(WarnUnmatchedUnit, fmt.Sprintf("left out of paired inference: %s", strings.Join(d.dropped, ", ")), nil)
	}
	if d.conditional {
		t.codes = append(t.codes, WarnConditionalOnProfiles)
	}
	switch d.base.method {
	case MethodJackknife:
		add(WarnLowReplication, fmt.Sprintf("%d resampled %ss: cluster jackknife-t CIs for means and medians only; they are wide", n, d.base.level),
			map[string]float64{"n": float64(n)})
	case MethodWithinRun:
		if n == 2 {
			add(WarnLowReplication, "2 resampled units: too few for a between-unit CI", map[string]float64{"n": 2})
		}
		m, tau := batchLength([]*armData{a0, a1}, d.included[:], tauMetrics)
		t.ci = batchPlan([]*armData{a0, a1}, d.included[:], m, cfg.primary)
		add(WarnNoReplication, fmt.Sprintf("%d resampled %s(s): no between-unit CI; per-unit values are listed", n, d.base.level),
			map[string]float64{"n": float64(n)})
		if t.ci.method == MethodWithinRun {
			add(WarnRunToRunExcluded, fmt.Sprintf("within-run CI from ≥ %d batches per arm of ≥ %d steps (τ̂ = %.3g): it leaves out run-to-run variance; no significance verdict", t.ci.n, m, tau),
				map[string]float64{"batches": float64(t.ci.n), "batch_len": float64(m), "tau": tau})
		} else {
			add(WarnRunToRunExcluded, fmt.Sprintf("fewer than %d batches of ≥ %d steps per arm: no CI at all", minBatches, m),
				map[string]float64{"batches": float64(t.ci.n), "batch_len": float64(m), "tau": tau})
		}
	}
	if t.ci.method == MethodBootstrap || t.ci.method == MethodWithinRun {
		t.ci.draw(cfg.seed, stream, cfg.b, cfg.confidence)
		t.ci.prepare()
	}
	t.design = Design{
		Arm: a1.name, Baseline: a0.name, Paired: d.base.paired, Level: d.base.level, N: n,
		BaselineUnits: len(a0.units), ArmUnits: len(a1.units), Profiles: d.profiles,
		Method: t.ci.method, Resamples: t.ci.b, Stream: streamSeed2(stream), Dropped: d.dropped,
	}
	return t
}

// quantileRule applies docs/statistics.md §3.4 to a p90/p99 CI: n ≥ 8 units and N·(1−p) ≥ 10
// steps beyond p in each arm; approximate below 50 for p99.
func quantileRule(p float64, n int, method string, present ...int) (ok bool, reason string, approx bool) {
	if method != MethodBootstrap && method != MethodWithinRun {
		return false, fmt.Sprintf("p%g CI needs the bootstrap (n ≥ 8 units), method is %s", 100*p, method), false
	}
	if n < 8 {
		return false, fmt.Sprintf("p%g CI needs ≥ 8 resampled units, have %d", 100*p, n), false
	}
	for _, np := range present {
		beyond := float64(np) * (1 - p)
		if beyond < 10 {
			return false, fmt.Sprintf("p%g CI needs N·(1−p) ≥ 10 steps beyond it, have N = %d (%.3g)", 100*p, np, beyond), false
		}
		if p >= 0.99 && beyond < 50 {
			approx = true
		}
	}
	return true, "", approx
}

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
		c.Verdict = VerdictOf(*c.RatioCI)
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

// parallelFor runs f(0..n−1) on up to GOMAXPROCS goroutines. Each call
// writes only its own result slot, so the outcome does not depend on
// scheduling.
func parallelFor(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}
