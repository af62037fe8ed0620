package nsys_test

import (
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

func openLarge(b *testing.B) *nsys.File {
	b.Helper()
	f, err := nsys.Open(fixture.Get(b, fixture.LargeName).SQLite(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

// BenchmarkScanAPICore: row decoding of the biggest table, column-pruned.
func BenchmarkScanAPICore(b *testing.B) {
	f := openLarge(b)
	for b.Loop() {
		var n, s int64
		for c, err := range f.APICallsCoreIn(nsys.AllRows) {
			if err != nil {
				b.Fatal(err)
			}
			n++
			s += c.End - c.Start
		}
		b.ReportMetric(float64(n), "rows")
	}
}

// BenchmarkScanKernelOps: kernels, column-pruned.
func BenchmarkScanKernelOps(b *testing.B) {
	f := openLarge(b)
	for b.Loop() {
		for _, err := range f.KernelsCoreIn(nsys.AllRows) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkScanAPIFull: every API column, for comparison.
func BenchmarkScanAPIFull(b *testing.B) {
	f := openLarge(b)
	for b.Loop() {
		for _, err := range f.APICalls() {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkScanAPICoreSQL: the same rows through SQLite's virtual machine
// (File.SQLScans), the path the page reader replaced.
func BenchmarkScanAPICoreSQL(b *testing.B) {
	f := openLarge(b)
	f.ScanThroughSQLite(true)
	for b.Loop() {
		for _, err := range f.APICallsCoreIn(nsys.AllRows) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkScanKernelCores: kernels as the engine reads them, the core
// columns handed over without an iterator step (KernelCoresIn).
func BenchmarkScanKernelCores(b *testing.B) {
	f := openLarge(b)
	for b.Loop() {
		var s int64
		if err := f.KernelCoresIn(nsys.AllRows, func(k *nsys.KernelCore) bool { s += k.End - k.Start; return true }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanAPICores: API calls as the engine reads them (APICoresIn).
func BenchmarkScanAPICores(b *testing.B) {
	f := openLarge(b)
	for b.Loop() {
		var s int64
		if err := f.APICoresIn(nsys.AllRows, func(c *nsys.APICore) bool { s += c.End - c.Start; return true }); err != nil {
			b.Fatal(err)
		}
	}
}
