package export

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// readBothWays reads path with readParquetDirect (which must decode it) and
// through pqarrow's arrays, and requires the same table of both.
func readBothWays(t *testing.T, path string) *Table {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	kv := rdr.MetaData().KeyValueMetadata()
	md := arrow.NewMetadata(kv.Keys(), kv.Values())
	props := pqarrow.ArrowReadProperties{BatchSize: 64 << 10}
	sc, err := pqarrow.FromParquet(rdr.MetaData().Schema, &props, kv)
	if err != nil {
		t.Fatal(err)
	}
	name := tableStem(path)
	if i := md.FindKey(MetaTable); i >= 0 {
		name = md.Values()[i]
	}
	direct, ok, err := readParquetDirect(rdr, arrow.NewSchema(sc.Fields(), &md), name)
	if err != nil || !ok {
		t.Fatalf("direct read: ok %v, %v", ok, err)
	}
	viaArrow, err := readParquetArrow(rdr, props, md, path)
	if err != nil {
		t.Fatal(err)
	}
	requireEqualTables(t, direct, viaArrow)
	return direct
}

// TestParquetDirectRead: the direct decoder gives the table the Arrow
// path gives — nulls of every type, several row groups and pages, and a
// foreign file's narrow integers and float32 widened (unsigned ones
// without a sign) — and ReadParquet keeps the file's metadata.
func TestParquetDirectRead(t *testing.T) {
	tab := randomTable(20_000, 3)
	path := writeTemp(t, tab, FormatParquet, Options{RowGroupRows: 3000, Metadata: map[string]string{MetaVersion: "x"}})
	requireEqualTables(t, readBothWays(t, path), tab)
	got, err := ReadParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	if md, err := ReadParquetMetadata(path); err != nil || got.FileMetadata()[MetaVersion] != "x" || len(got.FileMetadata()) != len(md) {
		t.Fatalf("FileMetadata %v, ReadParquetMetadata %v (%v)", got.FileMetadata(), md, err)
	}

	// Lean: the same rows and column types, without units and docs.
	lean, err := readParquet(path, true)
	if err != nil {
		t.Fatal(err)
	}
	want := NewTable(tab.Name, tab.Doc)
	for _, c := range tab.Columns() {
		c.Unit, c.Doc = "", ""
		want.cols = append(want.cols, c)
	}
	want.data, want.rows = tab.data, tab.rows
	requireEqualTables(t, lean, want)

	// A foreign writer's narrow types.
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int8Builder).AppendValues([]int8{-128, 0, 127}, []bool{true, false, true})
	b.Field(1).(*array.Uint32Builder).AppendValues([]uint32{0, 1 << 31, 1<<32 - 1}, nil)
	b.Field(2).(*array.Float32Builder).AppendValues([]float32{1.5, -2, 0}, []bool{true, true, false})
	b.Field(3).(*array.StringBuilder).AppendValues([]string{"a", "", "a"}, []bool{true, false, true})
	rec := b.NewRecordBatch()
	defer rec.Release()
	foreign := filepath.Join(t.TempDir(), "foreign.parquet")
	f, err := os.Create(foreign)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ft := readBothWays(t, foreign)
	wantRows := [][]Value{
		{Int(-128), Int(0), Float(1.5), Str("a")},
		{Null(), Int(1 << 31), Float(-2), Null()},
		{Int(127), Int(1<<32 - 1), Null(), Str("a")},
	}
	for r, row := range wantRows {
		for c, w := range row {
			if g := ft.Value(r, c); !sameValue(g, w) {
				t.Errorf("foreign row %d column %s: %v, want %v", r, ft.Column(c).Name, g, w)
			}
		}
	}
}
