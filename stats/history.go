package stats

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// History comparison (docs/statistics.md §11): one candidate run (or a few)
// against the earlier runs of the baseline, when each commit is profiled once.
//
// The unit is the run, as everywhere else the unit is the block or the
// profile: each run gives one number, its statistic (mean, median, p90 or
// p99 over its kept steps), and the runs' logarithms y_1 … y_n are taken as
// draws of N(μ, σ²), where σ² holds everything that moves a run: run-level
// effects (machine, clocks, allocator, placement) and the within-run noise of
// the statistic (autocorrelated steps, rare spikes), both as they were in the
// history. Nothing here treats a step as independent.
//
// With ȳ and s the mean and standard deviation of the history's logs and c̄
// the mean of the m candidate runs' logs, c̄ − ȳ ~ N(δ, σ²(1/m + 1/n)) where
// δ is the candidate's shift, so
//
//	δ ∈ c̄ − ȳ ± t_{n−1, 1−α/2} · s · √(1/m + 1/n)
//
// is an exact interval for the shift (a prediction interval for the
// candidate when δ = 0), and exp of it is the interval of the ratio
// candidate / history. A gate that fails only when its lower end exceeds
// 1 + limit alarms falsely with probability at most α/2 when the candidate
// is no slower than the history.

// Method labels of the comparisons outside the resampling ladder.
const (
	// MethodHistory is the t prediction interval of a new run against
	// earlier runs of the baseline (history).
	MethodHistory = "history-prediction-t"
)

// History warning codes.
const (
	WarnFewHistoryRuns     = "few_history_runs"     // fewer than MinHistoryRuns history runs
	WarnHistoryStepsDiffer = "history_steps_differ" // a candidate run's steps differ from the history's median by more than 2×
	WarnHistoryTrend       = "history_trend"        // the history runs drift in time: the spread overstates noise, or the baseline moves
	WarnCandidateInHistory = "candidate_in_history" // a candidate run was also a history run: left out of the history
)

// DefaultHistoryStat is the per-run statistic of the history gate unless
// asked otherwise: the run's median. Rare slow steps (a collection, a
// checkpoint) move a run's mean by several percent from run to run and
// hide a regression behind that spread; the median hardly notices them.
// On dgp.SlowStepRuns with 10 history runs the mean's run-to-run CV is
// 8.1% and the gate catches 43.5% of +25% regressions at
// --max-regression 5%, the median's 3.4% and 99.5%, with no more false
// alarms (docs/statistics.md §11, "Which statistic").
const DefaultHistoryStat = StatMedian

// MinHistoryRuns is the number of history runs the false-alarm rate is
// stated for; with 3 or 4 runs the interval is still exact under the model
// but wide and leans harder on normality (few_history_runs).
const MinHistoryRuns = 5

// RunValue is one run's statistic of one metric (HistoryComparison).
type RunValue struct {
	// Label names the run: its export, as DIR/FILE for a history dataset.
	Label string `json:"label"`
	// Start orders runs in time (the run's start on the capture clock, ns);
	// 0 when unknown.
	Start int64 `json:"start"`
	// Steps is the number of the run's present steps behind Value.
	Steps int `json:"steps"`
	// Value is the run's statistic, in the metric's unit.
	Value float64 `json:"value"`
}

// HistoryComparison is a candidate against the history runs of the
// baseline for one metric and statistic: the t prediction interval over
// runs on the log scale. Each run gives one value, its statistic over its
// steps, in the metric's unit; the history and candidate values are
// geometric means of those.
type HistoryComparison struct {
	// Metric is the metric compared.
	Metric string `json:"metric"`
	// Stat is the statistic of each run: "mean", "median", "p90" or "p99".
	Stat string `json:"stat"`
	// Method is MethodHistory, or MethodNone without an interval (Reason
	// says why).
	Method string `json:"method"`
	// Confidence is the interval's confidence level, e.g. 0.95.
	Confidence float64 `json:"confidence"`
	// HistoryRuns is n, the number of history runs used.
	HistoryRuns int `json:"history_runs"`
	// CandidateRuns is m, the number of candidate runs.
	CandidateRuns int `json:"candidate_runs"`
	// DF is the degrees of freedom of the t interval, n − 1; 0 without an
	// interval.
	DF int `json:"df"`
	// HistoryValue is the geometric mean of the history runs' values.
	HistoryValue float64 `json:"history_value"`
	// CandidateValue is the geometric mean of the candidate runs' values.
	CandidateValue float64 `json:"candidate_value"`
	// Ratio is CandidateValue / HistoryValue; nil when there are fewer
	// than 3 history runs or a run's value is zero or absent. RatioCI is
	// its prediction interval; nil as Ratio.
	RatioEstimate
	// LogSD is s, the run-to-run standard deviation of the history runs'
	// log values.
	LogSD float64 `json:"log_sd"`
	// CV is the run-to-run coefficient of variation LogSD implies,
	// √(e^{s²} − 1): the standard deviation of a run's value divided by
	// its mean (a fraction: 0.1 is 10%).
	CV float64 `json:"cv"`
	// T is the t statistic (c̄ − ȳ) / (s·√(1/m + 1/n)) with DF degrees of
	// freedom, where c̄ and ȳ are the mean log values of candidate and
	// history.
	T float64 `json:"t"`
	// Verdict is VerdictChanged (RatioCI excludes 1), VerdictUnchanged, or
	// VerdictNone without an interval.
	Verdict Verdict `json:"verdict"`
	// History are the history runs' values, in time order.
	History []RunValue `json:"history"`
	// Candidates are the candidate runs' values, in time order.
	Candidates []RunValue `json:"candidates"`
	// Warnings are the comparison's warning codes (few_history_runs,
	// history_steps_differ, history_trend, candidate_in_history); nil
	// when none.
	Warnings []string `json:"warnings,omitempty"`
	// Reason says why there is no interval; "" with one.
	Reason string `json:"reason,omitempty"`
}

// Clone is a deep copy: it shares no memory with h.
func (h *HistoryComparison) Clone() HistoryComparison {
	out := *h
	out.RatioEstimate = h.RatioEstimate.Clone()
	out.History, out.Candidates, out.Warnings = slices.Clone(h.History), slices.Clone(h.Candidates), slices.Clone(h.Warnings)
	return out
}

// RunStatistic is the statistic stat (mean, median, p90, p99) of one run's
// steps, NaN (absent) steps left out, with the number of present steps. The
// mean is the run's total over its steps; quantiles are Empirical. With no
// present step the value is NaN.
func RunStatistic(steps []float64, stat string) (float64, int, error) {
	vals := make([]float64, 0, len(steps))
	var sum float64
	for _, v := range steps {
		if math.IsNaN(v) {
			continue
		}
		if v < 0 || math.IsInf(v, 0) {
			return 0, 0, fmt.Errorf("run statistic: invalid duration %v", v)
		}
		vals = append(vals, v)
		sum += v
	}
	if len(vals) == 0 {
		return math.NaN(), 0, nil
	}
	switch stat {
	case StatMean:
		return sum / float64(len(vals)), len(vals), nil
	case StatMedian, StatP90, StatP99:
		slices.Sort(vals)
		p := map[string]float64{StatMedian: 0.5, StatP90: 0.9, StatP99: 0.99}[stat]
		return Quantile(p, vals), len(vals), nil
	}
	return 0, 0, fmt.Errorf("run statistic: unknown statistic %q", stat)
}

// CompareHistory compares candidate runs with history runs of one metric
// and statistic (see the comment at the top of history.go). confidence 0
// means 0.95. It needs at least 3 history runs and one candidate run, every
// value positive, for an interval; otherwise Method is MethodNone and Reason
// says why.
func CompareHistory(metric, stat string, history, candidates []RunValue, confidence float64) (*HistoryComparison, error) {
	if confidence == 0 {
		confidence = 0.95
	}
	if !(confidence > 0 && confidence < 1) {
		return nil, fmt.Errorf("history: confidence %v: want (0, 1)", confidence)
	}
	if len(candidates) == 0 {
		return nil, errors.New("history: no candidate run")
	}
	h := &HistoryComparison{Metric: metric, Stat: stat, Method: MethodNone, Confidence: confidence,
		HistoryRuns: len(history), CandidateRuns: len(candidates),
		History: slices.Clone(history), Candidates: slices.Clone(candidates)}
	slices.SortStableFunc(h.History, func(a, b RunValue) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), strings.Compare(a.Label, b.Label))
	})
	logs := func(rs []RunValue) ([]float64, bool) {
		out := make([]float64, len(rs))
		for i, r := range rs {
			if !(r.Value > 0) || math.IsInf(r.Value, 0) {
				return nil, false
			}
			out[i] = math.Log(r.Value)
		}
		return out, true
	}
	hy, okH := logs(h.History)
	cy, okC := logs(h.Candidates)
	if okH && len(hy) > 0 {
		h.HistoryValue = math.Exp(meanOf(hy))
	}
	if okC {
		h.CandidateValue = math.Exp(meanOf(cy))
	}
	switch {
	case len(history) < 3:
		h.Reason = fmt.Sprintf("%d history %s: at least 3 are needed for a run-to-run spread (%d for the stated false-alarm rate)", len(history), plural.Of(len(history), "run", "runs"), MinHistoryRuns)
		return h, nil
	case !okH || !okC:
		h.Reason = "a run's statistic is zero or absent: the comparison is made on the log scale"
		return h, nil
	}
	r := h.CandidateValue / h.HistoryValue
	h.Ratio = &r
	n, m := float64(len(hy)), float64(len(cy))
	ybar := meanOf(hy)
	var ss float64
	for _, y := range hy {
		ss += (y - ybar) * (y - ybar)
	}
	s := math.Sqrt(ss / (n - 1))
	h.LogSD = s
	h.CV = math.Sqrt(math.Expm1(s * s))
	h.DF = len(hy) - 1
	d := meanOf(cy) - ybar
	se := s * math.Sqrt(1/m+1/n)
	t := studentT(n-1, 1-(1-confidence)/2)
	ci := [2]float64{math.Exp(d - t*se), math.Exp(d + t*se)}
	h.RatioCI = &ci
	h.Method = MethodHistory
	if se > 0 {
		h.T = d / se
	}
	h.Verdict = h.IntervalVerdict()
	if len(hy) < MinHistoryRuns {
		h.Warnings = append(h.Warnings, WarnFewHistoryRuns)
	}
	steps := make([]float64, len(h.History))
	for i, r := range h.History {
		steps[i] = float64(r.Steps)
	}
	slices.Sort(steps)
	med := Quantile(0.5, steps)
	for _, c := range h.Candidates {
		if med > 0 && (float64(c.Steps) > 2*med || 2*float64(c.Steps) < med) {
			h.Warnings = append(h.Warnings, WarnHistoryStepsDiffer)
			break
		}
	}
	if historyTrend(h.History, hy, confidence) {
		h.Warnings = append(h.Warnings, WarnHistoryTrend)
	}
	return h, nil
}

// Regression reports whether the candidate is proven slower than the
// history by more than limit (a fraction: 0.05 is +5%): the whole ratio
// interval lies above 1 + limit.
func (h *HistoryComparison) Regression(limit float64) bool {
	return h.Above(1 + limit)
}

// historyTrend reports whether the history's log values have an OLS slope
// against run order whose t interval excludes 0 (needs 5 runs).
func historyTrend(runs []RunValue, ys []float64, confidence float64) bool {
	n := len(ys)
	if n < MinHistoryRuns {
		return false
	}
	xbar := float64(n-1) / 2
	ybar := meanOf(ys)
	var sxx, sxy float64
	for i, y := range ys {
		dx := float64(i) - xbar
		sxx += dx * dx
		sxy += dx * (y - ybar)
	}
	b := sxy / sxx
	var sse float64
	for i, y := range ys {
		e := y - ybar - b*(float64(i)-xbar)
		sse += e * e
	}
	se := math.Sqrt(sse / float64(n-2) / sxx)
	if se == 0 {
		return b != 0
	}
	return math.Abs(b/se) > studentT(float64(n-2), 1-(1-confidence)/2)
}

func meanOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TQuantile is t_{ν, p}, the Student t quantile the history interval uses.
func TQuantile(nu, p float64) float64 { return studentT(nu, p) }
