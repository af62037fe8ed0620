package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/stats"
)

// Warnings in words: the CI caveats said once on top, and the rest one
// line per kind (or each, with --warnings).

// writeWarningsSection writes the warnings: one line per kind, or each
// with --warnings; the CI caveats already on top are not repeated.
func writeWarningsSection(tw textSections, doc *analysis.Doc, opt Options) error {
	ws := doc.Warnings
	title := fmt.Sprintf("Warnings (%d, by kind; --warnings or --format json lists each)", len(ws))
	if opt.AllWarnings {
		title = fmt.Sprintf("Warnings (%d)", len(ws))
	} else if _, rest := ciCaveats(ws, len(doc.Phases)); len(rest) < len(ws) {
		title = fmt.Sprintf("Warnings (%d more than the CI caveats on top, by kind; --warnings or --format json lists each)", len(rest))
		ws = rest
	}
	if len(ws) == 0 {
		return nil
	}
	lines := warningLines(ws, opt.AllWarnings)
	if !opt.AllWarnings && len(lines) > maxWarningLines-1 {
		lines = append(lines[:maxWarningLines-2], fmt.Sprintf("… %d more kinds (--warnings)", len(lines)-(maxWarningLines-2)))
	}
	return tw.section(title, func() error {
		for _, l := range lines {
			switch {
			case tw.md:
				fmt.Fprintf(tw.w, "- %s\n", escapeMarkdownText(l))
			case opt.AllWarnings:
				fmt.Fprintln(tw.w, wrap("  "+l, textWidth, "    "))
			default:
				// One line a kind; the whole sentence is in --warnings
				// and JSON. With one input its name is in the context.
				if len(doc.Inputs) == 1 {
					l = strings.Replace(l, doc.Inputs[0].File+": ", "", 1)
				}
				fmt.Fprintln(tw.w, clip("  "+l, textWidth))
			}
		}
		return nil
	})
}

// caveatWords say each statistical caveat that can hold for most phases in
// a few words, for the CI's method note.
var caveatWords = map[string]string{
	stats.WarnTailLimitedMean: "a few slow steps carry the mean (its CI may be too narrow; the median is steadier)",
	stats.WarnLowReplication:  "few blocks (wide CIs, for means and medians only)",
	stats.WarnAutocorrelation: "consecutive steps are correlated (hence blocks, not steps, as the unit)",
	oneRunKey:                 "blocks of one or two runs: the CIs leave out run-to-run variance (record more runs to include it)",
}

// ciCaveats moves the statistical caveats that hold for at least half of
// the phases out of the warnings into one method note ("CIs: …"): a caveat
// on most rows is a property of the CIs, not 160 warnings. rest are the
// warnings left to list.
func ciCaveats(ws []analysis.Warning, phases int) (note string, rest []analysis.Warning) {
	key := func(code string) string {
		if slices.Contains(oneRunCodes, code) {
			return oneRunKey
		}
		return code
	}
	seen := map[string][]string{}
	noBlockCI := false
	for _, w := range ws {
		k := key(w.Code)
		if _, ok := caveatWords[k]; ok && w.Phase != "" {
			seen[k] = appendNew(seen[k], w.Phase)
		}
		noBlockCI = noBlockCI || w.Code == stats.WarnNoReplication
	}
	var parts []string
	moved := map[string]bool{}
	for _, k := range []string{oneRunKey, stats.WarnLowReplication, stats.WarnTailLimitedMean, stats.WarnAutocorrelation} {
		if n := len(seen[k]); n > 0 && 2*n >= phases {
			moved[k] = true
			words := caveatWords[k]
			if k == oneRunKey && noBlockCI {
				words = "one or two blocks per arm: no between-block CI (record more runs or blocks)"
			}
			parts = append(parts, words)
		}
	}
	for _, w := range ws {
		if !moved[key(w.Code)] {
			rest = append(rest, w)
		}
	}
	if len(parts) == 0 {
		return "", ws
	}
	return "CIs, for most phases: " + strings.Join(parts, "; ") + " (--warnings lists each)", rest
}

// warningLines are the warnings one line per code with a count and the
// phases and arms they concern, in plain words; all lists each one.
func warningLines(ws []analysis.Warning, all bool) []string {
	if all {
		out := make([]string, len(ws))
		for i, wr := range ws {
			scope := strings.TrimSpace(strings.Join([]string{wr.Phase, wr.Arm, wr.Metric}, " "))
			if scope != "" {
				scope = " [" + strings.Join(strings.Fields(scope), " ") + "]"
			}
			out[i] = fmt.Sprintf("%s%s: %s", wr.Code, scope, wr.Message)
		}
		return out
	}
	type group struct {
		code         string
		n            int
		phases, arms []string
		first        string
		codes        []string // the codes merged into the group (oneRunKey)
	}
	var order []*group
	byCode := map[string]*group{}
	for _, wr := range ws {
		key := wr.Code
		if slices.Contains(oneRunCodes, key) {
			key = oneRunKey // the three say one thing: merged into one line
		}
		g := byCode[key]
		if g == nil {
			g = &group{code: key, first: wr.Message}
			byCode[key] = g
			order = append(order, g)
		}
		g.n++
		g.codes = appendNew(g.codes, wr.Code)
		if wr.Phase != "" {
			g.phases = appendNew(g.phases, wr.Phase)
		}
		if wr.Arm != "" {
			g.arms = appendNew(g.arms, wr.Arm)
		}
	}
	out := make([]string, 0, len(order))
	for _, g := range order {
		if g.code == oneRunKey {
			var codes []string // in a fixed order, those that fired
			for _, c := range oneRunCodes {
				if slices.Contains(g.codes, c) {
					codes = append(codes, c)
				}
			}
			what := "the CIs leave out run-to-run variance: record more runs to include it"
			if slices.Contains(codes, stats.WarnNoReplication) {
				what = "no between-block CI: record more runs or blocks"
			}
			out = append(out, fmt.Sprintf("%d× %s (%s)", g.n, what, strings.Join(codes, ", ")))
			continue
		}
		what, ok := warningWords[g.code]
		if !ok {
			what = g.first // an input or segmentation warning says itself
		}
		scope := func(named bool) string {
			where := ""
			switch {
			case len(g.phases) > 3 || (len(g.phases) > 1 && !named):
				where = fmt.Sprintf(" (%d phases", len(g.phases))
			case len(g.phases) > 0:
				where = " (" + strings.Join(g.phases, ", ")
			}
			if len(g.arms) > 0 {
				if where == "" {
					where = " ("
				} else {
					where += "; "
				}
				where += strings.Join(g.arms, ", ")
			}
			if where != "" {
				where += ")"
			}
			return where
		}
		line := fmt.Sprintf("%d× %s: %s%s", g.n, g.code, what, scope(true))
		if displayLen("  "+line) > textWidth { // one line a kind: count the phases instead
			line = fmt.Sprintf("%d× %s: %s%s", g.n, g.code, what, scope(false))
		}
		out = append(out, line)
	}
	return out
}

// oneRunCodes are the warnings that all say "one or two runs, no
// between-run CI"; the grouped listing gives them one line (oneRunKey).
var oneRunCodes = []string{stats.WarnNoReplication, stats.WarnRunToRunExcluded, stats.WarnConditionalOnProfiles}

const oneRunKey = "\x00one-run"

// warningWords say each statistics warning in plain words.
var warningWords = map[string]string{
	stats.WarnTailLimitedMean:       "a few very slow steps carry the mean: its CI may be too narrow; compare medians (check --stat median)",
	stats.WarnAutocorrelation:       "consecutive steps are correlated (the CIs are over blocks, not steps: nothing to do)",
	stats.WarnHeadEffect:            "the first steps of each block are slower: raise --skip-steps",
	stats.WarnDrift:                 "times drift across the run: alternate the arms in short blocks, or warm up longer",
	stats.WarnNonInterleaved:        "the arms ran one after the other: drift can bias the comparison; alternate them in blocks",
	stats.WarnUnequalUnits:          "blocks hold unequal numbers of steps: record blocks of equal length",
	stats.WarnLowReplication:        "few blocks: wide CIs, for means and medians only",
	stats.WarnNoReplication:         "one or two blocks per arm: no between-block CI; record more blocks",
	stats.WarnQuantileCIOmitted:     "too few steps for p90/p99 CIs",
	stats.WarnRunToRunExcluded:      "the CI comes from one run: it leaves out run-to-run variance",
	stats.WarnConditionalOnProfiles: "blocks from one or two processes: the CIs leave out run-to-run variance",
	stats.WarnSkewedOrTailLimited:   "skewed times: the mean's CI may be off; compare medians",
	stats.WarnUnmatchedUnit:         "a trailing block has no partner in the other arm and is left out of paired comparisons",
	stats.WarnApproximateQuantileCI: "quantile CIs are approximate (few steps in the tail)",
	stats.WarnUndefinedResamples:    "some resamples had no step with the phase",
	stats.WarnMetricAbsent:          "an arm never shows this metric",
	stats.WarnUnboundedCI:           "a ratio CI is unbounded (the baseline can be zero)",
	stats.WarnNotRequested:          "quantile CIs were not asked for (--quantiles)",
}
