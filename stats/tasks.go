package stats

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// The tasks of one Analyze call: one per arm (its summary) and one per
// arm against the baseline (its comparisons), each with its plans, built
// in arm order and evaluated in parallel, then collected into the Result in
// that order.

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
				Message: fmt.Sprintf("%d %s: no between-unit CI", n, plural.Of(n, t.base.level, t.base.level+"s")),
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
		add(WarnNoReplication, fmt.Sprintf("%d resampled %s: no between-unit CI; per-unit values are listed", n, plural.Of(n, d.base.level, d.base.level+"s")),
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
