package nsys_test

import (
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// TestNVTXPartsEqualEvents: the engine's NVTX scan, cut into parts along the
// B-tree, yields NVTXEvents row for row (rangeId, category and color, which
// it does not read, left zero), through the pages and through SQLite, on
// every bundled and public export.
func TestNVTXPartsEqualEvents(t *testing.T) {
	fxs := append(fixture.All(t), fixture.Public(t)...)
	cut := 0 // exports whose table came in several parts
	for _, fx := range fxs {
		if fx.Name == fixture.NotNsysPublic || fx.Name == fixture.LargeName {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			f, err := nsys.Open(fx.SQLite(t))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var want []nsys.NVTXEvent
			for e, err := range f.NVTXEvents() {
				if err != nil {
					t.Fatal(err)
				}
				e.RangeID, e.Category, e.Color = 0, 0, 0
				want = append(want, e)
			}
			for _, viaSQL := range []bool{false, true} {
				f.ScanThroughSQLite(viaSQL)
				var got []nsys.NVTXEvent
				parts := f.SplitTable(nsys.TableNVTX, 4, 0)
				if len(parts) > 1 {
					cut++
				}
				for _, r := range parts {
					for e, err := range f.NVTXEventsCoreIn(r) {
						if err != nil {
							t.Fatal(err)
						}
						got = append(got, e)
					}
				}
				if len(got) != len(want) {
					t.Fatalf("sql %v: %d rows in parts, %d events", viaSQL, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("sql %v: row %d: parts %+v, events %+v", viaSQL, i, got[i], want[i])
					}
				}
			}
			f.ScanThroughSQLite(false)
		})
	}
	if cut == 0 {
		t.Error("no export's NVTX table was cut into parts: the parts went untested")
	}
}
