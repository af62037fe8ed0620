package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/phases"
)

// wideBreakdown is the at-a-glance view (--wide, and the HTML report's
// table): per arm and phase, the mean per step of the metrics placed in it
// (phases.WideColumns; times in µs) with the wall CI.
func wideBreakdown(d *analysis.Doc) *export.Table {
	parts := phases.WideColumns()
	cols := []export.Column{
		{Name: "arm", Type: export.TypeString},
		{Name: "phase", Type: export.TypeString},
		{Name: "n", Type: export.TypeInt64, Unit: export.UnitCount},
		{Name: "blocks", Type: export.TypeInt64, Unit: export.UnitCount},
	}
	for _, m := range parts {
		name := strings.TrimSuffix(m.Name(), "_ns")
		unit := ""
		if m.Unit() == "ns" {
			name += " µs"
			unit = "µs"
		}
		cols = append(cols, export.Column{Name: name, Type: export.TypeFloat64, Unit: unit, Nullable: true})
		if m == phases.Wall {
			cols = append(cols, export.Column{Name: "wall CI µs", Type: export.TypeString, Nullable: true})
		}
	}
	t := export.NewTable("breakdown", "mean per step instance; the six parts after wall sum to wall; gpu_busy and kernel_sum overlap host time", cols...)
	phaseRank := map[string]int{}
	for i, p := range d.Phases {
		phaseRank[p] = i
	}
	rows := slices.Clone(d.Summary)
	armRank := map[string]int{}
	for i, a := range d.Arms {
		armRank[a] = i
	}
	slices.SortStableFunc(rows, func(a, b analysis.SummaryRow) int {
		if armRank[a.Arm] != armRank[b.Arm] {
			return armRank[a.Arm] - armRank[b.Arm]
		}
		return phaseRank[a.Phase] - phaseRank[b.Phase]
	})
	for _, r := range rows {
		vals := []export.Value{export.Str(r.Arm), export.Str(r.Phase), export.Int(int64(r.N)), export.Int(int64(r.Blocks))}
		for _, m := range parts {
			s := r.Metrics[m.Name()]
			v := s.Mean
			if m.Unit() == "ns" {
				v /= 1e3
			}
			if s.Absent {
				vals = append(vals, export.Null())
			} else {
				vals = append(vals, export.Float(round1(v)))
			}
			if m == phases.Wall {
				if s.MeanCI != nil {
					vals = append(vals, export.Str(fmt.Sprintf("[%.1f, %.1f]", s.MeanCI[0]/1e3, s.MeanCI[1]/1e3)))
				} else {
					vals = append(vals, export.Null())
				}
			}
		}
		_ = t.AppendRow(vals...)
	}
	return t
}
