package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/internal/dataset"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

//go:embed report.html.tmpl
var pageTemplate string

var tmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"f1":      func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"sub":     func(a, b float64) float64 { return a - b },
	"plotEnd": func(x, w float64) float64 { return x + w },
	"plural":  plural.Of[int],
}).Parse(pageTemplate))

// Options tunes a rendering.
type Options struct {
	// Tool names the tool and version in the footer, e.g. "nsysphase v1.2.0".
	Tool string
	// Title overrides the page title.
	Title string
	// Tables are further tables (host-sync inventory, capture-boundary
	// verdict, …) rendered after the built-in sections, in order.
	Tables []*export.Table

	// Metadata is the provenance written into Parquet and Arrow outputs.
	Metadata map[string]string
	// Wide prints every column of the analyze breakdown on a terminal
	// instead of the compact one that fits 120 columns.
	Wide bool
	// Hotspots lists each phase's top host functions by CPU samples.
	Hotspots bool
	// AllWarnings lists every warning instead of one line per code.
	AllWarnings bool
	// StepGiven says the step was named (--step, --config), not chosen.
	StepGiven bool
	// Top limits the per-kernel and per-API rows of info (0: all).
	Top int
}

// Part is one exclusive part of wall time, in the order the bars stack.
type Part struct {
	Metric phases.Metric
	Label  string
	Color  string
}

// Parts are the six parts of wall, each with its colour (Okabe–Ito, safe for
// colour-blind readers).
var Parts = []Part{
	{phases.CPUOther, "cpu_other", "#56B4E9"},
	{phases.Launch, "launch", "#E69F00"},
	{phases.SyncAPI, "sync", "#D55E00"},
	{phases.MemcpyAPI, "memcpy_api", "#009E73"},
	{phases.Alloc, "alloc", "#CC79A7"},
	{phases.OtherAPI, "other_api", "#7F7F7F"},
}

type page struct {
	Title, Tool     string
	Inputs          []string
	Step            string
	NPhases         int
	Arms            []string
	Baseline        string
	NoArms          bool // no arm ranges: the one arm has no name
	Stats           string
	Excluded        string
	Legend          []legend
	StepChart       *barChart
	PhaseChart      *barChart
	Forest          *forest
	StepWall        []*stepWallPlot // each arm's step wall over the run
	Breakdown       *htmlTable
	WallComparisons *htmlTable
	Significant     *htmlTable
	Decomposition   *htmlTable
	WaitNotes       []string // gpuWaitNotes
	RankTitle       string   // says what the ranks section holds
	RankNotes       []string // the ranks section's context (nil without ranks)
	Ranks           *htmlTable
	RankPhases      *htmlTable
	RankHeat        []*heatMap
	RankComparisons *htmlTable
	Provenance      *htmlTable
	WarningCounts   []warnCount
	Warnings        *htmlTable
	Extra           []*htmlTable
	Utilisation     []htmlUtilBar
	GPUTimeline     *htmlTimeline
}

type legend struct{ Label, Color, Doc string }

type warnCount struct {
	Code string
	N    int
}

// writeHTML renders doc as one HTML page: inline SVG plots and tables, no
// scripts, no fonts or styles fetched from anywhere, so the file can be
// attached to a CI run or mailed and opened offline.
func writeHTML(w io.Writer, doc *analysis.Doc, opt Options) error {
	p := &page{Tool: opt.Tool, Title: opt.Title, Step: doc.Step, Arms: doc.Arms, Baseline: doc.Baseline, NPhases: max(len(doc.Phases)-1, 0)}
	if p.Title == "" {
		p.Title = "nsysphase analyze"
		if doc.Step != "" {
			p.Title += " — " + doc.Step
		}
	}
	for _, in := range doc.Inputs {
		p.Inputs = append(p.Inputs, in.File)
	}
	p.NoArms = len(doc.Arms) == 0 || len(doc.Arms) == 1 && (doc.Arms[0] == "" || doc.Arms[0] == phases.SingleArm)
	s := doc.Settings
	if hasResults(doc) {
		p.Stats = fmt.Sprintf("%g%% confidence intervals; unit = %s; B = %d resamples; seed %d; quantiles %s", 100*s.Confidence, s.Unit, s.Resamples, s.Seed, shortQuantile(s.Quantile))
	} else {
		p.Stats = "statistics off (--no-stats): point values only, no confidence intervals"
	}
	e := doc.Excluded
	p.Excluded = fmt.Sprintf("%d warm-up-range %s, %d skipped first %s per block (--skip-steps %d), %d %s outside arm blocks, %d unclosed %s",
		e.WarmupSteps, plural.Of(e.WarmupSteps, "step", "steps"), e.SkippedSteps, plural.Of(e.SkippedSteps, "step", "steps"), s.SkipSteps,
		e.OutsideArmSteps, plural.Of(e.OutsideArmSteps, "step", "steps"), e.UnclosedRanges, plural.Of(e.UnclosedRanges, "range", "ranges"))
	for _, part := range Parts {
		p.Legend = append(p.Legend, legend{part.Label, part.Color, part.Metric.Doc()})
	}
	p.StepChart, p.PhaseChart = breakdownCharts(doc)
	p.Forest = forestPlot(doc)
	p.StepWall = stepWallPlots(doc)
	p.Breakdown = fromTable(wideBreakdown(doc), 0)
	p.WallComparisons = wallComparisons(doc)
	p.Significant = significantComparisons(doc)
	p.Decomposition = decomposition(doc)
	p.WaitNotes = gpuWaitNotes(doc)
	if rs := doc.Ranks; rs != nil {
		u := unitsFor(rs, timeScale{"µs", 1e3}) // the breakdown's unit here
		p.RankTitle, p.RankNotes = ranksTitle(rs), rankLines(rs)
		p.Ranks = fromTable(ranksTable(rs, u), 0)
		p.RankPhases = fromTable(rankPhasesTable(rs, u), 0)
		p.RankHeat = rankHeatMaps(rs)
		if len(rs.Comparisons) > 0 {
			p.RankComparisons = fromTable(rankComparisonsTable(rs, u), 0)
		}
	}
	// Comparisons against a history or within a run (analyze --history,
	// --within-run), every phase.
	if t := historyTable(doc, true); t != nil {
		p.Extra = append(p.Extra, fromTable(t, 0))
	}
	if len(doc.WithinRun) > 0 {
		t, _, _ := withinRunTable(doc, true)
		p.Extra = append(p.Extra, fromTable(t, 0))
	}
	p.Utilisation, p.GPUTimeline = utilisationBars(doc), gpuTimeline(doc)
	if t := hardwareTable(doc, true); t != nil {
		p.Extra = append(p.Extra, fromTable(t, 0))
	}
	if doc.Hardware != nil && len(doc.Hardware.Hotspots) > 0 {
		p.Extra = append(p.Extra, fromTable(dataset.HostHotspotsTable(doc), 500))
	}
	p.Provenance = transposed(dataset.ProvenanceTable(doc), "file")
	p.WarningCounts, p.Warnings = warnings(doc)
	for _, t := range opt.Tables {
		p.Extra = append(p.Extra, fromTable(t, 500))
	}
	if err := tmpl.Execute(w, p); err != nil {
		return fmt.Errorf("render html report: %w", err)
	}
	return nil
}

func shortQuantile(q string) string {
	if i := strings.Index(q, " ("); i > 0 {
		return q[:i]
	}
	return q
}

// ---- breakdown bars ----

type barChart struct {
	Width, Height float64
	PlotX, PlotW  float64
	PlotTop       float64
	PlotBottom    float64
	Ticks         []tick
	Groups        []group
	Rows          []barRow
	AxisLabel     string
}

type tick struct {
	X     float64
	Label string
}

type group struct {
	Label string
	Y     float64 // text baseline
	Sep   float64 // y of the separator line above the group; 0 for the first
}

type barRow struct {
	Y, H     float64
	Mid      float64
	Arm      string
	Segs     []seg
	CI       *whisker
	ValueX   float64
	Value    string
	Tooltip  string
	Baseline bool
}

type seg struct {
	X, W  float64
	Color string
	Title string
}

type whisker struct{ X1, X2 float64 }

const (
	chartWidth = 1120.0
	labelW     = 250.0 // phase and arm labels
	valueW     = 210.0 // wall value and CI
	rowH       = 16.0
	rowGap     = 4.0
	groupGap   = 12.0
	axisH      = 30.0
)

// breakdownCharts draws the step on its own scale and the phases on a shared
// one: the step is an order of magnitude longer than any phase.
func breakdownCharts(doc *analysis.Doc) (step, ph *barChart) {
	byKey := map[[2]string]analysis.SummaryRow{}
	for _, r := range doc.Summary {
		byKey[[2]string{r.Phase, r.Arm}] = r
	}
	mk := func(phaseNames []string) *barChart {
		var gs [][]analysis.SummaryRow
		for _, p := range phaseNames {
			var rows []analysis.SummaryRow
			for _, a := range doc.Arms {
				if r, ok := byKey[[2]string{p, a}]; ok {
					rows = append(rows, r)
				}
			}
			if len(rows) > 0 {
				gs = append(gs, rows)
			}
		}
		if len(gs) == 0 {
			return nil
		}
		return barChartOf(gs, doc.Baseline)
	}
	if len(doc.Phases) == 0 {
		return nil, nil
	}
	return mk(doc.Phases[:1]), mk(doc.Phases[1:])
}

func barChartOf(groups [][]analysis.SummaryRow, baseline string) *barChart {
	c := &barChart{Width: chartWidth, PlotX: labelW, PlotW: chartWidth - labelW - valueW, PlotTop: 8, AxisLabel: "µs per step instance (mean); whisker: CI of mean wall"}
	wallName := phases.Wall.Name()
	hi := 0.0
	for _, g := range groups {
		for _, r := range g {
			m := r.Metrics[wallName]
			hi = math.Max(hi, m.Mean)
			if m.MeanCI != nil && !math.IsInf(m.MeanCI[1], 0) {
				hi = math.Max(hi, m.MeanCI[1])
			}
		}
	}
	ticks, top := niceTicks(hi / 1e3)
	scale := func(us float64) float64 { return c.PlotX + c.PlotW*math.Max(0, us)/top }
	y := c.PlotTop
	for gi, g := range groups {
		if gi > 0 {
			y += groupGap
		}
		grp := group{Label: g[0].Phase, Y: y + rowH - 4}
		if gi > 0 {
			grp.Sep = y - groupGap/2
		}
		c.Groups = append(c.Groups, grp)
		for _, r := range g {
			row := barRow{Y: y, H: rowH, Mid: y + rowH/2, Arm: r.Arm, Baseline: r.Arm == baseline}
			wall := r.Metrics[wallName]
			x := c.PlotX
			for _, part := range Parts {
				v := r.Metrics[part.Metric.Name()].Mean / 1e3
				if v <= 0 {
					continue
				}
				w := scale(v) - c.PlotX
				share := ""
				if wall.Mean > 0 {
					share = fmt.Sprintf(" (%.1f%% of mean wall)", 100*v*1e3/wall.Mean)
				}
				row.Segs = append(row.Segs, seg{X: x, W: w, Color: part.Color, Title: fmt.Sprintf("%s · %s · %s: %.1f µs%s", r.Phase, r.Arm, part.Label, v, share)})
				x += w
			}
			row.Value = fmt.Sprintf("%.1f µs", wall.Mean/1e3)
			if wall.MeanCI != nil {
				row.CI = &whisker{X1: scale(wall.MeanCI[0] / 1e3), X2: scale(wall.MeanCI[1] / 1e3)}
				row.Value += fmt.Sprintf(" [%.1f, %.1f]", wall.MeanCI[0]/1e3, wall.MeanCI[1]/1e3)
			}
			row.ValueX = c.PlotX + c.PlotW + 8
			row.Tooltip = fmt.Sprintf("%s · %s: mean wall %s; n = %d step %s in %d %s (%s)", r.Phase, r.Arm, row.Value,
				r.N, plural.Of(r.N, "instance", "instances"), r.Blocks, plural.Of(r.Blocks, "unit", "units"), r.Method)
			c.Rows = append(c.Rows, row)
			y += rowH + rowGap
		}
	}
	c.PlotBottom = y
	for _, t := range ticks {
		c.Ticks = append(c.Ticks, tick{X: scale(t), Label: trimFloat(t)})
	}
	c.Height = y + axisH
	return c
}

// niceTicks returns ticks 0, s, 2s, … covering hi, with s in {1, 2, 5}·10^k,
// and the axis end.
func niceTicks(hi float64) ([]float64, float64) {
	if !(hi > 0) || math.IsInf(hi, 0) {
		return []float64{0, 1}, 1
	}
	raw := hi / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []float64
	for v := 0.0; ; v += step {
		ts = append(ts, v)
		if v >= hi {
			return ts, v
		}
	}
}

func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// ---- forest plot ----

type forest struct {
	Width, Height float64
	PlotX, PlotW  float64
	PlotTop       float64
	PlotBottom    float64
	OneX          float64
	Ticks         []tick
	Rows          []forestRow
	Baseline      string
}

type forestRow struct {
	Y       float64
	Label   string
	Arm     string
	X       float64
	CI      *whisker
	Color   string
	Text    string
	Verdict stats.Verdict
	Tooltip string
	Sep     bool
}

const (
	forestLabelW = 300.0
	forestValueW = 280.0
	forestRowH   = 20.0
)

func forestPlot(doc *analysis.Doc) *forest {
	var rows []analysis.ComparisonRow
	for _, c := range doc.Comparisons {
		if c.Metric == phases.Wall.Name() && c.Stat == "mean" && c.Ratio != nil && *c.Ratio > 0 {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	f := &forest{Width: chartWidth, PlotX: forestLabelW, PlotW: chartWidth - forestLabelW - forestValueW, PlotTop: 8, Baseline: doc.Baseline}
	lo, hi := 1.0, 1.0
	for _, c := range rows {
		lo, hi = math.Min(lo, *c.Ratio), math.Max(hi, *c.Ratio)
		if c.RatioCI != nil && c.RatioCI[0] > 0 && !math.IsInf(c.RatioCI[1], 0) {
			lo, hi = math.Min(lo, c.RatioCI[0]), math.Max(hi, c.RatioCI[1])
		}
	}
	llo, lhi := math.Log(lo)-0.08, math.Log(hi)+0.08
	x := func(r float64) float64 {
		v := math.Min(math.Max(math.Log(r), llo), lhi)
		return f.PlotX + f.PlotW*(v-llo)/(lhi-llo)
	}
	f.OneX = x(1)
	for _, t := range logTicks(math.Exp(llo), math.Exp(lhi), x, 44) {
		f.Ticks = append(f.Ticks, tick{X: x(t), Label: trimFloat(t)})
	}
	y := f.PlotTop
	prevPhase := ""
	for i, c := range rows {
		r := forestRow{Y: y + forestRowH/2, Label: c.Phase, Arm: c.Arm, X: x(*c.Ratio), Verdict: c.Verdict, Sep: i > 0 && c.Phase != prevPhase}
		if c.Phase == prevPhase {
			r.Label = ""
		}
		prevPhase = c.Phase
		r.Text = fmt.Sprintf("%.3f", *c.Ratio)
		r.Color = "#555555"
		switch {
		case c.RatioCI == nil:
			r.Text += " (no CI)"
			r.Color = "#999999"
		default:
			r.CI = &whisker{X1: x(c.RatioCI[0]), X2: x(c.RatioCI[1])}
			r.Text += fmt.Sprintf(" [%.3f, %.3f]", c.RatioCI[0], c.RatioCI[1])
			if c.Verdict == stats.VerdictChanged {
				if *c.Ratio < 1 {
					r.Color = "#1b7837" // faster
				} else {
					r.Color = "#b2182b" // slower
				}
			}
		}
		r.Text += " " + verdictText(c.Verdict)
		r.Tooltip = fmt.Sprintf("%s: %s / %s mean wall = %.1f / %.1f µs; %s, n = %d", c.Phase, c.Arm, c.Baseline, c.ArmValue/1e3, c.BaseValue/1e3, c.Method, c.NUnits)
		f.Rows = append(f.Rows, r)
		y += forestRowH
	}
	f.PlotBottom = y
	f.Height = y + axisH
	return f
}

// logTicks picks readable ratios between lo and hi, always 1, at least
// minPx apart on the axis x.
func logTicks(lo, hi float64, x func(float64) float64, minPx float64) []float64 {
	cands := []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.75, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100}
	one := slices.Index(cands, 1.0)
	out := []float64{1}
	last := x(1)
	for i := one + 1; i < len(cands) && cands[i] <= hi; i++ {
		if x(cands[i])-last >= minPx {
			out = append(out, cands[i])
			last = x(cands[i])
		}
	}
	last = x(1)
	for i := one - 1; i >= 0 && cands[i] >= lo; i-- {
		if last-x(cands[i]) >= minPx {
			out = append(out, cands[i])
			last = x(cands[i])
		}
	}
	slices.Sort(out)
	return out
}

// ---- tables ----

type htmlTable struct {
	Name      string
	Doc       string
	Cols      []htmlCol
	Rows      [][]htmlCell
	Truncated int // rows left out
}

type htmlCol struct {
	Name, Unit, Doc string
	Num             bool
}

type htmlCell struct {
	Text string
	Long string // shown in a <details> when the text is long
	Null bool
	Num  bool
}

// fromTable turns an export table into an HTML table; limit > 0 caps rows.
func fromTable(t *export.Table, limit int) *htmlTable {
	h := &htmlTable{Name: t.Name, Doc: t.Doc}
	for _, c := range t.Columns() {
		unit := c.Unit
		if unit == export.UnitCount || strings.Contains(c.Name, unit) {
			unit = "" // obvious, or already in the name ("wall µs")
		}
		h.Cols = append(h.Cols, htmlCol{Name: c.Name, Unit: unit, Doc: c.Doc, Num: c.Type == export.TypeInt64 || c.Type == export.TypeFloat64})
	}
	n := t.Len()
	if limit > 0 && n > limit {
		h.Truncated = n - limit
		n = limit
	}
	for r := range n {
		row := make([]htmlCell, t.NumColumns())
		for c := range row {
			row[c] = cellOf(t.Value(r, c))
		}
		h.Rows = append(h.Rows, row)
	}
	return h
}

// transposed shows a wide table with few rows as one row per column and one
// column per row, headed by the key column's values (provenance: one column
// per input).
func transposed(t *export.Table, key string) *htmlTable {
	k := t.ColumnIndex(key)
	h := &htmlTable{Name: t.Name, Doc: t.Doc, Cols: []htmlCol{{Name: key}}}
	for r := range t.Len() {
		name := fmt.Sprint(r)
		if k >= 0 {
			name, _ = t.String(r, k)
		}
		h.Cols = append(h.Cols, htmlCol{Name: name})
	}
	for c, col := range t.Columns() {
		if c == k {
			continue
		}
		label := col.Name
		if col.Unit != "" {
			label += " (" + col.Unit + ")"
		}
		row := []htmlCell{{Text: label}}
		for r := range t.Len() {
			cell := cellOf(t.Value(r, c))
			cell.Num = false // values of different kinds share a column
			row = append(row, cell)
		}
		h.Rows = append(h.Rows, row)
	}
	return h
}

func cellOf(v export.Value) htmlCell {
	if v.IsNull() {
		return htmlCell{Text: "—", Null: true}
	}
	switch v.Type() {
	case export.TypeInt64:
		i, _ := v.AsInt64()
		return htmlCell{Text: strconv.FormatInt(i, 10), Num: true}
	case export.TypeFloat64:
		f, _ := v.AsFloat64()
		return htmlCell{Text: strconv.FormatFloat(f, 'g', 8, 64), Num: true}
	case export.TypeBool:
		b, _ := v.AsBool()
		return htmlCell{Text: strconv.FormatBool(b)}
	}
	s, _ := v.AsString()
	if len(s) > 90 || strings.Contains(s, "\n") {
		short := s
		if i := strings.IndexByte(short, '\n'); i >= 0 {
			short = short[:i]
		}
		if len(short) > 60 {
			short = short[:60]
		}
		return htmlCell{Text: short + " …", Long: s}
	}
	return htmlCell{Text: s}
}

func strCell(s string) htmlCell { return htmlCell{Text: s} }

func numCell(format string, v float64) htmlCell {
	return htmlCell{Text: fmt.Sprintf(format, v), Num: true}
}

func ciCell(ci *[2]float64, scale float64, digits int) htmlCell {
	if ci == nil {
		return htmlCell{Text: "—", Null: true}
	}
	return htmlCell{Text: fmt.Sprintf("[%.*f, %.*f]", digits, ci[0]/scale, digits, ci[1]/scale), Num: true}
}

func wallComparisons(doc *analysis.Doc) *htmlTable {
	h := &htmlTable{Name: "comparisons (wall_ns)", Doc: fmt.Sprintf("each arm against %s; ratio = arm / baseline; ~ = the CI includes 1 (no significant change)", doc.Baseline)}
	for _, c := range []string{"phase", "arm", "stat", "baseline µs", "arm µs", "ratio", "ratio CI", "diff µs", "diff CI µs", "verdict", "method", "units"} {
		h.Cols = append(h.Cols, htmlCol{Name: c, Num: strings.Contains(c, "µs") || c == "ratio" || c == "units"})
	}
	for _, c := range doc.Comparisons {
		// p90/p99 only where they have a CI: without one they say nothing.
		if c.Metric != phases.Wall.Name() || (c.RatioCI == nil && (c.Stat == "p90" || c.Stat == "p99")) {
			continue
		}
		h.Rows = append(h.Rows, comparisonCells(c, 1e3))
	}
	if len(h.Rows) == 0 {
		return nil
	}
	return h
}

func comparisonCells(c analysis.ComparisonRow, scale float64) []htmlCell {
	ratio := htmlCell{Text: "—", Null: true}
	if c.Ratio != nil {
		ratio = numCell("%.3f", *c.Ratio)
	}
	v := verdictText(c.Verdict)
	return []htmlCell{strCell(c.Phase), strCell(c.Arm), strCell(c.Stat), numCell("%.1f", c.BaseValue/scale), numCell("%.1f", c.ArmValue/scale),
		ratio, ciCell(c.RatioCI, 1, 3), numCell("%+.1f", c.Diff/scale), ciCell(c.DiffCI, scale, 1), strCell(v), strCell(c.Method), {Text: strconv.Itoa(c.NUnits), Num: true}}
}

// significantComparisons lists the other metrics whose ratio CI excludes 1.
func significantComparisons(doc *analysis.Doc) *htmlTable {
	h := &htmlTable{Name: "other significant changes", Doc: "every metric other than wall_ns whose CI excludes no change; values in the metric's unit (ns, bytes or count per step instance)"}
	for _, c := range []string{"phase", "arm", "metric", "stat", "baseline", "arm value", "ratio", "ratio CI", "diff", "diff CI", "verdict", "method", "units"} {
		h.Cols = append(h.Cols, htmlCol{Name: c, Num: c == "baseline" || c == "arm value" || c == "ratio" || c == "diff" || c == "units"})
	}
	for _, c := range doc.Comparisons {
		if c.Metric == phases.Wall.Name() || !c.Significant {
			continue
		}
		cells := comparisonCells(c, 1)
		cells[3], cells[4] = numCell("%.6g", c.BaseValue), numCell("%.6g", c.ArmValue)
		cells[7], cells[8] = numCell("%+.6g", c.Diff), ciCellG(c.DiffCI)
		h.Rows = append(h.Rows, slices.Insert(cells, 2, strCell(c.Metric)))
	}
	if len(h.Rows) == 0 {
		return nil
	}
	return h
}

func ciCellG(ci *[2]float64) htmlCell {
	if ci == nil {
		return htmlCell{Text: "—", Null: true}
	}
	return htmlCell{Text: fmt.Sprintf("[%.6g, %.6g]", ci[0], ci[1]), Num: true}
}

func decomposition(doc *analysis.Doc) *htmlTable {
	h := &htmlTable{Name: "decomposition", Doc: "mean wall difference (arm − baseline, µs per step instance) split into its six exclusive parts; rows marked (in …) are inner parts, outside the sum; share = of the baseline's mean wall"}
	for _, c := range []string{"phase", "arm", "component", "diff µs", "diff CI µs", "share", "share CI", "significant"} {
		h.Cols = append(h.Cols, htmlCol{Name: c, Num: strings.HasPrefix(c, "diff") || strings.HasPrefix(c, "share")})
	}
	for _, r := range doc.Decomposition {
		sig := "—"
		if r.DiffCI != nil {
			sig = stats.VerdictUnchanged.String() // the difference's CI holds 0
			if r.DiffCI[0] > 0 || r.DiffCI[1] < 0 {
				sig = "yes"
			}
		}
		shareCI := htmlCell{Text: "—", Null: true}
		if r.ShareCI != nil {
			shareCI = htmlCell{Text: fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*r.ShareCI[0], 100*r.ShareCI[1]), Num: true}
		}
		component := r.Component
		if r.Of != "" { // an inner part, outside the sum
			component += " (in " + r.Of + ")"
		}
		h.Rows = append(h.Rows, []htmlCell{strCell(r.Phase), strCell(r.Arm), strCell(component), numCell("%+.1f", r.DiffNs/1e3), ciCell(r.DiffCI, 1e3, 1),
			numCell("%+.1f%%", 100*r.Share), shareCI, strCell(sig)})
	}
	if len(h.Rows) == 0 {
		return nil
	}
	return h
}

func warnings(doc *analysis.Doc) ([]warnCount, *htmlTable) {
	counts := map[string]int{}
	var order []string
	h := &htmlTable{Name: "warnings"}
	for _, c := range []string{"code", "phase", "arm", "metric", "message"} {
		h.Cols = append(h.Cols, htmlCol{Name: c})
	}
	for _, w := range doc.Warnings {
		if counts[w.Code] == 0 {
			order = append(order, w.Code)
		}
		counts[w.Code]++
		h.Rows = append(h.Rows, []htmlCell{strCell(w.Code), strCell(w.Phase), strCell(w.Arm), strCell(w.Metric), {Text: w.Message}})
	}
	var out []warnCount
	for _, c := range order {
		out = append(out, warnCount{c, counts[c]})
	}
	if len(h.Rows) == 0 {
		h = nil
	}
	return out, h
}
