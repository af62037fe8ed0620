package projection

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// vendorCSVRow is a row of the vendor's nvtx_gpu_proj_sum CSV, by header.
type vendorCSVRow map[string]string

func readVendorCSV(t *testing.T, path string) []vendorCSVRow {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var out []vendorCSVRow
	for _, rec := range recs[1:] {
		row := vendorCSVRow{}
		for i, h := range recs[0] {
			row[h] = rec[i]
		}
		out = append(out, row)
	}
	return out
}

func (r vendorCSVRow) int(t *testing.T, col string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(r[col], 10, 64)
	if err != nil {
		t.Fatalf("column %q: %v", col, err)
	}
	return v
}

func (r vendorCSVRow) float(t *testing.T, col string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(r[col], 64)
	if err != nil {
		t.Fatalf("column %q: %v", col, err)
	}
	return v
}

// checkRangeRow compares one row of the view with the vendor's row of
// nvtx_gpu_proj_sum: the integer columns exactly, the statistics it prints
// to their rounding (Avg Range Lvl, printed only where the vendor has one,
// is left to the caller).
func checkRangeRow(t *testing.T, g Range, w vendorCSVRow) {
	t.Helper()
	for _, c := range []struct {
		col string
		got int64
	}{
		{"Range Instances", g.Instances}, {"Total Range Time (ns)", g.RangeNs}, {"Total Proj Time (ns)", g.ProjNs},
		{"Total GPU Ops", g.GPUOps}, {"Proj Min (ns)", g.ProjMinNs}, {"Proj Max (ns)", g.ProjMaxNs},
	} {
		if v := w.int(t, c.col); c.got != v {
			t.Errorf("%q %s: %s = %d, vendor %d", g.Name, g.Style, c.col, c.got, v)
		}
	}
	for _, c := range []struct {
		col string
		got float64
	}{
		{"Proj Avg (ns)", g.ProjMeanNs}, {"Proj Med (ns)", g.ProjMedianNs}, {"Proj StdDev (ns)", g.ProjStdDevNs},
		{"Avg GPU Ops", g.AvgGPUOps}, {"Avg Num Child", g.AvgChildren},
	} {
		if v := w.float(t, c.col); !closeToPrinted(c.got, v) {
			t.Errorf("%q %s: %s = %.3f, vendor prints %.1f", g.Name, g.Style, c.col, c.got, v)
		}
	}
}

// closeToPrinted reports whether got rounds to the vendor's one-decimal print.
func closeToPrinted(got, printed float64) bool {
	return math.Abs(got-printed) <= 0.05+1e-9*math.Abs(printed)
}

// openFixture opens fx for the test and closes it after.
func openFixture(t testing.TB, fx fixture.Fixture) *nsys.File {
	t.Helper()
	f, err := nsys.Open(fx.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// vendorWarnings are the oddities of the real exports that the view reports;
// the others must report none.
var vendorWarnings = map[string]string{
	"nvtx_streams": "185 NVTX start/end ranges ended on another thread",
}

// TestVendorProjectionEqualsVendor compares every row of nvtx_gpu_proj_sum on
// every fixture: the same (Range, Style) set in the same order, exact integer
// columns, and the printed statistics to their 0.1 rounding.
func TestVendorProjectionEqualsVendor(t *testing.T) {
	for _, fx := range fixture.WithExtra(t) {
		t.Run(fx.Name, func(t *testing.T) {
			path := filepath.Join(fx.VendorDir, fx.Name+"_nvtx_gpu_proj_sum.csv")
			if _, err := os.Stat(path); err != nil {
				t.Skipf("no vendor nvtx_gpu_proj_sum for %s", fx.Name)
			}
			want := readVendorCSV(t, path)
			rep, err := Project(openFixture(t, fx))
			if err != nil {
				t.Fatal(err)
			}
			if want, ok := vendorWarnings[fx.Name]; ok {
				if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0].Message, want) {
					t.Errorf("warnings %q, want one with %q", rep.Warnings, want)
				}
			} else if len(rep.Warnings) > 0 {
				t.Errorf("warnings on a healthy export: %q", rep.Warnings)
			}
			got := rep.Ranges
			if len(got) != len(want) {
				t.Errorf("%d rows, vendor has %d", len(got), len(want))
			}
			type key struct{ name, style string }
			byKey := map[key]Range{}
			for _, g := range got {
				byKey[key{g.Name, g.Style}] = g
			}
			for i, w := range want {
				k := key{w["Range"], w["Style"]}
				g, ok := byKey[k]
				if !ok {
					t.Errorf("vendor row %q (%s) missing", k.name, k.style)
					continue
				}
				delete(byKey, k)
				checkRangeRow(t, g, w)
				if w["Avg Range Lvl"] == "" {
					if g.HasAvgLevel {
						t.Errorf("%q %s: Avg Range Lvl %.3f, vendor prints none", k.name, k.style, g.AvgLevel)
					}
				} else if v := w.float(t, "Avg Range Lvl"); !closeToPrinted(g.AvgLevel, v) {
					t.Errorf("%q %s: Avg Range Lvl = %.3f, vendor prints %.1f", k.name, k.style, g.AvgLevel, v)
				}
				// The vendor sorts by Total Proj Time descending; where totals
				// tie its order is arbitrary.
				if i < len(got) && got[i].Name != k.name && got[i].ProjNs != g.ProjNs {
					t.Errorf("row %d is %q, vendor has %q there", i, got[i].Name, k.name)
				}
			}
			for k := range byKey {
				t.Errorf("row %q (%s) is not in the vendor's report", k.name, k.style)
			}
			t.Logf("%d rows equal the vendor's", len(want))
		})
	}
}

// TestVendorTraceEqualsVendor compares every instance of nvtx_gpu_proj_trace
// where the vendor's trace CSV exists (interleaved_graph in ../shared),
// including the tree columns Lvl and NumChild.
func TestVendorTraceEqualsVendor(t *testing.T) {
	for _, fx := range fixture.WithExtra(t) {
		var path string
		for _, dir := range []string{fx.VendorDir, filepath.Join(fixture.SharedDir(), "vendor-stats")} {
			p := filepath.Join(dir, fx.Name+"_nvtx_gpu_proj_trace.csv")
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			want := readVendorCSV(t, path)
			rep, err := Trace(openFixture(t, fx))
			if err != nil {
				t.Fatal(err)
			}
			got := rep.Trace
			if len(got) != len(want) {
				t.Fatalf("%d instances, vendor has %d", len(got), len(want))
			}
			for i, w := range want {
				g := got[i]
				checks := []struct {
					col string
					got int64
				}{
					{"Projected Start (ns)", g.ProjStartNs}, {"Projected Duration (ns)", g.ProjNs},
					{"Orig Start (ns)", g.StartNs}, {"Orig Duration (ns)", g.RangeNs},
					{"PID", g.Pid}, {"TID", g.Tid}, {"NumGPUOps", g.GPUOps}, {"Lvl", g.Level}, {"NumChild", g.Children},
				}
				if g.Name != w["Name"] || g.Style != w["Style"] {
					t.Errorf("instance %d: %q %s, vendor %q %s", i, g.Name, g.Style, w["Name"], w["Style"])
				}
				for _, c := range checks {
					if v := w.int(t, c.col); c.got != v {
						t.Errorf("instance %d (%q at %d): %s = %d, vendor %d", i, g.Name, g.StartNs, c.col, c.got, v)
					}
				}
				if t.Failed() && i > 20 {
					t.FailNow()
				}
			}
			t.Logf("%d instances equal the vendor's trace", len(want))
		})
	}
}

// BenchmarkVendorProjectionLarge times the whole view on large_interleaved
// (1.13M API calls, 660k kernels, 66k ranges): scans, join and sweep.
func BenchmarkVendorProjectionLarge(b *testing.B) {
	fx := fixture.Get(b, fixture.LargeName)
	f := openFixture(b, fx)
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		rep, err := Project(f)
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Ranges) == 0 {
			b.Fatal("no rows")
		}
	}
	// On a shared machine wall time swings with the neighbours' load; the
	// CPU time the process spent (both cores) is the steadier figure.
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// cpuTime is the user plus system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
