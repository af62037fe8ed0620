package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/nsysphase/nsysphase/export"
)

// Gate is the outcome of `nsysphase check`: each arm against the baseline
// on one phase, metric and statistic.
type Gate struct {
	Status     string    `json:"status"` // PASS or FAIL
	Phase      string    `json:"phase"`
	Metric     string    `json:"metric"`
	Stat       string    `json:"stat"`
	Baseline   string    `json:"baseline"`
	Limit      float64   `json:"limit"` // largest tolerated slowdown, a fraction: 0.05 is +5%
	Confidence float64   `json:"confidence"`
	Resamples  int       `json:"resamples"`
	Seed       uint64    `json:"seed"`
	Arms       []GateRow `json:"arms"`
}

// Gate outcomes of one arm.
const (
	OutcomeRegression   = "regression"   // the whole ratio CI lies above 1 + limit
	OutcomePass         = "pass"         // the CI does not prove a regression
	OutcomeInconclusive = "inconclusive" // no between-unit CI: nothing can be proven either way (passes)
)

// GateRow is one arm's outcome.
type GateRow struct {
	Arm     string      `json:"arm"`
	Ratio   *float64    `json:"ratio"`
	RatioCI *[2]float64 `json:"ratio_ci"`
	Method  string      `json:"method"`
	NUnits  int         `json:"n_units"`
	Outcome string      `json:"outcome"`
	Reason  string      `json:"reason"`
}

// LimitText prints a limit fraction as the percentage it is: 0.05 → "+5%".
func LimitText(limit float64) string {
	return "+" + strconv.FormatFloat(100*limit, 'g', 4, 64) + "%"
}

func writeGate(w io.Writer, g *Gate, f Format) error {
	head := fmt.Sprintf("%s: %s %s of %s, each arm vs %s, limit %s (%g%% CIs, B = %d, seed %d)",
		g.Status, g.Stat, g.Metric, g.Phase, g.Baseline, LimitText(g.Limit), 100*g.Confidence, g.Resamples, g.Seed)
	if f == Markdown {
		fmt.Fprintf(w, "**nsysphase check — %s**\n\n", export.EscapeMarkdown(head))
		fmt.Fprintln(w, "| arm | ratio | CI | change | outcome |")
		fmt.Fprintln(w, "|---|---:|---|---:|---|")
		for _, r := range g.Arms {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", escapeCell(r.Arm), fmtRatio(r.Ratio), fmtCI(r.RatioCI), pctChange(r.Ratio, r.RatioCI, r.Method), r.Outcome)
		}
		fmt.Fprintln(w)
		for _, r := range g.Arms {
			fmt.Fprintf(w, "- **%s** (%s, n = %d): %s\n", escapeCell(r.Arm), r.Method, r.NUnits, export.EscapeMarkdown(r.Reason))
		}
		return nil
	}
	fmt.Fprintln(w, head)
	for _, r := range g.Arms {
		fmt.Fprintf(w, "  %s: ratio %s %s, %s, n = %d: %s — %s\n", r.Arm, fmtRatio(r.Ratio), fmtCI(r.RatioCI), r.Method, r.NUnits, r.Outcome, r.Reason)
	}
	return nil
}

func fmtRatio(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *p)
}

func fmtCI(c *[2]float64) string {
	if c == nil {
		return "(no CI)"
	}
	return fmt.Sprintf("[%.3f, %.3f]", c[0], c[1])
}

// escapeCell keeps a value inside its Markdown table cell.
func escapeCell(s string) string { return export.EscapeMarkdown(s) }
