package export

import (
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

const benchRows = 500_000

// wideTable has 20 columns shaped like phase instances: 11 int64 (ns,
// bytes, ids; two nullable), 4 float64 (one nullable), 4 dictionary
// strings of 8, 500, 40 and 3 distinct ~60-byte values, and a bool.
func wideTable(b *testing.B, n int) *Table {
	b.Helper()
	cols := []Column{}
	for i := range 11 {
		cols = append(cols, Column{Name: fmt.Sprintf("i%d_ns", i), Type: TypeInt64, Unit: UnitNanoseconds, Nullable: i >= 9})
	}
	for i := range 4 {
		cols = append(cols, Column{Name: fmt.Sprintf("f%d", i), Type: TypeFloat64, Nullable: i == 3})
	}
	cards := []int{8, 500, 40, 3}
	for i := range cards {
		cols = append(cols, Column{Name: fmt.Sprintf("s%d", i), Type: TypeString})
	}
	cols = append(cols, Column{Name: "sync", Type: TypeBool})
	names := make([][]string, len(cards))
	for i, c := range cards {
		for j := range c {
			names[i] = append(names[i], fmt.Sprintf("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_%03d_%02d>(Params)", j, i))
		}
	}
	t := NewTable("wide", "benchmark table", cols...)
	t.Grow(n)
	rng := rand.New(rand.NewPCG(1, 2))
	row := make([]Value, len(cols))
	start := int64(1_700_000_000_000_000_000)
	for r := range n {
		start += rng.Int64N(10_000)
		for i := range 11 {
			row[i] = Int(start + int64(i)*rng.Int64N(1000))
		}
		if r%13 == 0 {
			row[9], row[10] = Null(), Null()
		}
		for i := range 4 {
			row[11+i] = Float(rng.Float64())
		}
		if r%7 == 0 {
			row[14] = Null()
		}
		for i, c := range cards {
			row[15+i] = Str(names[i][rng.IntN(c)])
		}
		row[19] = Bool(r%3 == 0)
		if err := t.AppendRow(row...); err != nil {
			b.Fatal(err)
		}
	}
	return t
}

func BenchmarkBuildTable500k(b *testing.B) {
	iters := 0
	for b.Loop() {
		wideTable(b, benchRows)
		iters++
	}
	b.ReportMetric(float64(benchRows*iters)/b.Elapsed().Seconds(), "rows/s")
}

func benchmarkWrite(b *testing.B, f Format, opt Options) {
	t := wideTable(b, benchRows)
	var size countingWriter
	iters := 0
	for b.Loop() {
		iters++
		size = 0
		if err := Write(&size, t, f, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size)/1e6, "MB")
	b.ReportMetric(float64(benchRows*iters)/b.Elapsed().Seconds(), "rows/s")
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)

func BenchmarkWriteParquet500kx20(b *testing.B) { benchmarkWrite(b, FormatParquet, Options{}) }
func BenchmarkWriteArrow500kx20(b *testing.B)   { benchmarkWrite(b, FormatArrow, Options{}) }
func BenchmarkWriteArrowZstd500kx20(b *testing.B) {
	benchmarkWrite(b, FormatArrow, Options{ArrowCompression: ArrowZstd})
}
func BenchmarkWriteCSV500kx20(b *testing.B) { benchmarkWrite(b, FormatCSV, Options{}) }

func BenchmarkReadParquet500kx20(b *testing.B) {
	path := b.TempDir() + "/wide.parquet"
	if err := WriteFile(path, wideTable(b, benchRows), FormatParquet, Options{}); err != nil {
		b.Fatal(err)
	}
	iters := 0
	for b.Loop() {
		iters++
		if _, err := ReadParquet(path); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRows*iters)/b.Elapsed().Seconds(), "rows/s")
}
