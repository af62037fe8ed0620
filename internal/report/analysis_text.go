package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/internal/dataset"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// textWidth is the width the default terminal output fits.
const textWidth = 120

// writeAnalysisText is the human report of analyze, read top-down in ten
// seconds: two lines of context, the headline (the step, and every phase
// that changed, per arm: ratio, CI, signed change), a compact breakdown in
// µs, where the differences come from, and the warnings, one line per kind.
// Markdown is the same content shaped for a pull-request comment: a short
// table on top, the rest folded in <details> blocks.
func writeAnalysisText(w io.Writer, doc *analysis.Doc, f Format, opt Options) error {
	tw := textSections{w: w, md: f == Markdown}
	if err := writeAnalysisHead(tw, doc, f, opt); err != nil {
		return err
	}
	if err := writeHistory(w, doc, f, opt.Wide); err != nil {
		return err
	}
	if err := writeWithinRun(w, doc, f, opt.Wide); err != nil {
		return err
	}
	if err := writeBreakdownSection(tw, doc, f, opt); err != nil {
		return err
	}
	if err := tw.list(fmt.Sprintf("Where each significant wall difference comes from (arm − %s, µs per step; %% of %s wall)", doc.Baseline, doc.Baseline),
		decompositionLines(doc, opt.Wide || tw.md)); err != nil {
		return err
	}
	if err := tw.list("Why phases wait (sync time split by what the process's GPUs ran; µs per instance)", gpuWaitNotes(doc)); err != nil {
		return err
	}
	if err := writeHardware(w, doc, f, opt, tw.section, tw.list); err != nil {
		return err
	}
	if rs := doc.Ranks; rs != nil {
		if err := tw.section(ranksTitle(rs), func() error { return writeRanks(w, doc, f, opt) }); err != nil {
			return err
		}
	}
	return writeWarningsSection(tw, doc, opt)
}

// textSections writes the report's sections: a titled block in text, a
// folded <details> block in Markdown.
type textSections struct {
	w  io.Writer
	md bool
}

// section writes title and then body's output.
func (tw textSections) section(title string, body func() error) error {
	if tw.md {
		fmt.Fprintf(tw.w, "\n<details><summary>%s</summary>\n\n", escapeSummary(title))
	} else {
		fmt.Fprintf(tw.w, "\n%s\n", title)
	}
	if err := body(); err != nil {
		return err
	}
	if tw.md {
		fmt.Fprintf(tw.w, "\n</details>\n")
	}
	return nil
}

// list is a section of lines: one bullet a line in Markdown, wrapped lines
// in text; nothing without lines.
func (tw textSections) list(title string, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	return tw.section(title, func() error {
		for _, l := range lines {
			if tw.md {
				fmt.Fprintf(tw.w, "- %s\n", escapeMarkdownText(l))
			} else {
				fmt.Fprintln(tw.w, wrap("  "+l, textWidth, "      "))
			}
		}
		return nil
	})
}

// writeAnalysisHead writes the title (Markdown), the context lines and the
// headline table with the phases that did not change.
func writeAnalysisHead(tw textSections, doc *analysis.Doc, f Format, opt Options) error {
	w, md := tw.w, tw.md
	if md {
		fmt.Fprintf(w, "### nsysphase analyze: %s\n\n", export.EscapeMarkdown(orNone(doc.Step)))
	}
	for _, l := range contextLines(doc, opt) {
		if md {
			fmt.Fprintf(w, "%s  \n", escapeMarkdownText(l))
		} else {
			fmt.Fprintln(w, wrap(l, textWidth, "  "))
		}
	}
	if md {
		fmt.Fprintln(w)
	}
	head := headline(doc)
	if head == nil {
		return nil
	}
	if !md {
		fmt.Fprintf(w, "\n%s\n", head.Doc)
	} else {
		fmt.Fprintf(w, "%s\n\n", escapeMarkdownText(head.Doc)) // names the baseline arm
	}
	if err := writeTable(w, head, f); err != nil {
		return err
	}
	if quiet := unchangedPhases(doc); quiet != "" {
		if md {
			fmt.Fprintf(w, "\n%s\n", escapeMarkdownText(quiet))
		} else {
			fmt.Fprintln(w, wrap(quiet, textWidth, "  "))
		}
	}
	return nil
}

// writeBreakdownSection writes the breakdown per step: the compact table,
// or every column with --wide.
func writeBreakdownSection(tw textSections, doc *analysis.Doc, f Format, opt Options) error {
	breakdown := compactBreakdown(doc)
	unit := "µs"
	if breakdown.NumColumns() > 2 {
		unit = breakdown.Column(2).Unit
	}
	title := fmt.Sprintf("Breakdown per step (mean %s, every column; cpu_other … other_api sum to wall, phases to the step)", unit)
	if opt.Wide {
		breakdown = wideBreakdown(doc)
		title = "Breakdown per step (mean µs; the six parts after wall sum to wall; phases and (unannotated) to the step)"
	}
	return tw.section(title, func() error {
		if err := writeTable(tw.w, breakdown, f); err != nil {
			return err
		}
		if !opt.Wide && hasOtherThreadRows(doc) {
			note := "rows named (… thread) are another thread's work during the step: beside its phases, outside its wall"
			if tw.md {
				fmt.Fprintf(tw.w, "\n%s\n", note)
			} else {
				fmt.Fprintln(tw.w, "  "+note)
			}
		}
		return nil
	})
}

// stepHow says which rule chose the step, its coverage and the runner-up
// (from the first input; "per input" when the inputs' rules differ).
func stepHow(doc *analysis.Doc) string {
	if len(doc.Inputs) == 0 {
		return "--step to choose"
	}
	c := doc.Inputs[0].StepChoice
	for _, in := range doc.Inputs[1:] {
		if in.StepChoice.Mode != c.Mode {
			return "chosen per input, see --format json step_choice; --step to choose"
		}
	}
	rule := c.Rule
	if rule == "" {
		rule = phases.RuleText(c.Mode)
	}
	switch c.Mode {
	case phases.StepGiven:
		return rule
	case phases.StepWholeProcess, phases.StepSingleShot:
		return rule + "; --step to choose"
	}
	how := fmt.Sprintf("%s, %s of traced time", rule, phases.SharePct(c.Coverage))
	if c.RunnerUp != "" {
		how += fmt.Sprintf("; runner-up %s", shortName(c.RunnerUp, 40))
	}
	return how + "; --step to choose"
}

// contextLines are the run's context in two lines: what was measured and
// how the step was chosen; the arms with their blocks and kept steps, what
// was left out, and what a CI is computed over.
func contextLines(doc *analysis.Doc, opt Options) []string {
	how := stepHow(doc)
	if opt.StepGiven {
		how = "named by --step or --config"
	}
	nPhases := max(len(doc.Phases)-1, 0)
	first := fmt.Sprintf("step %s (%s), %d %s, %d %s", orNone(doc.Step), how, nPhases, plural.Of(nPhases, "phase", "phases"), len(doc.Inputs), plural.Of(len(doc.Inputs), "input", "inputs"))
	if hasResults(doc) {
		first += fmt.Sprintf(", %g%% CIs over blocks (B = %d, seed %d)", 100*doc.Settings.Confidence, doc.Settings.Resamples, doc.Settings.Seed)
	} else if doc.StatsOff() {
		first += ", statistics off (--no-stats)"
	} else {
		first += ", no statistics (no kept steps to resample; see the warnings)"
	}
	var arms []string
	for _, a := range doc.Arms {
		label := a
		if a == doc.Baseline && len(doc.Arms) > 1 {
			label += " (baseline)"
		}
		if r := stepRow(doc, a); r != nil {
			if r.Steps%max(r.Blocks, 1) != 0 {
				label = fmt.Sprintf("%s %d blocks, %d %s", a, r.Blocks, r.Steps, plural.Of(r.Steps, "step", "steps"))
			} else {
				label += fmt.Sprintf(" %d %s × %s", r.Blocks, plural.Of(r.Blocks, "block", "blocks"), stepsOfRanks(r.Steps/max(r.Blocks, 1), rankCount(doc)))
			}
		}
		arms = append(arms, label)
	}
	armText := "arms: " + strings.Join(arms, "; ")
	if len(doc.Arms) == 0 || len(doc.Arms) == 1 && (doc.Arms[0] == "" || doc.Arms[0] == phases.SingleArm) {
		armText = "no arm ranges (one arm, " + phases.SingleArm + ")"
		arm := ""
		if len(doc.Arms) == 1 {
			arm = doc.Arms[0]
		}
		if r := stepRow(doc, arm); r != nil {
			armText += fmt.Sprintf(": %d %s, %s", r.Blocks, plural.Of(r.Blocks, "block", "blocks"), stepsOfRanks(r.Steps, rankCount(doc)))
		}
	}
	e := doc.Excluded
	var excl []string
	if e.WarmupSteps > 0 {
		excl = append(excl, fmt.Sprintf("%d warm-up", e.WarmupSteps))
	}
	if e.SkippedSteps > 0 {
		excl = append(excl, fmt.Sprintf("%d skipped (--skip-steps %d)", e.SkippedSteps, doc.Settings.SkipSteps))
	}
	if e.OutsideArmSteps > 0 {
		excl = append(excl, fmt.Sprintf("%d outside arm blocks", e.OutsideArmSteps))
	}
	if e.UnclosedRanges > 0 {
		excl = append(excl, fmt.Sprintf("%d unclosed %s", e.UnclosedRanges, plural.Of(e.UnclosedRanges, "range", "ranges")))
	}
	second := armText + "; left out: " + orNone(strings.Join(excl, ", "))
	lines := []string{first, second}
	if note, _ := ciCaveats(doc.Warnings, len(doc.Phases)); note != "" && !opt.AllWarnings {
		lines = append(lines, note)
	}
	return lines
}

func stepRow(doc *analysis.Doc, arm string) *analysis.SummaryRow {
	for i := range doc.Summary {
		if r := &doc.Summary[i]; r.Arm == arm && r.Phase == doc.Step {
			return r
		}
	}
	return nil
}

func hasResults(doc *analysis.Doc) bool {
	for _, r := range doc.Results() {
		if r != nil {
			return true
		}
	}
	return false
}

// meanWallComparisons are the mean wall comparisons, step first.
func meanWallComparisons(doc *analysis.Doc) []analysis.ComparisonRow {
	var out []analysis.ComparisonRow
	for _, c := range doc.Comparisons {
		if c.Metric == "wall_ns" && c.Stat == stats.StatMean {
			out = append(out, c)
		}
	}
	return out
}

// headline is the table a reader needs first: per arm, the step and every
// phase whose mean wall changed significantly, with the signed change.
func headline(doc *analysis.Doc) *export.Table {
	cs := meanWallComparisons(doc)
	if len(cs) == 0 {
		return nil
	}
	var top float64
	for _, c := range cs {
		top = max(top, abs(c.BaseValue), abs(c.ArmValue))
	}
	sc := scaleFor(top)
	t := export.NewTable("headline", fmt.Sprintf("Mean wall per step against %s (ratio = arm / %s; ~ = no significant change)", doc.Baseline, doc.Baseline),
		export.Column{Name: "phase", Type: export.TypeString},
		export.Column{Name: "arm", Type: export.TypeString},
		export.Column{Name: doc.Baseline + " " + sc.unit, Type: export.TypeFloat64},
		export.Column{Name: "arm " + sc.unit, Type: export.TypeFloat64},
		export.Column{Name: "ratio", Type: export.TypeString},
		export.Column{Name: fmt.Sprintf("%g%% CI", 100*doc.Settings.Confidence), Type: export.TypeString},
		export.Column{Name: "change", Type: export.TypeString},
	)
	short := distinctNames(doc.Phases, 28)
	for _, c := range cs {
		if c.Phase != doc.Step && c.Verdict != stats.VerdictChanged {
			continue
		}
		if _, ok := short[c.Phase]; !ok {
			short[c.Phase] = shortName(c.Phase, 28)
		}
		_ = t.AppendRow(export.Str(short[c.Phase]), export.Str(armLabel(doc.Arms, c.Arm, 16)), export.Float(round1(c.BaseValue/sc.ns)), export.Float(round1(c.ArmValue/sc.ns)),
			export.Str(fmtRatio(c.Ratio)), export.Str(strings.TrimPrefix(fmtCI(c.RatioCI), "(no CI)")), export.Str(changeText(c)))
	}
	return t
}

// unchangedPhases names the phases the headline leaves out.
func unchangedPhases(doc *analysis.Doc) string {
	var same, noCI []string
	for _, c := range meanWallComparisons(doc) {
		if c.Phase == doc.Step {
			continue
		}
		switch c.Verdict {
		case stats.VerdictUnchanged:
			same = appendNew(same, c.Phase)
		case stats.VerdictNone:
			noCI = appendNew(noCI, c.Phase)
		}
	}
	var parts []string
	if len(same) > 0 {
		parts = append(parts, fmt.Sprintf("~ no significant change: %s", strings.Join(same, ", ")))
	}
	if len(noCI) > 0 {
		parts = append(parts, fmt.Sprintf("no between-block CI (record more blocks): %s", strings.Join(noCI, ", ")))
	}
	return strings.Join(parts, "; ")
}

// changeText is a comparison's signed change, as benchstat prints it, with
// the word a reader wants: "-52.5% faster", "+8.7% slower", "~" when the CI
// includes no change, "no CI" when there is no between-unit CI (a within-run
// CI never proves a change).
func changeText(c analysis.ComparisonRow) string {
	switch {
	case c.Ratio == nil:
		return "-"
	case c.Verdict == stats.VerdictNone:
		return "no CI"
	case c.Verdict != stats.VerdictChanged:
		return stats.VerdictUnchanged.String()
	}
	word := "slower"
	if *c.Ratio < 1 {
		word = "faster"
	}
	if c.Metric != "wall_ns" {
		word = "higher"
		if *c.Ratio < 1 {
			word = "lower"
		}
	}
	return fmt.Sprintf("%+.1f%% %s", 100*(*c.Ratio-1), word)
}

// verdictText is a verdict as the tables print it: "no CI" for none.
func verdictText(v stats.Verdict) string {
	if v == stats.VerdictNone {
		return "no CI"
	}
	return v.String()
}

// pctChange is a gate row's ratio as a signed percent change: "~" when the
// CI includes 1, "no CI" without a between-unit CI.
func pctChange(r stats.RatioEstimate, method string) string {
	switch {
	case r.Ratio == nil:
		return "-"
	case r.RatioCI == nil || method == stats.MethodWithinRun:
		return "no CI"
	case r.IntervalVerdict() == stats.VerdictUnchanged:
		return stats.VerdictUnchanged.String()
	}
	return fmt.Sprintf("%+.1f%%", 100*(*r.Ratio-1))
}

// compactBreakdown is the breakdown that fits 120 columns: per step, each
// time column in µs, ms or s (whichever its largest value reads best in;
// the header names the unit), long names shortened but kept distinct, "—"
// for what was not measured. Rows of other threads' work come last: they
// ran beside the step, so they are outside its sum.
func compactBreakdown(doc *analysis.Doc) *export.Table {
	withCI := hasResults(doc) // no CI column with --no-stats
	armRank, phaseRank := map[string]int{}, map[string]int{}
	for i, a := range doc.Arms {
		armRank[a] = i
	}
	for i, p := range doc.Phases {
		phaseRank[p] = i
	}
	rows := slices.Clone(doc.Summary)
	slices.SortStableFunc(rows, func(a, b analysis.SummaryRow) int {
		if armRank[a.Arm] != armRank[b.Arm] {
			return armRank[a.Arm] - armRank[b.Arm]
		}
		return phaseRank[a.Phase] - phaseRank[b.Phase]
	})
	compactParts := phases.DefaultColumns()
	scale := make([]timeScale, len(compactParts))
	for i := range scale {
		scale[i] = breakdownScale(doc)
	}
	cols := []export.Column{{Name: "arm", Type: export.TypeString}, {Name: "phase", Type: export.TypeString}}
	for i, p := range compactParts {
		name := p.Info().Short // the unit, one for the table, is in its title
		cols = append(cols, export.Column{Name: name, Type: export.TypeFloat64, Unit: scale[i].unit, Nullable: true})
		if i == 0 && withCI {
			cols = append(cols, export.Column{Name: "wall CI", Type: export.TypeString, Nullable: true})
		}
	}
	t := export.NewTable("breakdown", "per step", cols...)
	short := distinctNames(doc.Phases, 28)
	for _, r := range rows {
		name, ok := short[r.Phase]
		if !ok {
			name = shortName(r.Phase, 28)
		}
		vals := []export.Value{export.Str(armLabel(doc.Arms, r.Arm, 12)), export.Str(name)}
		for i, p := range compactParts {
			s := r.Metrics[p.Name()]
			v := export.Null()
			if !s.Absent {
				v = export.Float(roundShown(s.Mean / scale[i].ns))
			}
			vals = append(vals, v)
			if i == 0 && withCI {
				ci := export.Null()
				if s.MeanCI != nil {
					ci = export.Str(fmt.Sprintf("[%.1f, %.1f]", s.MeanCI[0]/scale[i].ns, s.MeanCI[1]/scale[i].ns))
				}
				vals = append(vals, ci)
			}
		}
		_ = t.AppendRow(vals...)
	}
	return t
}

// hasOtherThreadRows reports rows of other threads' work (named "… thread)").
func hasOtherThreadRows(doc *analysis.Doc) bool {
	return slices.ContainsFunc(doc.Phases, phases.IsOtherThreadRow)
}

// timeScale is a column's display unit.
// breakdownScale is the compact breakdown's one unit, the one its largest
// value (a wall) reads best in: a row never mixes ms and µs, and the rank
// tables give walls in it too.
func breakdownScale(doc *analysis.Doc) timeScale {
	var top float64
	for _, p := range phases.DefaultColumns() {
		for _, r := range doc.Summary {
			if s := r.Metrics[p.Name()]; !s.Absent {
				top = max(top, abs(s.Mean))
			}
		}
	}
	return scaleFor(top)
}

type timeScale struct {
	unit string
	ns   float64 // nanoseconds per unit
}

// scaleFor picks the unit a column's largest value reads best in: µs below
// 10 ms, ms below 10 s, s above (a 430 s phase is "430.1 s", not
// "430089563" µs).
func scaleFor(topNs float64) timeScale {
	switch {
	case topNs >= 10e9:
		return timeScale{"s", 1e9}
	case topNs >= 10e6:
		return timeScale{"ms", 1e6}
	}
	return timeScale{"µs", 1e3}
}

// decompositionLines say per phase and arm where a mean wall difference
// comes from: the parts whose CI excludes 0, largest first, named without
// their _ns suffix (the values are µs). Only differences the headline calls
// significant, unless all (--wide, Markdown): then every phase, with CIs.
func decompositionLines(doc *analysis.Doc, all bool) []string {
	type key struct{ phase, arm string }
	changed := map[key]bool{}
	for _, c := range meanWallComparisons(doc) {
		changed[key{c.Phase, c.Arm}] = c.Verdict == stats.VerdictChanged
	}
	var order []key
	parts := map[key][]analysis.DecompositionRow{}
	for _, r := range doc.Decomposition {
		k := key{r.Phase, r.Arm}
		if r.Of != "" { // inner parts, outside the sum: waitSection says them
			continue
		}
		if !all && !changed[k] {
			continue
		}
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
		var restSum float64 // the parts not significant: the sum's remainder
		for _, r := range sortByAbs(rs) {
			name := strings.TrimSuffix(r.Component, "_ns")
			s := fmt.Sprintf("%s %+.1f", name, r.DiffNs/1e3)
			if r.DiffCI != nil && all {
				s += fmt.Sprintf(" [%+.1f, %+.1f]", r.DiffCI[0]/1e3, r.DiffCI[1]/1e3)
			}
			if r.DiffCI != nil && (r.DiffCI[0] > 0 || r.DiffCI[1] < 0) {
				sig = append(sig, s+fmt.Sprintf(" (%+.1f%%)", 100*r.Share))
				continue
			}
			rest = append(rest, s)
			restSum += r.DiffNs
		}
		line := fmt.Sprintf("%s, %s: %+.1f µs", k.phase, k.arm, total/1e3)
		switch {
		case len(sig) > 0:
			line += " = " + strings.Join(sig, ", ")
			switch {
			case len(rest) > 0 && all:
				line += "; not significant: " + strings.Join(rest, ", ")
			case len(rest) > 0:
				// The line adds up: the parts left out, summed.
				line += fmt.Sprintf(", others %+.1f, not significant", restSum/1e3)
			}
		case len(rest) > 0 && rs[0].DiffCI == nil:
			line += " (no between-block CI): " + strings.Join(rest, ", ")
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

// Its renderers (Generate finds them by the result type).
func init() {
	register(func(w io.Writer, d *analysis.Doc, f Format, opt Options) error {
		return writeAnalysisText(w, d, f, opt)
	}, Text, Markdown)
	register(func(w io.Writer, d *analysis.Doc, _ Format, opt Options) error { return writeHTML(w, d, opt) }, HTML)
	register(tableRenderer(dataset.SummaryTable, true), CSV, Parquet, Arrow)
}

// stepsOfRanks says how many steps there are: "19 steps × 2 ranks" where
// the rows pool ranks ranks' steps (2 ranks of 19 steps would read as 38),
// else "38 steps".
func stepsOfRanks(steps, ranks int) string {
	if ranks > 1 && steps%ranks == 0 {
		return fmt.Sprintf("%d %s × %d ranks", steps/ranks, plural.Of(steps/ranks, "step", "steps"), ranks)
	}
	return fmt.Sprintf("%d %s", steps, plural.Of(steps, "step", "steps"))
}

// rankCount is the number of ranks of the rank view (0 without one).
func rankCount(doc *analysis.Doc) int {
	if doc.Ranks == nil {
		return 0
	}
	return len(doc.Ranks.Ranks)
}
