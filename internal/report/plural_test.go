package report

import (
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/analysis"
)

// TestCountsAgree: sentences that print a count say one thing in the
// singular and two in the plural, through the renderers that print them.
func TestCountsAgree(t *testing.T) {
	median := int64(9000)
	render := map[string]func(n int) string{
		"context": func(n int) string {
			doc := &analysis.Doc{Step: "train_step", Phases: make([]string, n+1)}
			doc.Excluded.UnclosedRanges = n
			return strings.Join(contextLines(doc, Options{}), "\n")
		},
		"ranks": func(n int) string {
			s := &analysis.RanksSection{Ranks: []analysis.RankRow{{Rank: 0}, {Rank: 1}}, Matching: "by step",
				Settings: analysis.StragglerSettings{Unit: "step", Steps: n, InitCollectives: n}, StepEnds: &analysis.StepEndSkew{Steps: n}}
			return strings.Join(rankLines(s), "\n")
		},
		"replay": func(n int) string {
			return replayLine(analysis.ReplayCost{Source: "measured", PerLaunchNs: 9000, Calls: n, MedianNs: &median, MinNs: &median, MaxNs: &median})
		},
		"hotspots": func(n int) string {
			doc := &analysis.Doc{Hardware: &analysis.HardwareSection{CPUSamples: int64(n), Hotspots: []analysis.HotspotPhase{{Phase: "forward", Samples: int64(n)}}}}
			return strings.Join(hotspotLines(doc), "\n")
		},
	}
	for _, tc := range []struct {
		what string
		n    int
		want []string
		not  string // the other number's words
	}{
		{"context", 1, []string{", 1 phase, 0 inputs", "left out: 1 unclosed range"}, "1 phases"},
		{"context", 2, []string{", 2 phases, 0 inputs", "left out: 2 unclosed ranges"}, "2 phase,"},
		{"ranks", 1, []string{"stragglers: 1 matched step (", "1 collective outside the counted steps is left out", "step ends (1 matched step,"}, "1 collectives"},
		{"ranks", 2, []string{"stragglers: 2 matched steps (", "2 collectives outside the counted steps are left out", "step ends (2 matched steps,"}, "is left out"},
		{"replay", 1, []string{"the mean of the inputs' 1 call ("}, "1 calls"},
		{"replay", 2, []string{"the mean of the inputs' 2 calls ("}, "2 call "},
		{"hotspots", 1, []string{"1 CPU sample, one every", "forward (1 sample): "}, "1 samples"},
		{"hotspots", 2, []string{"2 CPU samples, one every", "forward (2 samples): "}, "2 sample,"},
	} {
		got := render[tc.what](tc.n)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s, n = %d: no %q in\n%s", tc.what, tc.n, w, got)
			}
		}
		if strings.Contains(got, tc.not) {
			t.Errorf("%s, n = %d: %q in\n%s", tc.what, tc.n, tc.not, got)
		}
	}
}
