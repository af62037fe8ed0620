package dataset

import (
	"testing"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/phases"
)

// TestOlderDatasetLacksMetric: a phase_instances table written before a
// metric existed (no column for it) still loads with --from, the metric
// null (not measured) and every other value read — so adding a metric never
// breaks old datasets.
func TestOlderDatasetLacksMetric(t *testing.T) {
	missing := phases.MemsetNs
	var cols []export.Column
	var vals []export.Value
	for _, c := range instanceColumns() {
		if c.isMetric && c.metric == missing {
			continue
		}
		cols = append(cols, c.Column)
		switch {
		case c.Type == export.TypeString:
			vals = append(vals, export.Str("x"))
		case c.Type == export.TypeBool:
			vals = append(vals, export.Bool(false))
		case c.isMetric:
			vals = append(vals, export.Int(int64(c.metric)+1))
		case c.Type == export.TypeFloat64:
			vals = append(vals, export.Null())
		default:
			vals = append(vals, export.Int(0))
		}
	}
	tb := export.NewTable("phase_instances", "", cols...)
	if err := tb.AppendRow(vals...); err != nil {
		t.Fatal(err)
	}
	loc, err := locateColumns(tb)
	if err != nil {
		t.Fatalf("a dataset without %s is refused: %v", missing.Name(), err)
	}
	x, err := loc.instanceAt(tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !x.IsNull(missing) || x.IsNull(phases.Wall) || x.M[phases.Wall] != int64(phases.Wall)+1 || x.M[phases.KernelSum] != int64(phases.KernelSum)+1 {
		t.Errorf("read back: null %b, wall %d, kernel_sum %d", x.Null, x.M[phases.Wall], x.M[phases.KernelSum])
	}
}
