package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/stats"
)

// historyTable is analyze --history's comparison: per arm, the step and
// every phase whose wall (each run's statistic, the median by default) left its history's spread (all phases with
// all), with the run-to-run CV behind each interval.
func historyTable(doc *analysis.Doc, all bool) *export.Table {
	if len(doc.History) == 0 {
		return nil
	}
	var bases []string
	for _, r := range doc.History {
		bases = appendNew(bases, r.HistoryArm)
	}
	stat := cmp.Or(doc.History[0].Stat, stats.StatMean)
	t := export.NewTable("history", fmt.Sprintf("%s%s wall per step against the history of %s (ratio = run / history; %g%% t prediction intervals over runs)",
		strings.ToUpper(stat[:1]), stat[1:], strings.Join(bases, ", "), 100*doc.History[0].Confidence),
		export.Column{Name: "phase", Type: export.TypeString},
		export.Column{Name: "arm", Type: export.TypeString},
		export.Column{Name: "history µs", Type: export.TypeFloat64},
		export.Column{Name: "run µs", Type: export.TypeFloat64},
		export.Column{Name: "runs", Type: export.TypeInt64},
		export.Column{Name: "CV", Type: export.TypeString},
		export.Column{Name: "ratio", Type: export.TypeString},
		export.Column{Name: "interval", Type: export.TypeString},
		export.Column{Name: "change", Type: export.TypeString},
	)
	for _, r := range doc.History {
		if !all && r.Phase != doc.Step && r.Verdict != stats.VerdictChanged {
			continue
		}
		_ = t.AppendRow(export.Str(clip(r.Phase, 28)), export.Str(armLabel(doc.Arms, r.Arm, 16)), export.Float(round1(r.HistoryValue/1e3)), export.Float(round1(r.CandidateValue/1e3)),
			export.Int(int64(r.HistoryRuns)), export.Str(fmtCV(&r.HistoryComparison)), export.Str(fmtRatio(r.Ratio)),
			export.Str(strings.TrimPrefix(fmtCI(r.RatioCI), "(no CI)")), export.Str(pctChange(r.RatioEstimate, r.Method)))
	}
	return t
}

// historyNotesLines name the phases the history table leaves out and the
// history warnings, one line per kind with the arms it concerns.
func historyNotesLines(doc *analysis.Doc, all bool) []string {
	var same, none []string
	var kinds []string
	armsOf := map[string][]string{}
	for _, r := range doc.History {
		for _, k := range r.Warnings {
			if armsOf[k] == nil {
				kinds = append(kinds, k)
			}
			if !slices.Contains(armsOf[k], r.Arm) {
				armsOf[k] = append(armsOf[k], r.Arm)
			}
		}
		if all || r.Phase == doc.Step {
			continue
		}
		switch r.Verdict {
		case stats.VerdictUnchanged:
			same = appendNew(same, r.Phase)
		case stats.VerdictNone:
			none = appendNew(none, r.Phase)
		}
	}
	var out []string
	if len(same) > 0 {
		out = append(out, "~ within the history's spread: "+strings.Join(same, ", "))
	}
	if len(none) > 0 {
		out = append(out, "no interval (too few history runs with the phase): "+strings.Join(none, ", "))
	}
	for _, k := range kinds {
		out = append(out, fmt.Sprintf("%s (%s): %s", k, strings.Join(armsOf[k], ", "), historyWarnings[k]))
	}
	return out
}

// writeHistory writes the history comparison of analyze (text or Markdown).
func writeHistory(w io.Writer, doc *analysis.Doc, f Format, all bool) error {
	t := historyTable(doc, all)
	if t == nil {
		return nil
	}
	md := f == Markdown
	if md {
		fmt.Fprintf(w, "\n%s\n\n", t.Doc)
	} else {
		fmt.Fprintf(w, "\n%s\n", wrap(t.Doc, textWidth, "  "))
	}
	if err := writeTable(w, t, f); err != nil {
		return err
	}
	for _, l := range historyNotesLines(doc, all) {
		if md {
			fmt.Fprintf(w, "- %s\n", escapeMarkdownText(l))
		} else {
			fmt.Fprintln(w, wrap("  "+l, textWidth, "      "))
		}
	}
	return nil
}

// writeWithinRun writes analyze --within-run's comparison: per arm, the
// step and every phase whose within-run interval excludes 1 (all with
// all), each line labelled within-run.
func writeWithinRun(w io.Writer, doc *analysis.Doc, f Format, all bool) error {
	if len(doc.WithinRun) == 0 {
		return nil
	}
	t, same, short := withinRunTable(doc, all)
	return writeWithinRunTable(w, t, same, short, f)
}

// withinRunTable is the within-run comparison's table, the phases it
// leaves out as unchanged (all: every phase) and those left out for want
// of an interval (too few steps for their autocorrelation).
func withinRunTable(doc *analysis.Doc, all bool) (*export.Table, []string, []string) {
	r0 := doc.WithinRun[0]
	t := export.NewTable("within_run", fmt.Sprintf("Within-run: mean wall per step against %s (%g%% stationary bootstrap over steps, B = %d, seed %d)",
		doc.Baseline, 100*r0.Confidence, r0.B, r0.Seed),
		export.Column{Name: "phase", Type: export.TypeString},
		export.Column{Name: "arm", Type: export.TypeString},
		export.Column{Name: doc.Baseline + " µs", Type: export.TypeFloat64},
		export.Column{Name: "arm µs", Type: export.TypeFloat64},
		export.Column{Name: "block len", Type: export.TypeString},
		export.Column{Name: "ratio", Type: export.TypeString},
		export.Column{Name: "within-run interval", Type: export.TypeString},
		export.Column{Name: "change", Type: export.TypeString},
	)
	var same, short []string
	for _, r := range doc.WithinRun {
		moved := r.IntervalVerdict() == stats.VerdictChanged // a within-run interval: a move, not a verdict
		if !all && r.Phase != doc.Step && r.RatioCI == nil && r.Reason != "" {
			short = appendNew(short, r.Phase)
			continue
		}
		if !all && r.Phase != doc.Step && !moved {
			same = appendNew(same, r.Phase)
			continue
		}
		_ = t.AppendRow(export.Str(clip(r.Phase, 28)), export.Str(armLabel(doc.Arms, r.Arm, 16)), export.Float(round1(r.BaselineValue/1e3)), export.Float(round1(r.ArmValue/1e3)),
			export.Str(blockLens(r.BaselineBlocks)+" | "+blockLens(r.ArmBlocks)), export.Str(fmtRatio(r.Ratio)),
			export.Str(strings.TrimPrefix(fmtCI(r.RatioCI), "(no CI)")), export.Str(pctChange(r.RatioEstimate, r.Method)))
	}
	return t, same, short
}

func writeWithinRunTable(w io.Writer, t *export.Table, same, short []string, f Format) error {
	md := f == Markdown
	if md {
		fmt.Fprintf(w, "\n%s\n\n", t.Doc)
	} else {
		fmt.Fprintf(w, "\n%s\n", wrap(t.Doc, textWidth, "  "))
	}
	if err := writeTable(w, t, f); err != nil {
		return err
	}
	lines := []string{withinRunNote}
	if len(short) > 0 {
		lines = append([]string{"within-run: no interval, too few steps for their autocorrelation (record longer runs): " + strings.Join(short, ", ")}, lines...)
	}
	if len(same) > 0 {
		lines = append([]string{"within-run ~ (interval includes 1): " + strings.Join(same, ", ")}, lines...)
	}
	for _, l := range lines {
		if md {
			fmt.Fprintf(w, "- %s\n", escapeMarkdownText(l))
		} else {
			fmt.Fprintln(w, wrap("  "+l, textWidth, "      "))
		}
	}
	return nil
}
