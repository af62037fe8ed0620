package report

import (
	"fmt"
	"slices"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/phases"
)

// The breakdown per step: the compact table of the default output and the
// wide one (--wide, the HTML page), in µs, ms or s.

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
		breakdown = doc.BreakdownTable()
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

// compactParts are the breakdown columns of the default terminal output:
// wall, its six exclusive parts and GPU busy time, in µs.
var compactParts = []struct {
	metric phases.Metric
	label  string
}{
	{phases.Wall, "wall"}, {phases.CPUOther, "cpu_other"}, {phases.Launch, "launch"}, {phases.SyncAPI, "sync"},
	{phases.MemcpyAPI, "memcpy"}, {phases.Alloc, "alloc"}, {phases.OtherAPI, "other_api"}, {phases.GPUBusy, "gpu_busy"},
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
	scale := make([]timeScale, len(compactParts))
	for i := range scale {
		scale[i] = breakdownScale(doc)
	}
	cols := []export.Column{{Name: "arm", Type: export.TypeString}, {Name: "phase", Type: export.TypeString}}
	for i, p := range compactParts {
		name := p.label // the unit, one for the table, is in its title
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
			s := r.Metrics[p.metric.Name()]
			v := export.Null()
			if !s.Absent {
				v = export.Float(round1(s.Mean / scale[i].ns))
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
	for _, p := range compactParts {
		for _, r := range doc.Summary {
			if s := r.Metrics[p.metric.Name()]; !s.Absent {
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
