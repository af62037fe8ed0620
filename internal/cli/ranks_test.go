package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestAnalyzeRanksOutputs: the 2-GPU run's ranks section in every
// document format, and its absence on a single-rank export.
func TestAnalyzeRanksOutputs(t *testing.T) {
	t.Parallel()
	ddp := filepath.Join(fixture.Root(), "testdata", fixture.Set+"-extra", "dist_allreduce_2gpu.sqlite.xz")
	text, _, code := run(t, "analyze", "--resamples", "1999", ddp)
	if code != 0 || !strings.Contains(text, "Ranks (2): communication and stragglers") ||
		!strings.Contains(text, "   0  690      88    12.98       11.17       13.9    97.4") {
		t.Errorf("text (exit %d):\n%s", code, text)
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
