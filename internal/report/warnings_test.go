package report

import (
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/stats"
)

// TestWarningLinesMerged: the three one-run warnings share one line that
// names the codes that fired; a kind stays one line, counting its phases
// when naming them would pass 120 columns.
func TestWarningLinesMerged(t *testing.T) {
	var ws []analysis.Warning
	for _, ph := range []string{"a", "b"} {
		ws = append(ws,
			analysis.Warning{Code: stats.WarnNoReplication, Phase: ph, Arm: "x"},
			analysis.Warning{Code: stats.WarnConditionalOnProfiles, Phase: ph},
		)
	}
	long := []string{"a_phase_with_a_rather_long_name_number_one", "a_phase_with_a_rather_long_name_number_two", "a_phase_with_a_rather_long_name_number_three"}
	for _, ph := range long {
		ws = append(ws, analysis.Warning{Code: stats.WarnHeadEffect, Phase: ph, Arm: "x"})
	}
	got := warningLines(ws, false)
	want := []string{
		"4× no between-block CI: record more runs or blocks (no_replication, conditional_on_profiles)",
		"3× head_effect: the first steps of each block are slower: raise --skip-steps (3 phases; x)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if all := warningLines(ws, true); len(all) != len(ws) {
		t.Errorf("--warnings: %d lines for %d warnings", len(all), len(ws))
	}
}

// TestWrapProse: prose lines longer than 120 columns wrap with their indent
// plus four spaces; a table (header, rule of dashes, rows) stays as it is.
func TestWrapProse(t *testing.T) {
	long := strings.Repeat("word ", 30) // 150 columns
	row := "a" + strings.Repeat(" ", 130) + "b"
	in := "  " + long + "\n\nh1   h2\n---  --\n" + row + "\n\n" + long
	out := wrapProse(in)
	lines := strings.Split(out, "\n")
	for _, l := range lines {
		if len(l) > 120 && l != row {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
	if !strings.Contains(out, "\n"+row+"\n") || !strings.HasPrefix(lines[1], "      word") {
		t.Errorf("wrapped:\n%s", out)
	}
}
