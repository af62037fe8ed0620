package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
)

// TestRanksTitleSaysWhatIsThere: the ranks heading names communication
// only where collectives were traced.
func TestRanksTitleSaysWhatIsThere(t *testing.T) {
	ranks := []analysis.RankRow{{Rank: 0}, {Rank: 1}}
	noComm := &analysis.RanksSection{Ranks: ranks, StepEnds: &analysis.StepEndSkew{}}
	if got := ranksTitle(noComm); got != "Ranks (2): phases per rank and skew at the step ends (no communication traced)" {
		t.Errorf("no communication, step ends: %q", got)
	}
	noComm.StepEnds = nil
	if got := ranksTitle(noComm); got != "Ranks (2): phases per rank (no communication traced)" {
		t.Errorf("no communication: %q", got)
	}
	ranks[1].Collectives = 3
	if got := ranksTitle(&analysis.RanksSection{Ranks: ranks}); got != "Ranks (2): communication and stragglers" {
		t.Errorf("collectives: %q", got)
	}
}

// TestSplitToFit: a table wider than the width splits into tables that
// each fit, repeat the key columns and together hold every other column
// once, in order, with its values; one that fits stays whole.
func TestSplitToFit(t *testing.T) {
	cols := []export.Column{{Name: "phase", Type: export.TypeString}, {Name: "rank", Type: export.TypeInt64}}
	for i := range 12 {
		cols = append(cols, export.Column{Name: fmt.Sprintf("metric %02d µs", i), Type: export.TypeFloat64})
	}
	tb := export.NewTable("t", "", cols...)
	for r := range 3 {
		vals := []export.Value{export.Str("a phase"), export.Int(int64(r))}
		for i := range 12 {
			vals = append(vals, export.Float(float64(r*1000+i)+0.5))
		}
		_ = tb.AppendRow(vals...)
	}
	parts := splitToFit(tb, []string{"phase", "rank", "arm"}, 80)
	if len(parts) < 2 {
		t.Fatalf("%d tables", len(parts))
	}
	next := 0
	for _, p := range parts {
		var buf bytes.Buffer
		if err := writeTable(&buf, p, Text); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(buf.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("%d columns: %s", n, l)
			}
		}
		if p.Column(0).Name != "phase" || p.Column(1).Name != "rank" || p.Value(2, 1) != export.Int(2) {
			t.Errorf("keys not repeated: %v %v", p.Column(0).Name, p.Column(1).Name)
		}
		for c := 2; c < p.NumColumns(); c++ {
			if want := fmt.Sprintf("metric %02d µs", next); p.Column(c).Name != want || p.Value(1, c) != export.Float(float64(1000+next)+0.5) {
				t.Errorf("column %q, want %q", p.Column(c).Name, want)
			}
			next++
		}
	}
	if next != 12 {
		t.Errorf("%d of 12 columns", next)
	}
	if parts := splitToFit(tb, []string{"rank"}, 1000); len(parts) != 1 || parts[0] != tb {
		t.Errorf("a table that fits is split in %d", len(parts))
	}
}
