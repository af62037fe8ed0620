package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// bigInt is 2^53+1: the smallest int64 a float64 cannot hold, so any
// accidental float conversion shows.
const bigInt = 9_007_199_254_740_993

// tenth + fifth is 0.1+0.2 computed in float64 (as a constant it would be
// exactly 0.3): 0.30000000000000004 must survive exact formats.
var tenth, fifth = 0.1, 0.2

// sampleTable is a small table with every awkward case the renderers face.
func sampleTable(tb testing.TB) *Table {
	tb.Helper()
	t := NewTable("phase_summary", "Per-phase duration summary per arm",
		Column{Name: "phase", Type: TypeString, Doc: "phase name"},
		Column{Name: "arm", Type: TypeString, Nullable: true, Doc: "experiment arm"},
		Column{Name: "n", Type: TypeInt64, Unit: UnitCount, Doc: "instances"},
		Column{Name: "median_ns", Type: TypeInt64, Unit: UnitNanoseconds, Nullable: true, Doc: "median duration"},
		Column{Name: "bytes", Type: TypeInt64, Unit: UnitBytes, Nullable: true},
		Column{Name: "ratio", Type: TypeFloat64, Unit: UnitRatio, Nullable: true, Doc: "b over a"},
		Column{Name: "share_pct", Type: TypeFloat64, Unit: "%", Nullable: true},
		Column{Name: "sync", Type: TypeBool, Nullable: true, Doc: "host sync seen"},
	)
	rows := [][]Value{
		{Str("forward"), Str("a"), Int(10), Int(1_234_567), Int(4096), Float(1.5), Float(12.25), Bool(true)},
		{Str("backward, grad"), Str("b"), Int(0), Int(0), Int(0), Float(0), Float(0), Bool(false)},
		{Str("optimizer \"step\""), Null(), Int(3), Null(), Null(), Null(), Null(), Null()},
		{Str("前向 déjà|vu"), Str(""), Int(bigInt), Int(bigInt), Int(3 << 30), Float(2), Float(1e-9), Bool(true)},
		{Str("neg\ttab\nline"), Str("a"), Int(-1), Int(-999), Int(1023), Float(math.NaN()), Float(math.Inf(1)), Null()},
		{Str("allreduce"), Str("b"), Int(math.MaxInt64), Int(math.MinInt64), Int(1 << 50), Float(tenth + fifth), Float(-123456.789), Bool(false)},
	}
	for _, r := range rows {
		if err := t.AppendRow(r...); err != nil {
			tb.Fatal(err)
		}
	}
	return t
}

func TestGolden(t *testing.T) {
	tab := sampleTable(t)
	second := NewTable("empty", "A table without rows", Column{Name: "x", Type: TypeInt64})
	cases := []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"sample.txt", func(b *bytes.Buffer) error { return Write(b, tab, FormatText, Options{}) }},
		{"sample_human.txt", func(b *bytes.Buffer) error { return Write(b, tab, FormatText, Options{HumanUnits: true}) }},
		{"sample.csv", func(b *bytes.Buffer) error { return Write(b, tab, FormatCSV, Options{}) }},
		{"sample.json", func(b *bytes.Buffer) error { return Write(b, tab, FormatJSON, Options{}) }},
		{"sample.md", func(b *bytes.Buffer) error { return Write(b, tab, FormatMarkdown, Options{}) }},
		{"tables.json", func(b *bytes.Buffer) error { return WriteTables(b, []*Table{tab, second}, FormatJSON, Options{}) }},
		{"tables.txt", func(b *bytes.Buffer) error { return WriteTables(b, []*Table{tab, second}, FormatText, Options{}) }},
		{"tables.md", func(b *bytes.Buffer) error { return WriteTables(b, []*Table{tab, second}, FormatMarkdown, Options{}) }},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			var got bytes.Buffer
			if err := c.write(&got); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", c.file)
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./export -run TestGolden -update)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs from golden file; got:\n%s", c.file, got.Bytes())
			}
		})
	}
}

func TestJSONIsValidAndExact(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, sampleTable(t), FormatJSON, Options{}); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&b)
	dec.UseNumber()
	var rows []map[string]any
	if err := dec.Decode(&rows); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if got := rows[3]["median_ns"].(json.Number).String(); got != "9007199254740993" {
		t.Errorf("big int64 = %s, want 9007199254740993", got)
	}
	if got := rows[5]["median_ns"].(json.Number).String(); got != "-9223372036854775808" {
		t.Errorf("min int64 = %s", got)
	}
	if rows[2]["median_ns"] != nil || rows[2]["arm"] != nil {
		t.Errorf("nulls not null: %v", rows[2])
	}
	if rows[1]["median_ns"].(json.Number).String() != "0" {
		t.Errorf("measured zero lost: %v", rows[1]["median_ns"])
	}
	if rows[4]["ratio"] != nil {
		t.Errorf("NaN should be null, got %v", rows[4]["ratio"])
	}
	if got := rows[3]["ratio"].(json.Number).String(); got != "2.0" {
		t.Errorf("integral float = %s, want 2.0 (keeps the column a float)", got)
	}
	if got := rows[5]["ratio"].(json.Number).String(); got != "0.30000000000000004" {
		t.Errorf("float not exact: %s", got)
	}
	if rows[3]["phase"] != "前向 déjà|vu" || rows[4]["phase"] != "neg\ttab\nline" {
		t.Errorf("strings not preserved: %q %q", rows[3]["phase"], rows[4]["phase"])
	}
}

func TestCSVReadsBack(t *testing.T) {
	var b bytes.Buffer
	tab := sampleTable(t)
	if err := Write(&b, tab, FormatCSV, Options{}); err != nil {
		t.Fatal(err)
	}
	raw := b.String()
	recs, err := csv.NewReader(strings.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != tab.Len()+1 {
		t.Fatalf("%d records, want %d", len(recs), tab.Len()+1)
	}
	if recs[0][0] != "phase" || recs[2][0] != "backward, grad" || recs[3][0] != `optimizer "step"` || recs[5][0] != "neg\ttab\nline" {
		t.Errorf("strings did not survive quoting: %q", recs)
	}
	if recs[4][2] != "9007199254740993" {
		t.Errorf("big int = %q", recs[4][2])
	}
	// Null is an empty field, the empty string is "": they must differ.
	if !strings.Contains(raw, "\n\"optimizer \"\"step\"\"\",,3,,,,,\n") {
		t.Errorf("null row not written as empty fields:\n%s", raw)
	}
	if !strings.Contains(raw, "\n前向 déjà|vu,\"\",") {
		t.Errorf("empty string not written as \"\":\n%s", raw)
	}
}

func TestAppendRowErrors(t *testing.T) {
	tab := NewTable("t", "", Column{Name: "a", Type: TypeInt64}, Column{Name: "b", Type: TypeString, Nullable: true})
	for _, row := range [][]Value{
		{Int(1)},
		{Int(1), Str("x"), Int(2)},
		{Float(1), Str("x")},
		{Null(), Str("x")},
		{Int(1), Int(2)},
	} {
		if err := tab.AppendRow(row...); err == nil {
			t.Errorf("AppendRow(%v) succeeded", row)
		}
	}
	if tab.Len() != 0 || len(tab.data[0].ints) != 0 || len(tab.data[1].codes) != 0 {
		t.Fatalf("failed rows changed the table")
	}
	if err := tab.AppendRow(Int(7), Null()); err != nil {
		t.Fatal(err)
	}
	if v, ok := tab.Int64(0, 0); v != 7 || !ok {
		t.Errorf("Int64 = %d,%v", v, ok)
	}
	if _, ok := tab.String(0, 1); ok || !tab.IsNull(0, 1) || tab.NullCount(1) != 1 {
		t.Errorf("null not reported")
	}
}

func TestNewTablePanics(t *testing.T) {
	for _, cols := range [][]Column{
		{{Name: "a", Type: TypeInt64}, {Name: "a", Type: TypeString}},
		{{Name: "", Type: TypeInt64}},
		{{Name: "a"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewTable(%v) did not panic", cols)
				}
			}()
			NewTable("t", "", cols...)
		}()
	}
}

func TestAccessorTypeMismatchPanics(t *testing.T) {
	tab := sampleTable(t)
	defer func() {
		if recover() == nil {
			t.Error("Float64 on an int64 column did not panic")
		}
	}()
	tab.Float64(0, tab.ColumnIndex("n"))
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{
		"table": FormatText, "text": FormatText, "CSV": FormatCSV, "json": FormatJSON,
		"markdown": FormatMarkdown, "md": FormatMarkdown, "parquet": FormatParquet,
		"arrow": FormatArrow, "feather": FormatArrow,
	} {
		got, err := ParseFormat(in)
		if err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, err := ParseFormat(got.String()); err != nil || back != got {
			t.Errorf("ParseFormat(%v.String()) = %v, %v", got, back, err)
		}
	}
	if _, err := ParseFormat("xlsx"); err == nil {
		t.Error("ParseFormat(xlsx) succeeded")
	}
	if f, err := FormatFromPath("out/x.parquet"); err != nil || f != FormatParquet {
		t.Errorf("FormatFromPath = %v, %v", f, err)
	}
}

func TestWriteTablesRejectsMultiTableCSV(t *testing.T) {
	tab := sampleTable(t)
	if err := WriteTables(&bytes.Buffer{}, []*Table{tab, tab}, FormatCSV, Options{}); err == nil {
		t.Error("two tables into one CSV succeeded")
	}
}

func TestFormatFloatDigits(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{1.5, "1.5"}, {0.30000000000000004, "0.3"}, {123456.789, "123457"}, {1e-9, "1e-09"},
		{-0.00123456789, "-0.00123457"}, {1e20, "1e+20"}, {0, "0"}, {100, "100"},
	} {
		if got := formatFloatDigits(c.f, 6); got != c.want {
			t.Errorf("formatFloatDigits(%v) = %q, want %q", c.f, got, c.want)
		}
	}
	for _, c := range []struct {
		ns   float64
		want string
	}{
		{999, "999 ns"}, {1000, "1.000 µs"}, {1_234_567, "1.235 ms"}, {12_345_678_901, "12.35 s"}, {0, "0 ns"},
	} {
		if got := humanDuration(c.ns); got != c.want {
			t.Errorf("humanDuration(%v) = %q, want %q", c.ns, got, c.want)
		}
	}
}
