package export

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// listTree returns every file below dir as slash paths, sorted.
func listTree(tb testing.TB, dir string) []string {
	tb.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// instancesTable looks like the phase-instances table: one row per phase
// instance, with the arm and input file as partition keys.
func instancesTable(tb testing.TB) *Table {
	tb.Helper()
	t := NewTable("phase_instances", "one row per phase instance",
		Column{Name: "arm", Type: TypeString, Nullable: true},
		Column{Name: "file", Type: TypeString},
		Column{Name: "phase", Type: TypeString},
		Column{Name: "dur_ns", Type: TypeInt64, Unit: UnitNanoseconds, Nullable: true},
	)
	for _, r := range [][]Value{
		{Str("a"), Str("run1.nsys-rep"), Str("forward"), Int(100)},
		{Str("a"), Str("run1.nsys-rep"), Str("backward"), Int(bigInt)},
		{Str("null"), Str("dir/run 2=é.nsys-rep"), Str("forward"), Int(300)}, // an arm named "null" is not SQL NULL
		{Str("a"), Str("run3.nsys-rep"), Str("forward"), Null()},
		{Null(), Str("run4.nsys-rep"), Str("forward"), Int(500)},
		{Str("null"), Str("dir/run 2=é.nsys-rep"), Str("backward"), Int(600)},
	} {
		if err := t.AppendRow(r...); err != nil {
			tb.Fatal(err)
		}
	}
	return t
}

func TestWriteDatasetFlat(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	tables := []*Table{sampleTable(t), randomTable(1000, 5)}
	if err := WriteDataset(dir, tables, FormatParquet, Options{}); err != nil {
		t.Fatal(err)
	}
	if got, want := listTree(t, dir), []string{"_dataset.json", "phase_summary.parquet", "random.parquet"}; !slices.Equal(got, want) {
		t.Fatalf("dataset files %v, want %v", got, want)
	}
	for _, tab := range tables {
		got, err := ReadParquet(filepath.Join(dir, tab.Name+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		requireEqualTables(t, got, tab)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("staging left behind: %v", entries)
	}
}

func TestWriteDatasetFailureLeavesNothing(t *testing.T) {
	// A table without columns cannot be written as Parquet; it comes after a
	// good table, so the good one is already staged when the failure hits.
	tables := []*Table{sampleTable(t), NewTable("broken", "")}

	t.Run("new dir", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		if err := WriteDataset(dir, tables, FormatParquet, Options{}); err == nil {
			t.Fatal("dataset with a broken table written")
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 0 {
			t.Errorf("failed write left %v", entries)
		}
	})

	t.Run("existing dir", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		if err := WriteDataset(dir, []*Table{randomTable(10, 6)}, FormatParquet, Options{}); err != nil {
			t.Fatal(err)
		}
		before, err := os.ReadFile(filepath.Join(dir, "random.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		renamed := sampleTable(t)
		renamed.Name = "random" // would replace the existing file
		if err := WriteDataset(dir, []*Table{renamed, NewTable("broken", "")}, FormatParquet, Options{}); err == nil {
			t.Fatal("dataset with a broken table written")
		}
		if got := listTree(t, dir); !slices.Equal(got, []string{"_dataset.json", "random.parquet"}) {
			t.Errorf("dataset now holds %v", got)
		}
		after, _ := os.ReadFile(filepath.Join(dir, "random.parquet"))
		if string(after) != string(before) {
			t.Error("failed write changed the existing file")
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 1 {
			t.Errorf("staging left behind: %v", entries)
		}
	})
}

func TestWriteDatasetRejectsBadNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	bad := sampleTable(t)
	bad.Name = "../escape"
	if err := WriteDataset(dir, []*Table{bad}, FormatParquet, Options{}); err == nil {
		t.Error("table name ../escape accepted")
	}
	if err := WriteDataset(dir, []*Table{sampleTable(t), sampleTable(t)}, FormatParquet, Options{}); err == nil {
		t.Error("duplicate table names accepted")
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("rejected dataset created its directory")
	}
}

func TestWriteDatasetPartitioned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	inst := instancesTable(t)
	tables := []*Table{inst, sampleTable(t)}
	opt := Options{PartitionBy: []string{"arm", "file"}}
	if err := WriteDataset(dir, tables, FormatParquet, opt); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"_dataset.json",
		"phase_instances/arm=%6Eull/file=dir%2Frun%202%3D%C3%A9.nsys-rep/part.parquet",
		"phase_instances/arm=__HIVE_DEFAULT_PARTITION__/file=run4.nsys-rep/part.parquet",
		"phase_instances/arm=a/file=run1.nsys-rep/part.parquet",
		"phase_instances/arm=a/file=run3.nsys-rep/part.parquet",
		// phase_summary has "arm" but not "file": partitioned by arm only;
		// its empty-string arm is "arm=".
		"phase_summary/arm=/part.parquet",
		"phase_summary/arm=__HIVE_DEFAULT_PARTITION__/part.parquet",
		"phase_summary/arm=a/part.parquet",
		"phase_summary/arm=b/part.parquet",
	}
	if got := listTree(t, dir); !slices.Equal(got, want) {
		t.Fatalf("dataset files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	part, err := ReadParquet(filepath.Join(dir, filepath.FromSlash(want[1])))
	if err != nil {
		t.Fatal(err)
	}
	// Key columns live in the path only.
	wantPart := NewTable("phase_instances", "one row per phase instance", inst.Columns()[2:]...)
	wantPart.AppendRow(Str("forward"), Int(300))
	wantPart.AppendRow(Str("backward"), Int(600))
	requireEqualTables(t, part, wantPart)

	// Rewriting replaces the whole dataset: stale partitions and tables the
	// new run did not write go. A file the dataset did not write forbids
	// the replacement (issue 24 case 1: it would be lost).
	small := NewTable("phase_instances", "", inst.Columns()...)
	small.AppendRow(Str("z"), Str("f"), Str("p"), Int(1))
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("inside the old dataset"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt.Replace = true
	if err := WriteDataset(dir, []*Table{small}, FormatParquet, opt); !errors.Is(err, ErrNotDataset) {
		t.Fatalf("replace a dataset holding notes.txt: got %v, want ErrNotDataset", err)
	}
	if err := os.Remove(notes); err != nil {
		t.Fatal(err)
	}
	if err := WriteDataset(dir, []*Table{small}, FormatParquet, opt); err != nil {
		t.Fatal(err)
	}
	got := listTree(t, dir)
	want = []string{"_dataset.json", "phase_instances/arm=z/file=f/part.parquet"}
	if !slices.Equal(got, want) {
		t.Fatalf("after rewrite:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("staging left behind: %v", entries)
	}
}

func TestPartitionValueEscaping(t *testing.T) {
	tab := NewTable("t", "", Column{Name: "k", Type: TypeString, Nullable: true}, Column{Name: "n", Type: TypeInt64})
	for _, s := range []string{"plain-1.2_x~", "a/b", "..", ".", "50%", "x=y", "日本", "null", "NULL", "nullable"} {
		tab.AppendRow(Str(s), Int(0))
	}
	// "null" would read back as SQL NULL in DuckDB: its first letter is escaped.
	want := []string{"plain-1.2_x~", "a%2Fb", "%2E%2E", "%2E", "50%25", "x%3Dy", "%E6%97%A5%E6%9C%AC", "%6Eull", "%4EULL", "nullable"}
	for r, w := range want {
		if got := partitionValue(tab, r, 0); got != w {
			t.Errorf("partitionValue(%q) = %q, want %q", tab.Value(r, 0), got, w)
		}
	}
}

// sortedRows returns the rows of t as strings, sorted, to compare tables
// whose row order differs (partitioned reads come in partition order).
func sortedRows(t *Table) []string {
	out := make([]string, t.Len())
	for r := range t.Len() {
		out[r] = fmt.Sprint(t.Row(r))
	}
	slices.Sort(out)
	return out
}

func TestReadDatasetRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	inst := instancesTable(t)
	summary := sampleTable(t)
	flat := randomTable(2000, 8)
	// Keys listed out of column order on purpose.
	opt := Options{PartitionBy: []string{"file", "arm"}}
	if err := WriteDataset(dir, []*Table{inst, summary, flat}, FormatParquet, opt); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []*Table{inst, summary, flat}
	slices.SortFunc(want, func(a, b *Table) int { return strings.Compare(a.Name, b.Name) })
	if len(got) != len(want) {
		t.Fatalf("read %d tables, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Doc != want[i].Doc || !slices.Equal(got[i].Columns(), want[i].Columns()) {
			t.Errorf("table %d: %s %+v, want %s %+v", i, got[i].Name, got[i].Columns(), want[i].Name, want[i].Columns())
			continue
		}
		if want[i] == flat {
			requireEqualTables(t, got[i], want[i]) // unpartitioned: same order
			continue
		}
		if g, w := sortedRows(got[i]), sortedRows(want[i]); !slices.Equal(g, w) {
			t.Errorf("table %s rows:\n%s\nwant:\n%s", want[i].Name, strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
	}
}

// TestDatasetWriterEarlyTable: a table added (and built) early, before the
// others exist, lands in the dataset like the rest; Abort after an early
// Add leaves neither the dataset nor staging behind; a duplicate name fails
// the commit and leaves dir untouched.
func TestDatasetWriterEarlyTable(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	w, err := NewDatasetWriter(dir, FormatParquet, Options{})
	if err != nil {
		t.Fatal(err)
	}
	early := instancesTable(t)
	w.AddFunc(func() *Table { return early })
	late := sampleTable(t)
	w.Add(late)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, want := listTree(t, dir), []string{"_dataset.json", "phase_instances.parquet", "phase_summary.parquet"}; !slices.Equal(got, want) {
		t.Fatalf("dataset files %v, want %v", got, want)
	}
	got, err := ReadParquet(filepath.Join(dir, "phase_instances.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	requireEqualTables(t, got, early)

	aborted := filepath.Join(parent, "aborted")
	w, err = NewDatasetWriter(aborted, FormatParquet, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.AddFunc(func() *Table { return instancesTable(t) })
	w.Abort()
	if _, err := os.Stat(aborted); !os.IsNotExist(err) {
		t.Errorf("aborted dataset exists: %v", err)
	}

	w, err = NewDatasetWriter(dir, FormatParquet, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Add(randomTable(10, 2))
	w.AddFunc(func() *Table { return randomTable(20, 2) })
	if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "duplicate table random") {
		t.Fatalf("duplicate names: got %v", err)
	}
	if got, want := listTree(t, dir), []string{"_dataset.json", "phase_instances.parquet", "phase_summary.parquet"}; !slices.Equal(got, want) {
		t.Errorf("a failed commit changed the dataset: %v", got)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("staging left behind: %v", entries)
	}
}

// TestDatasetWriterAddRows: a table added range by range is one Parquet
// file with a row group per range, and reads back equal to the table
// written whole; partitioned and non-Parquet datasets build it whole and
// hold the same rows.
func TestDatasetWriterAddRows(t *testing.T) {
	whole := randomTable(2500, 9)
	calls := 0
	rows := func(lo, hi int) *Table {
		calls++
		idx := make([]int, 0, hi-lo)
		for r := lo; r < hi; r++ {
			idx = append(idx, r)
		}
		return whole.project(idx, nil)
	}
	for _, c := range []struct {
		name      string
		f         Format
		opt       Options
		rowGroups int // Parquet only; 0: not checked
		calls     int
	}{
		{"parquet", FormatParquet, Options{RowGroupRows: 1000}, 3, 3},
		{"parquet-default", FormatParquet, Options{}, 1, 1},
		{"partitioned", FormatParquet, Options{PartitionBy: []string{"sync"}, RowGroupRows: 1000}, 0, 2},
		{"csv", FormatCSV, Options{RowGroupRows: 1000}, 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls = 0
			dir := filepath.Join(t.TempDir(), "out")
			w, err := NewDatasetWriter(dir, c.f, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			w.AddRows(whole.Len(), rows)
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			if calls != c.calls {
				t.Errorf("rows called %d times, want %d", calls, c.calls)
			}
			if c.f != FormatParquet {
				b, err := os.ReadFile(filepath.Join(dir, "random.csv"))
				if err != nil {
					t.Fatal(err)
				}
				var want bytes.Buffer
				if err := Write(&want, whole, FormatCSV, c.opt); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b, want.Bytes()) {
					t.Error("csv written by AddRows differs from the table written whole")
				}
				return
			}
			got, err := ReadDataset(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("read %d tables", len(got))
			}
			if c.rowGroups == 0 {
				if g, w := sortedRows(got[0]), sortedRows(whole); !slices.Equal(g, w) {
					t.Errorf("partitioned rows differ")
				}
				return
			}
			requireEqualTables(t, got[0], whole)
			rdr, err := file.OpenParquetFile(filepath.Join(dir, "random.parquet"), false)
			if err != nil {
				t.Fatal(err)
			}
			defer rdr.Close()
			if n := rdr.NumRowGroups(); n != c.rowGroups {
				t.Errorf("%d row groups, want %d", n, c.rowGroups)
			}
		})
	}
}

// TestAppendRowsEqualsAppendRow: a table filled column by column holds what
// the same rows appended one by one hold — values, nulls, dictionaries —
// and encodes to the same Parquet bytes.
func TestAppendRowsEqualsAppendRow(t *testing.T) {
	want := randomTable(3000, 11)
	got := NewTable(want.Name, want.Doc, want.Columns()...)
	for lo := 0; lo < want.Len(); lo += 1000 { // in blocks, as AddRows does
		n := min(1000, want.Len()-lo)
		a := got.AppendRows(n)
		for col, c := range want.Columns() {
			for i := range n {
				r := lo + i
				if want.IsNull(r, col) {
					a.SetNull(col, i)
					continue
				}
				switch c.Type {
				case TypeString:
					v, _ := want.String(r, col)
					a.SetString(col, i, v)
				case TypeInt64:
					v, _ := want.Int64(r, col)
					a.Int64s(col)[i] = v
				case TypeBool:
					if v, _ := want.Bool(r, col); v {
						a.Int64s(col)[i] = 1
					}
				case TypeFloat64:
					v, _ := want.Float64(r, col)
					a.Float64s(col)[i] = v
				}
			}
		}
	}
	requireEqualTables(t, got, want)
	var gb, wb bytes.Buffer
	if err := Write(&gb, got, FormatParquet, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&wb, want, FormatParquet, Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gb.Bytes(), wb.Bytes()) {
		t.Error("Parquet bytes differ")
	}
}

// TestReadDatasetTables: only the tables named are read, a partitioned one
// included, with the same rows as ReadDataset gives; a table not named is
// skipped even when it could not be decoded.
func TestReadDatasetTables(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	inst, summary, flat := instancesTable(t), sampleTable(t), randomTable(200, 3)
	if err := WriteDataset(dir, []*Table{inst, summary, flat}, FormatParquet, Options{PartitionBy: []string{"arm"}}); err != nil {
		t.Fatal(err)
	}
	all, err := ReadDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, flat.Name+".parquet")
	if _, err := os.Stat(damaged); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(damaged, []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDatasetTables(dir, inst.Name, summary.Name)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{inst.Name, summary.Name}
	slices.Sort(want)
	if len(got) != 2 || got[0].Name != want[0] || got[1].Name != want[1] {
		t.Fatalf("read %d tables: %v", len(got), got)
	}
	for _, g := range got {
		for _, a := range all {
			if a.Name == g.Name && !slices.Equal(sortedRows(a), sortedRows(g)) {
				t.Errorf("table %s: rows differ from ReadDataset's", g.Name)
			}
		}
	}
	if _, err := ReadDataset(dir); err == nil {
		t.Error("ReadDataset reads the damaged table without an error")
	}
}
