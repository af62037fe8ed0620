package report

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

var testStats = analysis.Options{Confidence: 0.95, Resamples: 1999, Seed: 1, SkipSteps: 1}

// TestAnalysisText checks the default terminal output on a real export: it
// fits 120 columns, the headline (step first) comes before the breakdown,
// the verdict words tell faster from slower, and warnings take one line per
// kind with a count.
func TestAnalysisText(t *testing.T) {
	d := doc(t, "interleaved_graph", testStats)
	var b bytes.Buffer
	if err := Generate(&b, Text, d, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i, l := range lines {
		if n := len([]rune(l)); n > textWidth {
			t.Errorf("line %d is %d columns wide (> %d): %q", i+1, n, textWidth, l)
		}
	}
	// The first line names the rule, its coverage and the runner-up; it may
	// wrap onto a continuation line.
	arms := 1
	for arms < len(lines) && strings.HasPrefix(lines[arms], "  ") {
		arms++
	}
	if !strings.HasPrefix(lines[0], "step collector_step (repeats most in arm blocks, 100% of traced time; runner-up termination") ||
		arms >= len(lines) || !strings.HasPrefix(lines[arms], "arms: eager (baseline) 3 blocks × 49 steps; graph 3 blocks × 49 steps") {
		t.Errorf("context lines:\n%s", strings.Join(lines[:min(3, len(lines))], "\n"))
	}
	head, brk := strings.Index(out, "collector_step  graph    1737.8   826.3  0.475  [0.432, 0.523]  -52.5% faster"), strings.Index(out, "Breakdown per step")
	if head < 0 || brk < 0 || head > brk {
		t.Errorf("headline missing or after the breakdown:\n%s", out)
	}
	if !strings.Contains(out, "-36.7% faster") || !strings.Contains(out, "~ no significant change: policy_action_publish") {
		t.Errorf("verdict words missing:\n%s", out)
	}
	// No phase of this export is significantly slower at 3 blocks per arm
	// (termination's +8.7% includes 1): the word, on its own.
	slower := 1.087
	if got := changeText(analysis.ComparisonRow{Metric: "wall_ns", RatioEstimate: stats.RatioEstimate{Ratio: &slower}, Verdict: stats.VerdictChanged}); got != "+8.7% slower" {
		t.Errorf("changeText of a slower arm: %q", got)
	}
	if strings.Contains(out, "_ns ") || strings.Contains(out, "changed") {
		t.Errorf("µs values labelled with _ns names, or the old verdict word:\n%s", out)
	}
	// The caveats that hold for most phases are one method note on top;
	// the rest, one line a kind.
	note, rest := ciCaveats(d.Warnings, len(d.Phases))
	if note == "" || len(rest) == len(d.Warnings) || !strings.Contains(out, "\nCIs, for most phases: ") {
		t.Errorf("no CI method note for the caveats of most phases:\n%s", out)
	}
	codes := map[string]bool{}
	for _, w := range rest {
		codes[w.Code] = true
	}
	_, warn, _ := strings.Cut(out, "\nWarnings (")
	if got := len(regexp.MustCompile(`\n  \d+× `).FindAllString(warn, -1)); got != len(codes) || got > maxWarningLines {
		t.Errorf("%d warning lines for %d codes:\n%s", got, len(codes), warn)
	}
	b.Reset()
	if err := Generate(&b, Text, d, Options{Wide: true, AllWarnings: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "kernel_sum µs") || strings.Count(b.String(), "\n  ") < len(d.Warnings) {
		t.Error("--wide lacks a column or --warnings lacks warnings")
	}
}

// gfm renders Markdown as GitHub does (tables, strikethrough, autolinks)
// and returns its syntax tree.
func gfm(t *testing.T, src []byte) ast.Node {
	t.Helper()
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	return md.Parser().Parse(text.NewReader(src))
}

// mdShape counts what a GitHub reader sees: tables with their body rows
// and first header cell, HTML blocks (<details>), list items.
type mdShape struct {
	tables    []string // first header cell of each table
	rows      []int    // body rows of each table
	details   int
	listItems int
}

func shapeOf(t *testing.T, src []byte) mdShape {
	var s mdShape
	_ = ast.Walk(gfm(t, src), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case east.KindTable:
			hdr := n.FirstChild()
			s.tables = append(s.tables, nodeText(hdr.FirstChild(), src))
			s.rows = append(s.rows, n.ChildCount()-1)
		case ast.KindHTMLBlock:
			if strings.Contains(string(n.(*ast.HTMLBlock).Lines().Value(src)), "<details>") {
				s.details++
			}
		case ast.KindListItem:
			s.listItems++
		}
		return ast.WalkContinue, nil
	})
	return s
}

// TestAnalysisMarkdownGFM renders analyze's Markdown with a GitHub-flavoured
// renderer: a short summary table on top, the breakdown folded in
// <details>, the warnings a list, and no sentence read as a table row.
func TestAnalysisMarkdownGFM(t *testing.T) {
	d := doc(t, "interleaved_graph", testStats)
	var b bytes.Buffer
	if err := Generate(&b, Markdown, d, Options{}); err != nil {
		t.Fatal(err)
	}
	s := shapeOf(t, b.Bytes())
	if len(s.tables) != 2 || s.tables[0] != "phase" || s.tables[1] != "arm" {
		t.Fatalf("tables %q, want the headline (phase …) and the breakdown (arm …)\n%s", s.tables, b.String())
	}
	if s.rows[0] != 2 || s.rows[1] != len(d.Summary) {
		t.Errorf("table rows %v, want 2 headline rows (collector_step and (unannotated) changed) and %d breakdown rows", s.rows, len(d.Summary))
	}
	notes := gpuWaitNotes(d)
	if want := 3 + min(len(notes), 1); s.details != want {
		t.Errorf("%d <details> blocks, want %d (breakdown, decomposition, why phases wait, warnings)", s.details, want)
	}
	codes := map[string]bool{}
	_, rest := ciCaveats(d.Warnings, len(d.Phases))
	for _, w := range rest {
		codes[w.Code] = true
	}
	pairs := map[[2]string]bool{}
	for _, r := range d.Decomposition {
		pairs[[2]string{r.Phase, r.Arm}] = true
	}
	if want := len(codes) + len(pairs) + len(notes); s.listItems != want {
		t.Errorf("%d list items, want %d (warning kinds, decomposition lines, why phases wait)", s.listItems, want)
	}
}

// TestGateMarkdownGFM: the check table keeps its rows; the reasons are a
// list under it, never table rows.
func TestGateMarkdownGFM(t *testing.T) {
	r, lo, hi := 2.1, 2.0, 2.2
	g := &Gate{Status: "FAIL", Phase: "step", Metric: "wall_ns", Stat: "mean", Baseline: "graph", Limit: 0.05, Confidence: 0.95, Resamples: 9999, Seed: 1,
		Arms: []GateRow{
			{Arm: "eager", RatioEstimate: stats.RatioEstimate{Ratio: &r, RatioCI: &[2]float64{lo, hi}}, Method: "cluster-jackknife-t", NUnits: 6, Outcome: OutcomeRegression, Reason: "the whole CI lies above 1.050 | proven"},
			{Arm: "one", RatioEstimate: stats.RatioEstimate{Ratio: &r, RatioCI: &[2]float64{lo, hi}}, Method: stats.MethodWithinRun, NUnits: 2, Outcome: OutcomeInconclusive, Reason: "within-run CI only"},
		}}
	var b bytes.Buffer
	if err := Generate(&b, Markdown, g, Options{}); err != nil {
		t.Fatal(err)
	}
	s := shapeOf(t, b.Bytes())
	if len(s.tables) != 1 || s.rows[0] != 2 || s.listItems != 2 {
		t.Errorf("shape %+v, want one table of 2 rows and 2 reasons as list items\n%s", s, b.String())
	}
	if !strings.Contains(b.String(), "limit +5%") || !strings.Contains(b.String(), "| +110.0% |") || !strings.Contains(b.String(), "| no CI |") {
		t.Errorf("limit or change column wrong:\n%s", b.String())
	}
}

// TestAnalysisJSONNullVerdict: without a between-unit CI (graph_whole has
// two blocks per arm) the JSON verdict is null, as the table's "no CI".
func TestAnalysisJSONNullVerdict(t *testing.T) {
	d := doc(t, "graph_whole", testStats)
	var b bytes.Buffer
	if err := Generate(&b, JSON, d, Options{}); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Comparisons []map[string]json.RawMessage `json:"comparisons"`
	}
	if err := json.Unmarshal(b.Bytes(), &out); err != nil || len(out.Comparisons) == 0 {
		t.Fatalf("%v (%d comparisons)", err, len(out.Comparisons))
	}
	for _, c := range out.Comparisons {
		if v, ok := c["verdict"]; !ok || string(v) != "null" {
			t.Fatalf("verdict %s, want null: %s", v, c["method"])
		}
	}
}

// TestBoundaryMarkdownGFM: every sentence of boundary's Markdown stays a
// paragraph (one once followed a table without a blank line and became a
// row of it): the tables hold exactly the rows written.
func TestBoundaryMarkdownGFM(t *testing.T) {
	cfg := analysis.Config{Files: []string{fixture.Get(t, "eager_graph_small").XZ},
		Segment: phases.Options{ArmPattern: regexp.MustCompile(phases.DefaultArmPattern), Depth: 1, SkipSteps: 1}}
	files, frames, err := analysis.ReadCalls(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := analysis.BuildBoundary(files, frames, []string{"graph_replay"}, testStats)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Generate(&buf, Markdown, b, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(b.ArmsWithout) == 0 {
		t.Fatal("want an arm without the region: its sentence follows the arms table")
	}
	s := shapeOf(t, buf.Bytes())
	want := []int{len(b.ArmOrder)}
	bound := 0 // the bounded saving's phases table
	for _, a := range b.ArmOrder {
		if cb := b.Arms[a].Bound; cb != nil {
			bound += len(cb.Phases)
		}
	}
	if bound > 0 {
		want = append(want, bound)
	}
	if len(b.Blockers) > 0 {
		want = append(want, len(b.Blockers))
	}
	if !slices.Equal(s.rows, want) {
		t.Errorf("table rows %v, want %v (a sentence read as a row?)\n%s", s.rows, want, buf.String())
	}
}

// TestParseFormatAndUnsupported: md and text are aliases; a format a result
// has no rendering in is an error naming both, not empty output.
func TestParseFormatAndUnsupported(t *testing.T) {
	for in, want := range map[string]Format{"md": Markdown, "markdown": Markdown, "text": Text, "table": Text, "HTML": HTML, "pq": Parquet} {
		if f, err := ParseFormat(in); err != nil || f != want {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", in, f, err, want)
		}
	}
	if _, err := ParseFormat("yaml"); err == nil {
		t.Error("yaml accepted")
	}
	var b bytes.Buffer
	if err := Generate(&b, HTML, Ranges{}, Options{}); err == nil || !strings.Contains(err.Error(), "no html rendering of report.Ranges") || b.Len() != 0 {
		t.Errorf("ranges as html: %v, %d bytes", err, b.Len())
	}
	if err := Generate(&b, HTML, &Gate{}, Options{}); err == nil {
		t.Error("check as html: no error")
	}
}

// nodeText is the text of n's descendants (ast.Node.Text is deprecated).
func nodeText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(t.Value(src))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}
