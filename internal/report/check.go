package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// The gate's result types live with its logic (internal/analysis/gate.go).
type (
	Gate    = analysis.Gate
	GateRow = analysis.GateRow
)

// Gate modes and outcomes, as the renderers name them.
const (
	ModeArms            = analysis.ModeArms
	ModeHistory         = analysis.ModeHistory
	ModeWithinRun       = analysis.ModeWithinRun
	OutcomeRegression   = analysis.OutcomeRegression
	OutcomePass         = analysis.OutcomePass
	OutcomeInconclusive = analysis.OutcomeInconclusive
)

// LimitText prints a limit fraction as the percentage it is: 0.05 → "+5%".
func LimitText(limit float64) string { return analysis.LimitText(limit) }

func writeGate(w io.Writer, g *Gate, f Format) error {
	switch g.Mode {
	case ModeHistory:
		return writeHistoryGate(w, g, f)
	case ModeWithinRun:
		return writeWithinRunGate(w, g, f)
	}
	head := fmt.Sprintf("%s: %s %s of %s, each arm vs %s, limit %s (%g%% CIs, B = %d, seed %d)",
		g.Status, g.Stat, g.Metric, g.Phase, g.Baseline, LimitText(g.Limit), 100*g.Confidence, g.Resamples, g.Seed)
	if f == Markdown {
		fmt.Fprintf(w, "**nsysphase check — %s**\n\n", export.EscapeMarkdown(head))
		fmt.Fprintln(w, "| arm | ratio | CI | change | outcome |")
		fmt.Fprintln(w, "|---|---:|---|---:|---|")
		for _, r := range g.Arms {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", escapeCell(rowLabel(g, r)), fmtRatio(r.Ratio), fmtCI(r.RatioCI), pctChange(r.RatioEstimate, r.Method), r.Outcome)
		}
		fmt.Fprintln(w)
		for _, r := range g.Arms {
			fmt.Fprintf(w, "- **%s** (%s, n = %d): %s\n", escapeCell(rowLabel(g, r)), r.Method, r.NUnits, export.EscapeMarkdown(r.Reason))
		}
		return nil
	}
	fmt.Fprintln(w, wrap(head, textWidth, "      "))
	for _, r := range g.Arms {
		line := fmt.Sprintf("  %s: ratio %s %s, %s, n = %d: %s — %s", rowLabel(g, r), fmtRatio(r.Ratio), fmtCI(r.RatioCI), r.Method, r.NUnits, r.Outcome, r.Reason)
		fmt.Fprintln(w, wrap(line, textWidth, "      "))
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

// writeHistoryGate renders check --history: each candidate arm against the
// history runs, with the t prediction interval, then one line per warning
// kind.
func writeHistoryGate(w io.Writer, g *Gate, f Format) error {
	// A dataset written before the one arm was named all has it blank.
	head := fmt.Sprintf("%s: %s %s of %s vs the history of %s, limit %s (%g%% t prediction intervals over runs, log scale)",
		g.Status, g.Stat, g.Metric, g.Phase, cmp.Or(g.Baseline, phases.SingleArm), LimitText(g.Limit), 100*g.Confidence)
	var kinds []string
	armsOf := map[string][]string{}
	for _, r := range g.Arms {
		for _, k := range r.History.Warnings {
			if armsOf[k] == nil {
				kinds = append(kinds, k)
			}
			armsOf[k] = appendNew(armsOf[k], r.Arm)
		}
	}
	warn := func(k string) string {
		return fmt.Sprintf("%s (%s): %s", k, strings.Join(armsOf[k], ", "), historyWarnings[k])
	}
	if f == Markdown {
		fmt.Fprintf(w, "**nsysphase check — %s**\n\n", head)
		fmt.Fprintln(w, "| arm | candidate | history | runs | run-to-run CV | ratio | interval | change | outcome |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---|---:|---|")
		for _, r := range g.Arms {
			h := r.History
			fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %s | %s | %s |\n", escapeCell(rowLabel(g, r)), fmtValue(h.CandidateValue, g.Metric), fmtValue(h.HistoryValue, g.Metric),
				h.HistoryRuns, fmtCV(h), fmtRatio(r.Ratio), fmtCI(r.RatioCI), pctChange(r.RatioEstimate, r.Method), r.Outcome)
		}
		fmt.Fprintln(w)
		for _, r := range g.Arms {
			fmt.Fprintf(w, "- **%s** (%s): %s\n", escapeCell(rowLabel(g, r)), historyNotes(r.History), export.EscapeMarkdown(r.Reason))
		}
		for _, k := range kinds {
			fmt.Fprintf(w, "- warning %s\n", warn(k))
		}
		return nil
	}
	fmt.Fprintln(w, wrap(head, textWidth, "  "))
	for _, r := range g.Arms {
		h := r.History
		line := fmt.Sprintf("  %s: %s vs %s (%s), ratio %s %s: %s — %s", rowLabel(g, r), fmtValue(h.CandidateValue, g.Metric), fmtValue(h.HistoryValue, g.Metric),
			historyNotes(h), fmtRatio(r.Ratio), fmtCI(r.RatioCI), r.Outcome, r.Reason)
		fmt.Fprintln(w, wrap(line, textWidth, "      "))
	}
	for _, k := range kinds {
		fmt.Fprintln(w, wrap("  warning "+warn(k), textWidth, "      "))
	}
	return nil
}

// historyWarnings explain the history warning kinds in one clause.
var historyWarnings = map[string]string{
	stats.WarnFewHistoryRuns:     "fewer than 5 history runs; the interval is exact only for normal run values, keep at least 5",
	stats.WarnHistoryStepsDiffer: "a candidate run has over 2× or under ½ the history's median kept steps, so its noise differs from the history's",
	stats.WarnHistoryTrend:       "the history runs drift with time; keep only runs of the current baseline",
	stats.WarnCandidateInHistory: "a candidate file is also in the history; it was left out of the history",
}

// historyNotes are the numbers behind a history interval.
func historyNotes(h *stats.HistoryComparison) string {
	s := fmt.Sprintf("%d history %s", h.HistoryRuns, plural.Of(h.HistoryRuns, "run", "runs"))
	if h.CandidateRuns != 1 {
		s += fmt.Sprintf(", %d candidate runs", h.CandidateRuns)
	}
	if h.RatioCI != nil {
		s += fmt.Sprintf(", CV %.1f%%, df %d", 100*h.CV, h.DF)
	}
	return s
}

func fmtCV(h *stats.HistoryComparison) string {
	if h.RatioCI == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*h.CV)
}

// fmtValue prints a statistic: µs for a _ns metric, else as it is.
func fmtValue(v float64, metric string) string {
	if v == 0 || v != v {
		return "-"
	}
	if strings.HasSuffix(metric, "_ns") {
		return fmt.Sprintf("%.1f µs", v/1e3)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// withinRunNote says in one sentence what a within-run result is.
const withinRunNote = "within-run: steps of one run per arm resampled in blocks; run-to-run variance is left out, so this compares these runs, not the code"

// writeWithinRunGate renders check --within-run, labelled on every line.
func writeWithinRunGate(w io.Writer, g *Gate, f Format) error {
	head := fmt.Sprintf("%s (within-run): %s %s of %s vs %s, limit %s (%g%% stationary bootstrap over steps, B = %d, seed %d)",
		g.Status, g.Stat, g.Metric, g.Phase, g.Baseline, LimitText(g.Limit), 100*g.Confidence, g.Resamples, g.Seed)
	notes := func(x *stats.WithinRunComparison) string {
		blocks := plural.Of(int(min(math.Round(x.Blocks), 2)), "block", "blocks")
		return fmt.Sprintf("within-run, %d vs %d %s, mean block length %s vs %s steps, %.0f %s", x.ArmSteps, x.BaselineSteps, plural.Of(x.BaselineSteps, "step", "steps"),
			blockLens(x.ArmBlocks), blockLens(x.BaselineBlocks), x.Blocks, blocks)
	}
	if f == Markdown {
		fmt.Fprintf(w, "**nsysphase check — %s**\n\n", head)
		fmt.Fprintln(w, "| arm | ratio | within-run interval | change | outcome |")
		fmt.Fprintln(w, "|---|---:|---|---:|---|")
		for _, r := range g.Arms {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s (within-run) |\n", escapeCell(rowLabel(g, r)), fmtRatio(r.Ratio), fmtCI(r.RatioCI), pctChange(r.RatioEstimate, r.Method), r.Outcome)
		}
		fmt.Fprintln(w)
		for _, r := range g.Arms {
			fmt.Fprintf(w, "- **%s** (%s): %s\n", escapeCell(rowLabel(g, r)), notes(r.WithinRun), export.EscapeMarkdown(r.Reason))
		}
		fmt.Fprintf(w, "- %s\n", withinRunNote)
		return nil
	}
	fmt.Fprintln(w, wrap(head, textWidth, "      "))
	for _, r := range g.Arms {
		line := fmt.Sprintf("  %s: ratio %s %s (%s): %s — %s", rowLabel(g, r), fmtRatio(r.Ratio), fmtCI(r.RatioCI), notes(r.WithinRun), r.Outcome, r.Reason)
		fmt.Fprintln(w, wrap(line, textWidth, "      "))
	}
	fmt.Fprintln(w, wrap("  "+withinRunNote, textWidth, "      "))
	return nil
}

// blockLens is the mean block length of a run's steps, or of an arm's
// blocks on average ("12.3 (mean of 8)") when it has several.
func blockLens(bs []float64) string {
	if len(bs) == 0 {
		return "-"
	}
	var sum float64
	for _, b := range bs {
		sum += b
	}
	v := strconv.FormatFloat(sum/float64(len(bs)), 'f', 1, 64)
	if len(bs) == 1 {
		return v
	}
	return fmt.Sprintf("%s (mean of %d)", v, len(bs))
}

// rowLabel names a gate row: its arm, or "phase / arm" when the gate
// covers several phases.
func rowLabel(g *Gate, r GateRow) string {
	arm := cmp.Or(r.Arm, phases.SingleArm)
	if r.Phase == "" || !strings.Contains(g.Phase, ", ") {
		return arm
	}
	return r.Phase + " / " + arm
}

// Its renderers (Generate finds them by the result type).
func init() {
	register(func(w io.Writer, g *Gate, f Format, _ Options) error { return writeGate(w, g, f) }, Text, Markdown)
}
