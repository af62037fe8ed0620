package export

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// requireEqualTables fails unless a and b have the same name, doc, columns
// (name, type, unit, doc, nullability) and cells, nulls included. NaN equals
// NaN; -0 and +0 are told apart.
func requireEqualTables(tb testing.TB, got, want *Table) {
	tb.Helper()
	if got.Name != want.Name || got.Doc != want.Doc {
		tb.Fatalf("table %q (%q), want %q (%q)", got.Name, got.Doc, want.Name, want.Doc)
	}
	if !slices.Equal(got.Columns(), want.Columns()) {
		tb.Fatalf("columns differ:\n got %+v\nwant %+v", got.Columns(), want.Columns())
	}
	if got.Len() != want.Len() {
		tb.Fatalf("%d rows, want %d", got.Len(), want.Len())
	}
	bad := 0
	for r := range want.Len() {
		for c := range want.NumColumns() {
			g, w := got.Value(r, c), want.Value(r, c)
			if !sameValue(g, w) {
				tb.Errorf("row %d column %s: got %v, want %v", r, want.Column(c).Name, g, w)
				if bad++; bad > 10 {
					tb.FailNow()
				}
			}
		}
	}
}

func sameValue(a, b Value) bool {
	if a.typ == TypeFloat64 && b.typ == TypeFloat64 {
		return math.Float64bits(a.f) == math.Float64bits(b.f) || math.IsNaN(a.f) && math.IsNaN(b.f)
	}
	return a == b
}

// randomTable returns n rows of all types, with nulls and repeated strings.
func randomTable(n int, seed uint64) *Table {
	rng := rand.New(rand.NewPCG(seed, 1))
	t := NewTable("random", "random rows",
		Column{Name: "kernel", Type: TypeString, Nullable: true},
		Column{Name: "start_ns", Type: TypeInt64, Unit: UnitNanoseconds},
		Column{Name: "dur_ns", Type: TypeInt64, Unit: UnitNanoseconds, Nullable: true},
		Column{Name: "share", Type: TypeFloat64, Nullable: true},
		Column{Name: "sync", Type: TypeBool},
	)
	t.Grow(n)
	for i := range n {
		kernel := Str(fmt.Sprintf("kernel_%d", rng.IntN(50)))
		if rng.IntN(10) == 0 {
			kernel = Null()
		}
		dur := Int(rng.Int64N(1e9))
		if rng.IntN(7) == 0 {
			dur = Null()
		}
		share := Float(rng.Float64())
		if rng.IntN(5) == 0 {
			share = Null()
		}
		if err := t.AppendRow(kernel, Int(int64(i)*1000+bigInt), dur, share, Bool(rng.IntN(2) == 0)); err != nil {
			panic(err)
		}
	}
	return t
}

func writeTemp(tb testing.TB, t *Table, f Format, opt Options) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), t.Name+f.Ext())
	if err := WriteFile(path, t, f, opt); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestParquetRoundTrip(t *testing.T) {
	for _, tab := range []*Table{
		sampleTable(t),
		randomTable(10_000, 1),
		NewTable("empty", "", Column{Name: "x", Type: TypeString, Nullable: true}, Column{Name: "y", Type: TypeInt64}),
	} {
		t.Run(tab.Name, func(t *testing.T) {
			// Small row groups so reading meets several chunks.
			path := writeTemp(t, tab, FormatParquet, Options{RowGroupRows: 3000})
			got, err := ReadParquet(path)
			if err != nil {
				t.Fatal(err)
			}
			requireEqualTables(t, got, tab)
		})
	}
}

func TestArrowRoundTrip(t *testing.T) {
	for _, comp := range []ArrowCompression{ArrowUncompressed, ArrowLZ4, ArrowZstd} {
		for _, tab := range []*Table{sampleTable(t), randomTable(5000, 2)} {
			t.Run(fmt.Sprintf("%s/%d", tab.Name, comp), func(t *testing.T) {
				path := writeTemp(t, tab, FormatArrow, Options{ArrowCompression: comp})
				got, err := ReadArrow(path)
				if err != nil {
					t.Fatal(err)
				}
				requireEqualTables(t, got, tab)
			})
		}
	}
}

func TestParquetMetadata(t *testing.T) {
	opt := Options{Metadata: map[string]string{
		MetaSchemaVersion: "1",
		MetaVersion:       "0.1.0-test",
		MetaInputs:        InputsMetadata([]Input{{Path: "a.nsys-rep", SHA256: strings.Repeat("ab", 32)}}),
		MetaNsysVersion:   "2025.3.1",
		MetaGPU:           "NVIDIA H200",
	}}
	path := writeTemp(t, sampleTable(t), FormatParquet, opt)
	md, err := ReadParquetMetadata(path)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range opt.Metadata {
		if md[k] != v {
			t.Errorf("metadata %s = %q, want %q", k, md[k], v)
		}
	}
	if md[MetaTable] != "phase_summary" || md[MetaTableDoc] == "" || md["ARROW:schema"] == "" {
		t.Errorf("table metadata missing: %v", md)
	}
	if md[MetaInputs] != `[{"path":"a.nsys-rep","sha256":"`+strings.Repeat("ab", 32)+`"}]` {
		t.Errorf("inputs = %s", md[MetaInputs])
	}

	// Keys come out in sorted order, before the table keys.
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	keys := rdr.MetaData().KeyValueMetadata().Keys()
	want := []string{MetaGPU, MetaInputs, MetaNsysVersion, MetaSchemaVersion, MetaVersion, MetaTable, MetaTableDoc, "ARROW:schema"}
	if !slices.Equal(keys, want) {
		t.Errorf("key order %v, want %v", keys, want)
	}

	if err := Write(&bytes.Buffer{}, sampleTable(t), FormatParquet, Options{Metadata: map[string]string{MetaTable: "x"}}); err == nil {
		t.Error("reserved metadata key accepted")
	}
}

// TestParquetEncodings checks the file layout itself: zstd everywhere,
// dictionary pages on string columns only, required vs optional fields.
func TestParquetEncodings(t *testing.T) {
	tab := randomTable(20_000, 3)
	path := writeTemp(t, tab, FormatParquet, Options{})
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	md := rdr.MetaData()
	if md.NumRowGroups() != 1 || md.NumRows != int64(tab.Len()) {
		t.Fatalf("%d row groups, %d rows", md.NumRowGroups(), md.NumRows)
	}
	rg := md.RowGroup(0)
	for i := range tab.NumColumns() {
		col := tab.Column(i)
		cc, err := rg.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		if cc.Compression() != compress.Codecs.Zstd {
			t.Errorf("%s: compression %v, want zstd", col.Name, cc.Compression())
		}
		dict := slices.Contains(cc.Encodings(), parquet.Encodings.RLEDict) || slices.Contains(cc.Encodings(), parquet.Encodings.PlainDict)
		if want := col.Type == TypeString; dict != want || cc.HasDictionaryPage() != want {
			t.Errorf("%s (%v): encodings %v, dictionary page %v; want dictionary %v", col.Name, col.Type, cc.Encodings(), cc.HasDictionaryPage(), want)
		}
		rep := rdr.MetaData().Schema.Column(i).SchemaNode().RepetitionType()
		if want := map[bool]parquet.Repetition{true: parquet.Repetitions.Optional, false: parquet.Repetitions.Required}[col.Nullable]; rep != want {
			t.Errorf("%s: repetition %v, want %v", col.Name, rep, want)
		}
	}
}

// TestDeterministicBytes: same table and options, same bytes.
func TestDeterministicBytes(t *testing.T) {
	opt := Options{Metadata: map[string]string{"b": "2", "a": "1", "c": "3", MetaVersion: "x"}}
	for _, f := range []Format{FormatParquet, FormatArrow, FormatCSV, FormatJSON, FormatText, FormatMarkdown} {
		var first, second bytes.Buffer
		if err := Write(&first, randomTable(3000, 4), f, opt); err != nil {
			t.Fatal(err)
		}
		if err := Write(&second, randomTable(3000, 4), f, opt); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Errorf("%v output differs between identical writes", f)
		}
	}
}

func TestWriteFileFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "broken.parquet")
	broken := NewTable("broken", "") // Parquet needs at least one column
	if err := WriteFile(path, broken, FormatParquet, Options{}); err == nil {
		t.Fatal("writing a table without columns succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed write left %v", entries)
	}
}

func TestReadParquetMissingFile(t *testing.T) {
	if _, err := ReadParquet(filepath.Join(t.TempDir(), "missing.parquet")); err == nil {
		t.Error("reading a missing file succeeded")
	}
}
