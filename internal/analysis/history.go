package analysis

// History: candidate runs against the datasets of earlier runs of the
// baseline (check --history, analyze --history), docs/statistics.md §11.
// A run is one profile (one export file); its statistic of a phase is taken
// over its kept steps of the arm, all its blocks together.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/stats"
)

// HistoryRow is one candidate arm's phase against the history of the
// baseline: the runs' statistics and the t prediction interval of
// stats.CompareHistory.
type HistoryRow struct {
	Phase      string `json:"phase"`
	Arm        string `json:"arm"`         // the candidate's arm
	HistoryArm string `json:"history_arm"` // the arm of the history runs it is compared with
	stats.HistoryComparison
}

// HistoryRuns are the history datasets, loaded for history comparisons.
type HistoryRuns struct {
	Dirs []string `json:"dirs"`
	// SkipSteps is the warm-up rule the runs were cut with: the
	// candidate's, whatever the datasets were written with.
	SkipSteps int `json:"skip_steps"`
	doc       *Doc
	looked    []string // NoHistory: the patterns that found no run
}

// HistoryFromFiles is the history of the exports of the datasets in dirs,
// read back by internal/dataset (LoadHistory, which labels each export
// DIR/FILE and refuses repeated runs), cut with the warm-up rule
// o.SkipSteps. No statistics run on them.
func HistoryFromFiles(ctx context.Context, dirs []string, files []*FileResult, o Options, version string) (*HistoryRuns, error) {
	d, err := Build(ctx, files, Options{NoStats: true, SkipSteps: o.SkipSteps}, version)
	if err != nil {
		return nil, err
	}
	return &HistoryRuns{Dirs: dirs, SkipSteps: o.SkipSteps, doc: d}, nil
}

// NoHistory is a history without runs (the first pull requests of a CI
// workflow, before any run of the baseline was kept): every comparison is
// inconclusive and passes. looked names what was searched, for the reason.
func NoHistory(looked []string) *HistoryRuns { return &HistoryRuns{Dirs: []string{}, looked: looked} }

// Arms are the history's arms (none without runs).
func (h *HistoryRuns) Arms() []string {
	if h.doc == nil {
		return nil
	}
	return h.doc.Arms
}

// RunValues returns, per arm, one run value per profile (file) of the
// statistic stat of metric on phase, in time order; nil when the phase is
// absent.
func (d *Doc) RunValues(phase, metric, stat string) (map[string][]stats.RunValue, error) {
	pi := slices.Index(d.Phases, phase)
	if pi < 0 || d.plan == nil {
		return nil, nil
	}
	mi := slices.Index(MetricNames(), metric)
	if mi < 0 {
		return nil, &UsageError{Err: fmt.Errorf("--metric %q: not a metric (metrics: %s)", metric, strings.Join(MetricNames(), ", "))}
	}
	units := d.plan.Units(pi)
	defer ReleaseUnits(units)
	type key struct{ arm, file string }
	steps := map[key][]float64{}
	start := map[key]int64{}
	var order []key
	for _, u := range units {
		k := key{u.Arm, u.Profile}
		if _, ok := steps[k]; !ok {
			order = append(order, k)
			start[k] = u.Start
		}
		steps[k] = append(steps[k], u.Steps[mi]...) // copied: the units' rows are released
		start[k] = min(start[k], u.Start)
	}
	out := map[string][]stats.RunValue{}
	for _, k := range order {
		v, n, err := stats.RunStatistic(steps[k], stat)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			v = math.NaN()
		}
		out[k.arm] = append(out[k.arm], stats.RunValue{Label: k.file, Start: start[k], Steps: n, Value: v})
	}
	for arm := range out {
		slices.SortStableFunc(out[arm], func(a, b stats.RunValue) int {
			if a.Start != b.Start {
				if a.Start < b.Start {
					return -1
				}
				return 1
			}
			return strings.Compare(a.Label, b.Label)
		})
	}
	return out, nil
}

// CompareWithHistory compares every arm of d on each phase with the history
// runs. A candidate arm is compared with the history runs of baseline when
// it is given, else of the same arm, else of the history's only arm. With
// no history run (NoHistory) each row has the candidate's own value and no
// interval, the reason naming what was searched; its history arm is
// baseline, else the arm itself.
func (d *Doc) CompareWithHistory(h *HistoryRuns, phaseNames []string, metric, stat, baseline string, confidence float64) ([]HistoryRow, error) {
	if h.doc != nil && baseline != "" && !slices.Contains(h.doc.Arms, baseline) {
		return nil, &UsageError{Err: fmt.Errorf("--baseline %q is not an arm of the history (history arms: %s)", baseline, strings.Join(h.doc.Arms, ", "))}
	}
	var out []HistoryRow
	for _, ph := range phaseNames {
		cand, err := d.RunValues(ph, metric, stat)
		if err != nil {
			return nil, err
		}
		var hist map[string][]stats.RunValue
		if h.doc != nil {
			if hist, err = h.doc.RunValues(ph, metric, stat); err != nil {
				return nil, err
			}
		}
		for _, arm := range d.Arms {
			runs := cand[arm]
			if len(runs) == 0 {
				continue
			}
			harm, err := h.armFor(arm, baseline)
			if err != nil {
				return nil, err
			}
			hr, dup := withoutCandidates(present(hist[harm]), runs)
			c, err := stats.CompareHistory(metric, stat, hr, runs, confidence)
			if err != nil {
				return nil, err
			}
			if dup {
				c.Warnings = append(c.Warnings, stats.WarnCandidateInHistory)
			}
			switch {
			case h.doc == nil:
				c.Reason = fmt.Sprintf("no history run yet (%s found no dataset): nothing to compare with", strings.Join(h.looked, ", "))
			case len(hist[harm]) == 0:
				c.Reason = fmt.Sprintf("the history has no run of phase %q in arm %q", ph, harm)
			}
			out = append(out, HistoryRow{Phase: ph, Arm: arm, HistoryArm: harm, HistoryComparison: *c})
		}
	}
	return out, nil
}

// armFor is the history arm a candidate arm is compared with: baseline
// when given, else the same arm, else the history's only arm (without
// history runs: baseline, else the arm itself).
func (h *HistoryRuns) armFor(arm, baseline string) (string, error) {
	if baseline != "" || h.doc == nil {
		return cmp.Or(baseline, arm), nil
	}
	switch {
	case slices.Contains(h.doc.Arms, arm):
		return arm, nil
	case len(h.doc.Arms) == 1:
		return h.doc.Arms[0], nil
	}
	return "", &UsageError{Err: fmt.Errorf("the history has arms %s and none is the candidate's arm %q: pass --baseline to name the history arm", strings.Join(h.doc.Arms, ", "), arm)}
}

// withoutCandidates drops from the history runs hr the recordings that are
// also candidate runs (same start on the capture clock, steps and value),
// and says whether it dropped any.
func withoutCandidates(hr, runs []stats.RunValue) ([]stats.RunValue, bool) {
	dup := false
	hr = slices.DeleteFunc(hr, func(r stats.RunValue) bool {
		in := slices.ContainsFunc(runs, func(c stats.RunValue) bool { return c.Start == r.Start && c.Steps == r.Steps && c.Value == r.Value })
		dup = dup || in
		return in
	})
	return hr, dup
}

// present drops runs whose statistic is absent (NaN: no step with the phase).
func present(rs []stats.RunValue) []stats.RunValue {
	return slices.DeleteFunc(slices.Clone(rs), func(r stats.RunValue) bool { return math.IsNaN(r.Value) })
}

// ArmSeries returns, per arm, the per-unit series of metric on phase over
// the kept steps (copied), units in time order; nil when the phase is absent.
func (d *Doc) ArmSeries(phase, metric string) (map[string][][]float64, error) {
	pi := slices.Index(d.Phases, phase)
	if pi < 0 || d.plan == nil {
		return nil, nil
	}
	mi := slices.Index(MetricNames(), metric)
	if mi < 0 {
		return nil, &UsageError{Err: fmt.Errorf("--metric %q: not a metric (metrics: %s)", metric, strings.Join(MetricNames(), ", "))}
	}
	units := d.plan.Units(pi)
	defer ReleaseUnits(units)
	out := map[string][][]float64{}
	for _, u := range units { // by arm, then start: time order within an arm
		out[u.Arm] = append(out[u.Arm], slices.Clone(u.Steps[mi]))
	}
	return out, nil
}

// WithinRunRow is one arm's phase against the baseline by the stationary
// bootstrap over the steps of their runs (analyze --within-run).
type WithinRunRow struct {
	Phase string `json:"phase"`
	*stats.WithinRunComparison
}

// CompareWithinRun compares every arm with the baseline on each phase by
// the stationary bootstrap over steps (docs/statistics.md §12), with the
// statistics settings the Doc was built with. With one arm there is
// nothing to compare: no rows, and a warning says so.
func (d *Doc) CompareWithinRun(phaseNames []string, metric, stat string) ([]WithinRunRow, error) {
	var out []WithinRunRow
	if len(d.Arms) < 2 {
		d.Warnings = append(d.Warnings, Warning{Code: WarnWithinRunOneArm, Message: fmt.Sprintf("--within-run compares arms with the baseline and these inputs hold one arm (%s): "+
			"no within-run comparison; record the baseline and the change as arms (NVTX ranges \"arm=NAME block=N\", --arm NAME=GLOB or --arm-key)", strings.Join(d.Arms, ", "))})
		return nil, nil
	}
	opt := d.opts.statsOptions("", nil, false)
	for _, ph := range phaseNames {
		series, err := d.ArmSeries(ph, metric)
		if err != nil {
			return nil, err
		}
		base := series[d.Baseline]
		if base == nil {
			continue
		}
		for _, arm := range d.Arms {
			if arm == d.Baseline || series[arm] == nil {
				continue
			}
			w, err := stats.CompareWithinRun(ph, metric, stat, d.Baseline, arm, base, series[arm], opt)
			if err != nil {
				return nil, fmt.Errorf("within-run comparison of phase %q: %w", ph, err)
			}
			out = append(out, WithinRunRow{Phase: ph, WithinRunComparison: w})
		}
	}
	return out, nil
}
