package analysis

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nsysphase/nsysphase/stats"
)

// The CI gate of `nsysphase check`: each arm (or candidate run) against the
// baseline (or the baseline's history), on the chosen phases, metric and
// statistic; FAIL only for a proven regression beyond the limit. The
// command line and the Go API call these; internal/report renders a Gate.

// Gate is the outcome of `nsysphase check`: each arm against the baseline
// on one phase, metric and statistic.
type Gate struct {
	Status     GateStatus `json:"status"` // GatePass or GateFail
	Mode       string     `json:"mode"`   // ModeArms, ModeHistory or ModeWithinRun
	Phase      string     `json:"phase"`
	Metric     string     `json:"metric"`
	Stat       string     `json:"stat"`
	Baseline   string     `json:"baseline"`
	Limit      float64    `json:"limit"` // largest tolerated slowdown, a fraction: 0.05 is +5%
	Confidence float64    `json:"confidence"`
	Resamples  int        `json:"resamples"`
	Seed       uint64     `json:"seed"`
	// HistoryDirs are the datasets of the history runs (ModeHistory).
	HistoryDirs []string  `json:"history_dirs,omitempty"`
	Arms        []GateRow `json:"arms"`
}

// Gate modes: what each arm is compared with.
const (
	ModeArms      = "arms"       // the baseline arm of the same inputs (blocks or files as units)
	ModeHistory   = "history"    // the datasets of earlier baseline runs (check --history)
	ModeWithinRun = "within-run" // one run per arm, steps resampled in blocks (check --within-run)
)

// GateStatus is a gate's result: it fails only for a proven regression.
type GateStatus string

// Gate statuses.
const (
	GatePass GateStatus = "PASS"
	GateFail GateStatus = "FAIL" // some arm's whole ratio CI lies above 1 + limit
)

// Outcome is what a gate says of one arm.
type Outcome string

// Gate outcomes of one arm.
const (
	OutcomeRegression   Outcome = "regression"   // the whole ratio CI lies above 1 + limit
	OutcomePass         Outcome = "pass"         // the CI does not prove a regression
	OutcomeInconclusive Outcome = "inconclusive" // no between-unit CI: nothing can be proven either way (passes)
)

// GateRow is one arm's outcome.
type GateRow struct {
	Phase string `json:"phase"`
	Arm   string `json:"arm"`
	stats.RatioEstimate
	Method  string  `json:"method"`
	NUnits  int     `json:"n_units"`
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"reason"`
	// History is the comparison with the history runs (ModeHistory).
	History *stats.HistoryComparison `json:"history,omitempty"`
	// WithinRun is the stationary-bootstrap comparison (ModeWithinRun).
	WithinRun *stats.WithinRunComparison `json:"within_run,omitempty"`
}

// LimitText prints a limit fraction as the percentage it is: 0.05 → "+5%".
func LimitText(limit float64) string {
	return "+" + strconv.FormatFloat(100*limit, 'g', 4, 64) + "%"
}

// judge places a row's ratio interval (not nil) against bound: a
// regression, failing the gate, when it lies wholly above; else a pass. The
// three reasons say which, in the words of the gate's mode.
func (g *Gate) judge(r *GateRow, bound float64, above, straddles, below string) {
	switch {
	case r.Above(bound):
		r.Outcome, r.Reason, g.Status = OutcomeRegression, above, GateFail
	case r.RatioCI[1] > bound:
		r.Reason = straddles
	default:
		r.Reason = below
	}
}

// GateSpec is what a gate judges: the phases, metric and statistic, the
// largest tolerated slowdown and the statistics settings.
type GateSpec struct {
	Phases     []string
	Metric     string
	Stat       string
	Limit      float64 // a fraction: 0.05 tolerates +5%
	Confidence float64
	Resamples  int
	Seed       uint64
}

// KnownPhases refuses phases the document does not have.
func KnownPhases(doc *Doc, phs []string) error {
	for _, ph := range phs {
		if !slices.Contains(doc.Phases, ph) {
			return usage("--phases %q: not a phase of these inputs (phases: %s)", ph, strings.Join(doc.Phases, ", "))
		}
	}
	return nil
}

// OneArmSentence says in one sentence what check needs when the inputs
// hold a single arm.
func OneArmSentence(arms []string) string {
	what := "one arm"
	if len(arms) == 1 && arms[0] != "" {
		what = fmt.Sprintf("one arm (%s)", arms[0])
	} else if len(arms) == 1 {
		what = "one arm (no arm ranges)"
	}
	return fmt.Sprintf("check compares arms with a baseline and these inputs hold %s: record the baseline and the change as arms "+
		"(NVTX ranges \"arm=NAME block=N\", --arm NAME=GLOB or --arm-key), or gate this run against earlier runs with --history DIR", what)
}

// HistoryGate judges each candidate arm against its history: a regression
// only when the whole interval lies above 1 + limit.
func HistoryGate(rows []HistoryRow, h *HistoryRuns, o GateSpec) *Gate {
	g := &Gate{Status: GatePass, Mode: ModeHistory, Phase: strings.Join(o.Phases, ", "), Metric: o.Metric, Stat: o.Stat, Limit: o.Limit,
		Confidence: o.Confidence, HistoryDirs: h.Dirs, Arms: []GateRow{}}
	bound := 1 + o.Limit
	limit := LimitText(o.Limit)
	for i := range rows {
		r := &rows[i]
		c := &r.HistoryComparison
		if g.Baseline == "" {
			g.Baseline = r.HistoryArm
		} else if g.Baseline != r.HistoryArm {
			g.Baseline = "each arm's own"
		}
		row := GateRow{Phase: r.Phase, Arm: r.Arm, RatioEstimate: c.RatioEstimate, Method: c.Method, NUnits: c.HistoryRuns, Outcome: OutcomePass, History: c}
		if c.RatioCI == nil {
			row.Outcome = OutcomeInconclusive
			row.Reason = c.Reason + ": a regression cannot be proven"
		} else {
			g.judge(&row, bound,
				fmt.Sprintf("the whole interval lies above %.3f: %s is proven slower than the history of %s by more than %s", bound, r.Arm, r.HistoryArm, limit),
				fmt.Sprintf("the interval reaches above %.3f and below it: not proven", bound),
				fmt.Sprintf("the interval lies below %.3f", bound))
		}
		g.Arms = append(g.Arms, row)
	}
	return g
}

// ArmsGate judges each arm. Only a between-unit CI can prove a regression: a
// within-run CI (one file or one block per arm) leaves out run-to-run
// variance, so, like analyze's "no CI", it is inconclusive and passes.
func ArmsGate(doc *Doc, o GateSpec) (*Gate, error) {
	if err := KnownPhases(doc, o.Phases); err != nil {
		return nil, err
	}
	if !slices.Contains(MetricNames(), o.Metric) {
		return nil, usage("--metric %q: not a metric (metrics: %s)", o.Metric, strings.Join(MetricNames(), ", "))
	}
	if len(doc.Arms) < 2 {
		return nil, usage("%s", OneArmSentence(doc.Arms))
	}
	g := &Gate{Status: GatePass, Mode: ModeArms, Phase: strings.Join(o.Phases, ", "), Metric: o.Metric, Stat: o.Stat, Baseline: doc.Baseline, Limit: o.Limit,
		Confidence: o.Confidence, Resamples: o.Resamples, Seed: o.Seed, Arms: []GateRow{}}
	bound := 1 + o.Limit
	limit := LimitText(o.Limit)
	for _, c := range doc.Comparisons {
		if !slices.Contains(o.Phases, c.Phase) || c.Metric != o.Metric || c.Stat != o.Stat {
			continue
		}
		r := GateRow{Phase: c.Phase, Arm: c.Arm, RatioEstimate: c.RatioEstimate, Method: c.Method, NUnits: c.NUnits, Outcome: OutcomePass}
		switch {
		case c.RatioCI == nil:
			r.Outcome = OutcomeInconclusive
			r.Reason = fmt.Sprintf("no between-unit CI (%s, n = %d): a regression cannot be proven; record more blocks or runs", c.Method, c.NUnits)
		case c.Method == stats.MethodWithinRun:
			r.Outcome = OutcomeInconclusive
			r.Reason = fmt.Sprintf("within-run CI [%.3f, %.3f] only (one block or file per arm): it leaves out run-to-run variance and cannot prove a regression; record more blocks or runs", c.RatioCI[0], c.RatioCI[1])
		default:
			g.judge(&r, bound,
				fmt.Sprintf("the whole CI lies above %.3f: %s is proven slower than %s by more than %s", bound, c.Arm, c.Baseline, limit),
				fmt.Sprintf("the CI reaches above %.3f but also below it: not proven", bound),
				fmt.Sprintf("the CI lies below %.3f", bound))
		}
		g.Arms = append(g.Arms, r)
	}
	for _, ph := range o.Phases {
		if !slices.ContainsFunc(g.Arms, func(r GateRow) bool { return r.Phase == ph }) && len(o.Phases) > 1 {
			g.Arms = append(g.Arms, GateRow{Phase: ph, Arm: "-", Method: stats.MethodNone, Outcome: OutcomeInconclusive,
				Reason: fmt.Sprintf("no comparison: the baseline %s or every other arm lacks this phase", doc.Baseline)})
		}
	}
	if len(g.Arms) == 0 {
		return nil, usage("nothing to compare for phases %s, metric %q, stat %q: the baseline %q lacks them", strings.Join(o.Phases, ", "), o.Metric, o.Stat, doc.Baseline)
	}
	return g, nil
}

// WithinRunGate judges each arm against the baseline with the stationary
// bootstrap over the steps of their runs (check --within-run): within these
// runs only.
func WithinRunGate(doc *Doc, o GateSpec) (*Gate, error) {
	g := &Gate{Status: GatePass, Mode: ModeWithinRun, Phase: strings.Join(o.Phases, ", "), Metric: o.Metric, Stat: o.Stat, Baseline: doc.Baseline, Limit: o.Limit,
		Confidence: o.Confidence, Resamples: o.Resamples, Seed: o.Seed, Arms: []GateRow{}}
	bound := 1 + o.Limit
	for _, ph := range o.Phases {
		series, err := doc.ArmSeries(ph, o.Metric)
		if err != nil {
			return nil, err
		}
		for _, arm := range doc.Arms {
			if arm == doc.Baseline || series[arm] == nil || series[doc.Baseline] == nil {
				continue
			}
			w, err := stats.CompareWithinRun(ph, o.Metric, o.Stat, doc.Baseline, arm, series[doc.Baseline], series[arm],
				stats.Options{Confidence: o.Confidence, Resamples: o.Resamples, Seed: o.Seed})
			if err != nil {
				return nil, err
			}
			r := GateRow{Phase: ph, Arm: arm, RatioEstimate: w.RatioEstimate, Method: w.Method, NUnits: len(series[arm]), Outcome: OutcomePass, WithinRun: w}
			if w.RatioCI == nil {
				r.Outcome = OutcomeInconclusive
				r.Reason = "within-run: no interval (a zero statistic)"
				if w.Reason != "" {
					r.Reason = "within-run: no interval: " + w.Reason
				}
			} else {
				g.judge(&r, bound,
					fmt.Sprintf("within-run: the whole interval lies above %.3f: this run of %s is slower than this run of %s by more than %s", bound, arm, doc.Baseline, LimitText(o.Limit)),
					fmt.Sprintf("within-run: the interval reaches above %.3f and below it: not proven", bound),
					fmt.Sprintf("within-run: the interval lies below %.3f", bound))
			}
			g.Arms = append(g.Arms, r)
		}
	}
	return g, nil
}
