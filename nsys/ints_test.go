package nsys_test

import (
	"slices"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/internal/rowparts"
	"github.com/nsysphase/nsysphase/nsys"
)

// TestIntsEqualRows: the integer scan of the API and kernel tables hands
// over exactly the values of the row scans, row for row, part by part,
// through the pages and through SQLite.
func TestIntsEqualRows(t *testing.T) {
	for _, fx := range append(fixture.All(t), fixture.Extra(t)...) {
		if fx.Name == fixture.LargeName {
			continue // the page reader itself is checked on it (TestPageScansEqualSQLite)
		}
		t.Run(fx.Name, func(t *testing.T) {
			f, err := nsys.Open(fx.SQLite(t))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, sql := range []bool{false, true} {
				rowparts.SQLScans(f, sql)
				rows := 0
				for _, r := range rowparts.Split(f, nsys.TableRuntime, 3, 2) {
					var want [][6]int64
					for c, err := range rowparts.Rows[nsys.APICall](f, nsys.TableRuntime, r) {
						if err != nil {
							t.Fatal(err)
						}
						want = append(want, [6]int64{c.Start, c.End, c.GlobalTid, c.CorrelationID, c.NameID, c.EventClass})
					}
					rows += len(want)
					compareInts(t, f, nsys.TableRuntime, r, want)
				}
				for _, r := range rowparts.Split(f, nsys.TableKernel, 3, 2) {
					var want [][6]int64
					for k, err := range rowparts.Rows[nsys.Kernel](f, nsys.TableKernel, r) {
						if err != nil {
							t.Fatal(err)
						}
						want = append(want, [6]int64{k.Start, k.End, k.GlobalPid, k.DeviceID, k.CorrelationID, k.GraphNodeID})
					}
					rows += len(want)
					compareInts(t, f, nsys.TableKernel, r, want)
				}
				if rows == 0 {
					t.Fatalf("sql=%v: no API calls or kernels", sql)
				}
			}
		})
	}
}

func compareInts(t *testing.T, f *nsys.File, table string, r rowparts.Range, want [][6]int64) {
	t.Helper()
	var got [][6]int64
	if err := rowparts.Ints(f, table, r, func(v *[6]int64) bool { got = append(got, *v); return true }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s %+v: the integer scan gives %d rows that differ from the row scan's %d", table, r, len(got), len(want))
	}
}
