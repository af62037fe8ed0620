package export

import (
	"bytes"
	"fmt"
	"iter"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// pqarrowParquet writes chunks as writeParquetChunks did before its
// columns were encoded concurrently: one pqarrow.FileWriter.Write per
// chunk. It is the reference the concurrent writer must match byte for
// byte.
func pqarrowParquet(tb testing.TB, chunks []*Table, opt Options) []byte {
	tb.Helper()
	var buf bytes.Buffer
	var fw *pqarrow.FileWriter
	for _, t := range chunks {
		rec, err := arrowRecord(t, opt)
		if err != nil {
			tb.Fatal(err)
		}
		if fw == nil {
			arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
			if fw, err = pqarrow.NewFileWriter(rec.Schema(), writeOnly{&buf}, parquetProperties(t, opt), arrProps); err != nil {
				tb.Fatal(err)
			}
		}
		err = fw.Write(rec)
		rec.Release()
		if err != nil {
			tb.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// nullShapes has nullable columns of every shape pqarrow tells apart (no
// nulls, some, all) and required ones, of every type.
func nullShapes(n int) *Table {
	t := NewTable("shapes", "null shapes",
		Column{Name: "none_i", Type: TypeInt64, Nullable: true},
		Column{Name: "some_i", Type: TypeInt64, Nullable: true},
		Column{Name: "all_i", Type: TypeInt64, Nullable: true},
		Column{Name: "req_i", Type: TypeInt64, Unit: UnitNanoseconds, Doc: "required"},
		Column{Name: "some_f", Type: TypeFloat64, Nullable: true},
		Column{Name: "all_f", Type: TypeFloat64, Nullable: true},
		Column{Name: "some_b", Type: TypeBool, Nullable: true},
		Column{Name: "req_b", Type: TypeBool},
		Column{Name: "none_s", Type: TypeString, Nullable: true},
		Column{Name: "some_s", Type: TypeString, Nullable: true},
		Column{Name: "all_s", Type: TypeString, Nullable: true},
		Column{Name: "req_s", Type: TypeString},
	)
	for i := range n {
		some := func(v Value) Value {
			if i%3 == 1 {
				return Null()
			}
			return v
		}
		s := Str(fmt.Sprintf("name_%d", i%5))
		if err := t.AppendRow(Int(int64(i)), some(Int(int64(i*7))), Null(), Int(int64(-i)),
			some(Float(float64(i)/3)), Null(), some(Bool(i%2 == 0)), Bool(i%4 == 0),
			s, some(s), Null(), s); err != nil {
			panic(err)
		}
	}
	return t
}

// bigColumns has an int64 column of several data pages (1 MiB each) and a
// string column whose dictionary outgrows its 1 MiB limit, so the writer
// falls back to plain encoding mid-column.
func bigColumns(n int) *Table {
	t := NewTable("big", "", Column{Name: "i", Type: TypeInt64}, Column{Name: "s", Type: TypeString, Nullable: true})
	for i := range n {
		s := Str(fmt.Sprintf("%064d", i))
		if i%11 == 0 {
			s = Null()
		}
		if err := t.AppendRow(Int(int64(i)*0x5E3779B97F4A7C15), s); err != nil {
			panic(err)
		}
	}
	return t
}

// TestParquetSameBytesAsPqarrow: the concurrent writer writes exactly the
// file pqarrow.FileWriter writes, for every column shape, several row
// groups, chunked writes, empty tables, multi-page columns and dictionary
// fallback. Run it with -race: the columns are encoded concurrently.
func TestParquetSameBytesAsPqarrow(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 4 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // several encoders even on a small machine
	}
	md := Options{Metadata: map[string]string{MetaVersion: "test", "z": "last"}}
	cases := []struct {
		name   string
		chunks []*Table
		opt    Options
	}{
		{"sample", []*Table{sampleTable(t)}, Options{}},
		{"random", []*Table{randomTable(10_000, 1)}, md},
		{"random-row-groups", []*Table{randomTable(10_000, 2)}, Options{RowGroupRows: 3000}},
		{"random-tiny-row-groups", []*Table{randomTable(300, 6)}, Options{RowGroupRows: 3}}, // slices with and without nulls
		{"shapes", []*Table{nullShapes(1000)}, md},
		{"shapes-row-groups", []*Table{nullShapes(1000)}, Options{RowGroupRows: 64}},
		{"chunks", []*Table{randomTable(5000, 3), randomTable(5000, 4), randomTable(17, 5)}, Options{RowGroupRows: 5000}},
		{"chunks-split", []*Table{nullShapes(300), nullShapes(7)}, Options{RowGroupRows: 100}},
		{"empty", []*Table{NewTable("empty", "", Column{Name: "x", Type: TypeString, Nullable: true}, Column{Name: "y", Type: TypeInt64})}, Options{}},
		{"big", []*Table{bigColumns(200_000)}, Options{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := pqarrowParquet(t, c.chunks, c.opt)
			var got bytes.Buffer
			var rest iter.Seq[*Table] = func(yield func(*Table) bool) {
				for _, t := range c.chunks[1:] {
					if !yield(t) {
						return
					}
				}
			}
			if err := writeParquetChunks(&got, c.chunks[0], rest, c.opt); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("%d bytes, pqarrow writes %d; they differ", got.Len(), len(want))
			}
		})
	}
}

// TestParquetChunkSchemaMismatch: a chunk with other columns is an error,
// not a corrupt file.
func TestParquetChunkSchemaMismatch(t *testing.T) {
	other := NewTable("random", "random rows", Column{Name: "x", Type: TypeInt64})
	_ = other.AppendRow(Int(1))
	err := writeParquetChunks(&bytes.Buffer{}, randomTable(10, 1), func(yield func(*Table) bool) { yield(other) }, Options{})
	if err == nil {
		t.Fatal("no error for a chunk with other columns")
	}
}

// instancesShaped is 48,000 rows of 70 columns, as phase_instances of
// large_interleaved: 8 strings, 4 nullable columns, the rest int64.
func instancesShaped(n int) *Table {
	cols := []Column{
		{Name: "file", Type: TypeString}, {Name: "arm", Type: TypeString}, {Name: "block_label", Type: TypeString},
		{Name: "phase", Type: TypeString}, {Name: "thread", Type: TypeString}, {Name: "step_label", Type: TypeString},
		{Name: "is_step", Type: TypeBool}, {Name: "warmup", Type: TypeBool},
		{Name: "queue_mean_ns", Type: TypeFloat64, Nullable: true},
		{Name: "phase_gap_ns", Type: TypeInt64, Nullable: true}, {Name: "unattributed_kernel_ns", Type: TypeInt64, Nullable: true},
	}
	for i := len(cols); i < 70; i++ {
		cols = append(cols, Column{Name: fmt.Sprintf("m%d_ns", i), Type: TypeInt64, Unit: UnitNanoseconds})
	}
	t := NewTable("phase_instances", "", cols...)
	a := t.AppendRows(n)
	for r := range n {
		a.SetString(0, r, "large_interleaved.sqlite")
		a.SetString(1, r, fmt.Sprintf("arm%d", r/(n/2)))
		a.SetString(2, r, fmt.Sprintf("large_interleaved.sqlite#arm%d block %d", r/(n/2), r/1000))
		a.SetString(3, r, fmt.Sprintf("phase_%d", r%14))
		a.SetString(4, r, "python")
		a.SetString(5, r, "")
		a.Int64s(6)[r] = int64(r % 14 / 13)
		a.Float64s(8)[r] = float64(r) * 1.5
		if r%14 != 13 {
			a.SetNull(8, r)
			a.SetNull(9, r)
			a.SetNull(10, r)
		}
		for c := 11; c < 70; c++ {
			a.Int64s(c)[r] = int64(r)*int64(c)*7919 + int64(r%97)
		}
	}
	return t
}

// BenchmarkWriteParquetInstances48kx70 times the phase_instances-shaped
// table, whose columns the writer encodes concurrently.
func BenchmarkWriteParquetInstances48kx70(b *testing.B) {
	t := instancesShaped(48_000)
	var size countingWriter
	for b.Loop() {
		size = 0
		if err := Write(&size, t, FormatParquet, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size)/1e6, "MB")
}
