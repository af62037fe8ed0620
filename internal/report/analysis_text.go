package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/stats"
)

func writeAnalysisText(w io.Writer, doc *analysis.Doc, f Format, opt Options) error {
	md := f == Markdown
	h := func(s string) {
		if md {
			fmt.Fprintf(w, "\n### %s\n\n", s)
		} else {
			fmt.Fprintf(w, "\n%s\n", s)
		}
	}
	inputs := make([]string, len(doc.Inputs))
	for i, in := range doc.Inputs {
		inputs[i] = in.File
	}
	if md {
		fmt.Fprintf(w, "## nsysphase analyze\n\n")
	}
	fmt.Fprintf(w, "inputs: %s\n", strings.Join(inputs, ", "))
	if md {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "step %q, %d phases; arms %s (baseline %s); excluded: %d warm-up-range steps, %d skipped first steps per block, %d steps outside arm blocks, %d unclosed ranges\n",
		doc.Step, len(doc.Phases)-1, strings.Join(doc.Arms, ", "), doc.Baseline, doc.Excluded.WarmupSteps, doc.Excluded.SkippedSteps, doc.Excluded.OutsideArmSteps, doc.Excluded.UnclosedRanges)
	if md {
		fmt.Fprintln(w)
	}
	if len(doc.Results()) > 0 && doc.Results()[0] != nil {
		r := doc.Results()[0]
		fmt.Fprintf(w, "statistics: unit = block or profile (never the step); %g%% CIs; B = %d resamples; seed %d; %s with n = %d units\n",
			100*doc.Settings.Confidence, doc.Settings.Resamples, doc.Settings.Seed, r.Method, r.N)
	} else {
		fmt.Fprintf(w, "statistics: off (--no-stats): point values only\n")
	}
	h("Breakdown (mean per step instance; µs)")
	if err := writeTable(w, doc.BreakdownTable(), f); err != nil {
		return err
	}
	if len(doc.Comparisons) > 0 {
		h(fmt.Sprintf("Comparisons with %s: wall_ns mean (ratio = arm / baseline; ~ = no significant change)", doc.Baseline))
		t := export.NewTable("wall", "",
			export.Column{Name: "phase", Type: export.TypeString},
			export.Column{Name: "arm", Type: export.TypeString},
			export.Column{Name: "baseline µs", Type: export.TypeFloat64},
			export.Column{Name: "arm µs", Type: export.TypeFloat64},
			export.Column{Name: "ratio", Type: export.TypeString, Nullable: true},
			export.Column{Name: "CI", Type: export.TypeString, Nullable: true},
			export.Column{Name: "verdict", Type: export.TypeString},
			export.Column{Name: "method", Type: export.TypeString},
			export.Column{Name: "n", Type: export.TypeInt64},
		)
		for _, c := range doc.Comparisons {
			if c.Metric != "wall_ns" || c.Stat != stats.StatMean {
				continue
			}
			ratio, cis := export.Null(), export.Null()
			if c.Ratio != nil {
				ratio = export.Str(fmt.Sprintf("%.3f", *c.Ratio))
			}
			if c.RatioCI != nil {
				cis = export.Str(fmt.Sprintf("[%.3f, %.3f]", c.RatioCI[0], c.RatioCI[1]))
			}
			verdict := c.Verdict
			if verdict == "" {
				verdict = "no CI"
			}
			_ = t.AppendRow(export.Str(c.Phase), export.Str(c.Arm), export.Float(round1(c.BaseValue/1e3)), export.Float(round1(c.ArmValue/1e3)), ratio, cis, export.Str(verdict), export.Str(c.Method), export.Int(int64(c.NUnits)))
		}
		if err := writeTable(w, t, f); err != nil {
			return err
		}
	}
	if len(doc.Decomposition) > 0 {
		h("Where each mean wall difference comes from (arm − baseline, µs per step; CI; share of baseline wall)")
		for _, line := range decompositionLines(doc) {
			if md {
				fmt.Fprintf(w, "- %s\n", line)
			} else {
				fmt.Fprintf(w, "  %s\n", line)
			}
		}
	}
	if len(doc.Warnings) > 0 {
		writeAnalysisWarnings(w, doc.Warnings, h)
	}
	return nil
}

// writeAnalysisWarnings prints the warnings a reader must see — those about inputs,
// arms and wall time — in full, and counts the rest by code: per-metric
// diagnostics on forty metrics would otherwise bury them. JSON has them all.
func writeAnalysisWarnings(w io.Writer, ws []analysis.Warning, h func(string)) {
	// Identical diagnostics of several phases (the design's replication,
	// say) print once with the phases they concern.
	type group struct {
		w      analysis.Warning
		phases []string
	}
	var shown []*group
	byKey := map[string]*group{}
	rest := map[string]int{}
	nShown := 0
	for _, wr := range ws {
		if wr.Metric != "" && wr.Metric != "wall_ns" {
			rest[wr.Code]++
			continue
		}
		nShown++
		key := wr.Code + "\x00" + wr.Arm + "\x00" + wr.Metric + "\x00" + wr.Message
		g := byKey[key]
		if g == nil {
			g = &group{w: wr}
			byKey[key] = g
			shown = append(shown, g)
		}
		if wr.Phase != "" && !slices.Contains(g.phases, wr.Phase) {
			g.phases = append(g.phases, wr.Phase)
		}
	}
	h(fmt.Sprintf("Warnings (%d: %d on inputs, arms and wall_ns below; all in --format json)", len(ws), nShown))
	const limit = 25
	for i, g := range shown {
		if i == limit {
			fmt.Fprintf(w, "  … %d more\n", len(shown)-limit)
			break
		}
		where := strings.Join(g.phases, ", ")
		if len(g.phases) > 3 {
			where = fmt.Sprintf("%d phases", len(g.phases))
		}
		scope := strings.Trim(strings.Join([]string{where, g.w.Arm, g.w.Metric}, " "), " ")
		if scope != "" {
			scope = " [" + scope + "]"
		}
		fmt.Fprintf(w, "  %s%s: %s\n", g.w.Code, scope, g.w.Message)
	}
	if len(rest) > 0 {
		codes := make([]string, 0, len(rest))
		for c := range rest {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		parts := make([]string, len(codes))
		for i, c := range codes {
			parts[i] = fmt.Sprintf("%s ×%d", c, rest[c])
		}
		fmt.Fprintf(w, "  on other metrics: %s\n", strings.Join(parts, ", "))
	}
}

func round1(v float64) float64 { return float64(int64(v*10+copysignHalf(v))) / 10 }

func copysignHalf(v float64) float64 {
	if v < 0 {
		return -0.5
	}
	return 0.5
}

// decompositionLines says per phase and arm where the mean wall difference
// comes from: the parts whose CI excludes 0, largest first.
func decompositionLines(doc *analysis.Doc) []string {
	type key struct{ phase, arm string }
	var order []key
	parts := map[key][]analysis.DecompositionRow{}
	for _, r := range doc.Decomposition {
		k := key{r.Phase, r.Arm}
		if _, ok := parts[k]; !ok {
			order = append(order, k)
		}
		parts[k] = append(parts[k], r)
	}
	var out []string
	for _, k := range order {
		rs := parts[k]
		var total float64
		for _, r := range rs {
			total += r.DiffNs
		}
		var sig, rest []string
		for _, r := range sortByAbs(rs) {
			s := fmt.Sprintf("%s %+.1f", r.Component, r.DiffNs/1e3)
			if r.DiffCI != nil {
				s += fmt.Sprintf(" [%+.1f, %+.1f]", r.DiffCI[0]/1e3, r.DiffCI[1]/1e3)
				if r.DiffCI[0] > 0 || r.DiffCI[1] < 0 {
					sig = append(sig, s+fmt.Sprintf(" (%+.1f%%)", 100*r.Share))
					continue
				}
			}
			rest = append(rest, s)
		}
		line := fmt.Sprintf("%s, %s: %+.1f µs/step", k.phase, k.arm, total/1e3)
		switch {
		case len(sig) > 0:
			line += " = " + strings.Join(sig, ", ")
			if len(rest) > 0 {
				line += "; not significant: " + strings.Join(rest, ", ")
			}
		case len(rest) > 0 && rs[0].DiffCI == nil:
			line += " (no between-unit CI): " + strings.Join(rest, ", ")
		default:
			line += ": no part differs significantly (~)"
		}
		out = append(out, line)
	}
	return out
}

func sortByAbs(rs []analysis.DecompositionRow) []analysis.DecompositionRow {
	out := append([]analysis.DecompositionRow(nil), rs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && abs(out[j].DiffNs) > abs(out[j-1].DiffNs); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// pctChange is a ratio as a signed percent change, as benchstat prints it:
// "+4.2%" when the CI excludes 1, "~" when it does not, "no CI" without one.
func pctChange(ratio *float64, ci *[2]float64) string {
	switch {
	case ratio == nil:
		return "-"
	case ci == nil:
		return "no CI"
	case ci[0] <= 1 && ci[1] >= 1:
		return "~"
	}
	return fmt.Sprintf("%+.1f%%", 100*(*ratio-1))
}
