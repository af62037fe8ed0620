package nsys_test

import (
	"slices"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// TestIntsEqualRows: the core scans of the API and kernel tables
// (APICoresIn, KernelCoresIn) hand over exactly the values of the row
// scans, row for row, part by part, through the pages and through SQLite.
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
				f.ScanThroughSQLite(sql)
				rows := 0
				for _, table := range []string{nsys.TableRuntime, nsys.TableKernel} {
					for _, r := range f.SplitTable(table, 3, 2) {
						want := rowInts(t, f, table, r)
						rows += len(want)
						compareInts(t, f, table, r, want)
					}
				}
				if rows == 0 {
					t.Fatalf("sql=%v: no API calls or kernels", sql)
				}
			}
		})
	}
}

// rowInts reads part r of table through its row scan, as the six core
// columns KernelCoresIn and APICoresIn hand over.
func rowInts(t *testing.T, f *nsys.File, table string, r nsys.Part) [][6]int64 {
	t.Helper()
	var out [][6]int64
	if table == nsys.TableKernel {
		for k, err := range f.KernelsCoreIn(r) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, [6]int64{k.Start, k.End, k.GlobalPid, k.DeviceID, k.CorrelationID, k.GraphNodeID})
		}
		return out
	}
	for c, err := range f.APICallsCoreIn(r) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, [6]int64{c.Start, c.End, c.GlobalTid, c.CorrelationID, c.NameID, c.EventClass})
	}
	return out
}

func compareInts(t *testing.T, f *nsys.File, table string, r nsys.Part, want [][6]int64) {
	t.Helper()
	var got [][6]int64
	var err error
	if table == nsys.TableKernel {
		err = f.KernelCoresIn(r, func(k *nsys.KernelCore) bool {
			got = append(got, [6]int64{k.Start, k.End, k.GlobalPid, k.DeviceID, k.CorrelationID, k.GraphNodeID})
			return true
		})
	} else {
		err = f.APICoresIn(r, func(c *nsys.APICore) bool {
			got = append(got, [6]int64{c.Start, c.End, c.GlobalTid, c.CorrelationID, c.NameID, c.EventClass})
			return true
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s %+v: the core scan gives %d rows that differ from the row scan's %d", table, r, len(got), len(want))
	}
}
