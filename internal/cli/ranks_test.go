package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestAnalyzeRanksOutputs: the 2-GPU run's ranks section in every
// document format, and its absence on a single-rank export.
func TestAnalyzeRanksOutputs(t *testing.T) {
	t.Parallel()
	ddp := filepath.Join(fixture.Root(), "testdata", fixture.Set+"-extra", "dist_allreduce_2gpu.sqlite.xz")
	text, _, code := run(t, "analyze", "--resamples", "1999", ddp)
	// the headline columns, then the rest in a second table: 120 columns
	if code != 0 || !strings.Contains(text, "Ranks (2): communication and stragglers") ||
		!strings.Contains(text, "   0      88    12.98       11.17       13.9    97.4         143.2  [37.2, 551.6]          18.4\n") ||
		!strings.Contains(text, "   0  690  [88, 100]            90.2               137.9         24.06         76            95.1\n") {
		t.Errorf("text (exit %d):\n%s", code, text)
	}
	wide, _, _ := run(t, "analyze", "--wide", "--resamples", "1999", ddp)
	if !strings.Contains(wide, "   0  690      88    12.98       11.17       13.9    97.4  [88, 100]         143.2  [37.2, 551.6]            90.2") {
		t.Errorf("--wide: one ranks table with every column:\n%s", wide)
	}
	md, _, _ := run(t, "analyze", "--format", "md", "--resamples", "1999", ddp)
	if !strings.Contains(md, "<details><summary>Ranks (2): communication and stragglers</summary>") || !strings.Contains(md, "|    0 | 690 |     88 |   12.98 |      11.17 |") {
		t.Errorf("markdown:\n%s", md)
	}
	html, _, _ := run(t, "analyze", "--format", "html", "--resamples", "1999", ddp)
	// the step-wall heat map (2 ranks × 76 steps) beside the straggler
	// table, then the lateness map
	if !strings.Contains(html, `<h3 id="ranks">`) || strings.Count(html, "<rect") < 2*2*76 || !strings.Contains(html, `<div class="ranksview">`) ||
		!strings.Contains(html, "<h3>step wall by rank and step</h3>") || !strings.Contains(html, "rank 0 finishes last in 76 of 76 steps") {
		t.Errorf("html: ranks %v, %d rects", strings.Contains(html, `id="ranks"`), strings.Count(html, "<rect"))
	}
	single := filepath.Join(fixture.Root(), "testdata", fixture.Set, "interleaved_graph.sqlite.xz")
	for _, f := range []string{"table", "md", "json", "html"} {
		out, _, _ := run(t, "analyze", "--no-stats", "--format", f, single)
		if strings.Contains(out, "Ranks") || strings.Contains(out, `"ranks"`) || strings.Contains(out, `id="ranks"`) {
			t.Errorf("%s output of a single-rank export shows ranks", f)
		}
	}
}

// TestRanksTextUnits: on the two-node ALCF pair, whose breakdown is in ms
// (a 116.7 ms step), the rank tables give walls in ms too (186.29, never
// 186289.9 µs) and lateness in the unit its largest value reads in
// (167.0 ms); --wide, whose breakdown is in µs, gives walls in µs. Every
// line fits 120 columns by default.
func TestRanksTextUnits(t *testing.T) {
	t.Parallel()
	fxs := fixture.Multirank(t, "argonne-lcf__")
	text, errs, code := run(t, "analyze", "--resamples", "1999", fxs[0].XZ, fxs[1].XZ)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, l := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("%d columns: %s", n, l)
		}
	}
	for _, want := range []string{
		"Breakdown per step (mean ms,",
		"phase          arm  rank  n  wall ms  max/mean  score  gpu busy ms  nccl ms  exposed ms  overlap % of nccl\n",
		"whole process  all     0  1   186.29     1.596  0.253      185.998  185.998     185.998                  0\n",
		"late ms/collective", "   4       1    19.11       19.11          0     100             166.998  —                         0\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("default text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "186289.9") {
		t.Errorf("a wall in µs beside a breakdown in ms:\n%s", text)
	}
	wide, _, _ := run(t, "analyze", "--wide", "--resamples", "1999", fxs[0].XZ, fxs[1].XZ)
	if !strings.Contains(wide, "Breakdown per step (mean µs;") || !strings.Contains(wide, "whole process  all     0  1  186289.9") {
		t.Errorf("--wide: walls in µs as its breakdown:\n%s", wide)
	}
}
