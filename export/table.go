package export

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// Type is the type of a column. The zero Type is invalid; a zero [Value] is
// null.
type Type int

// Column types. Integers stay int64 end to end (nanoseconds, bytes, counts):
// no renderer converts them to float.
const (
	TypeInt64 Type = iota + 1
	TypeFloat64
	TypeString
	TypeBool
)

func (t Type) String() string {
	switch t {
	case TypeInt64:
		return "int64"
	case TypeFloat64:
		return "float64"
	case TypeString:
		return "string"
	case TypeBool:
		return "bool"
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

func (t Type) valid() bool { return t >= TypeInt64 && t <= TypeBool }

// Common units for [Column.Unit]. Any string is allowed; renderers treat
// UnitNanoseconds and UnitBytes specially when [Options.HumanUnits] is set.
const (
	UnitNanoseconds = "ns"
	UnitBytes       = "bytes"
	UnitCount       = "count"
	UnitRatio       = "ratio"
)

// Column describes one column of a [Table].
type Column struct {
	Name string
	Type Type
	// Unit of the values: "ns", "bytes", "count", "ratio", "%"… Empty for
	// labels. Written to Parquet/Arrow field metadata.
	Unit string
	// Doc is a one-line description, written to Parquet/Arrow field metadata.
	Doc string
	// Nullable columns accept [Null]; a null means "not measured", which is
	// different from a measured zero.
	Nullable bool
}

// Value is one cell passed to [Table.AppendRow] or returned by [Table.Value].
// The zero Value is null.
type Value struct {
	typ Type // 0 means null
	i   int64
	f   float64
	s   string
}

// Int returns an int64 value.
func Int(v int64) Value { return Value{typ: TypeInt64, i: v} }

// Float returns a float64 value.
func Float(v float64) Value { return Value{typ: TypeFloat64, f: v} }

// Str returns a string value.
func Str(v string) Value { return Value{typ: TypeString, s: v} }

// Bool returns a bool value.
func Bool(v bool) Value {
	var i int64
	if v {
		i = 1
	}
	return Value{typ: TypeBool, i: i}
}

// Null returns the null value, valid in any nullable column.
func Null() Value { return Value{} }

// OptFloat returns Float(v) when ok and Null otherwise.
func OptFloat(v float64, ok bool) Value {
	if !ok {
		return Null()
	}
	return Float(v)
}

// IsNull reports whether v is null.
func (v Value) IsNull() bool { return v.typ == 0 }

// Type returns the type of v, or 0 for null.
func (v Value) Type() Type { return v.typ }

// AsInt64 returns the integer and true if v is a non-null TypeInt64.
func (v Value) AsInt64() (int64, bool) { return v.i, v.typ == TypeInt64 }

// AsFloat64 returns the float and true if v is a non-null TypeFloat64.
func (v Value) AsFloat64() (float64, bool) { return v.f, v.typ == TypeFloat64 }

// AsString returns the string and true if v is a non-null TypeString.
func (v Value) AsString() (string, bool) { return v.s, v.typ == TypeString }

// AsBool returns the bool and true if v is a non-null TypeBool.
func (v Value) AsBool() (bool, bool) { return v.i != 0, v.typ == TypeBool }

// String formats v for debugging and error messages; null is "NULL".
func (v Value) String() string {
	switch v.typ {
	case TypeInt64:
		return strconv.FormatInt(v.i, 10)
	case TypeFloat64:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case TypeString:
		return strconv.Quote(v.s)
	case TypeBool:
		return strconv.FormatBool(v.i != 0)
	}
	return "NULL"
}

// Table is a named, documented, column-oriented table. Build it with
// [NewTable] and [Table.AppendRow]; read it with the typed accessors.
// A Table is not safe for concurrent mutation.
type Table struct {
	// Name identifies the table; it is the file name stem in datasets, so
	// keep it to letters, digits, '_', '-' and '.'.
	Name string
	// Doc is a one-line description, written to Parquet/Arrow metadata.
	Doc string

	cols []Column
	data []columnData
	rows int
	// fileMeta is the key-value metadata of the Parquet file the table
	// was read from; nil otherwise.
	fileMeta map[string]string
}

// FileMetadata is the key-value metadata of the Parquet file the table was
// read from (of its first part file for a partitioned table): what
// ReadParquetMetadata returns, without opening the file again. It is nil
// for a table not read from Parquet.
func (t *Table) FileMetadata() map[string]string { return t.fileMeta }

// columnData holds one column. Only the slice matching the column type is
// used. Strings are dictionary-encoded as they arrive: profiles repeat a few
// kernel and phase names many times, and Parquet/Arrow want exactly one
// dictionary per column anyway.
type columnData struct {
	ints   []int64 // TypeInt64, and TypeBool as 0/1
	floats []float64
	codes  []int32 // TypeString: index into dict
	dict   []string
	lookup map[string]int32
	// valid is nil until the first null arrives, then has one entry per row.
	valid []bool
	nulls int
	last  int32 // code of the last string interned: rows repeat it in runs
}

// NewTable returns an empty table with the given columns. It panics if a
// column name is empty or repeated or a type is invalid: schemas are static,
// so that is a programming error.
func NewTable(name, doc string, cols ...Column) *Table {
	seen := make(map[string]bool, len(cols))
	for i, c := range cols {
		if c.Name == "" {
			panic(fmt.Sprintf("export: table %q: column %d has no name", name, i))
		}
		if seen[c.Name] {
			panic(fmt.Sprintf("export: table %q: duplicate column %q", name, c.Name))
		}
		if !c.Type.valid() {
			panic(fmt.Sprintf("export: table %q: column %q has invalid type %v", name, c.Name, c.Type))
		}
		seen[c.Name] = true
	}
	t := &Table{Name: name, Doc: doc, cols: append([]Column(nil), cols...), data: make([]columnData, len(cols))}
	for i, c := range cols {
		if c.Type == TypeString {
			t.data[i].lookup = make(map[string]int32)
		}
	}
	return t
}

// Len returns the number of rows.
func (t *Table) Len() int { return t.rows }

// NumColumns returns the number of columns.
func (t *Table) NumColumns() int { return len(t.cols) }

// Column returns the description of column i.
func (t *Table) Column(i int) Column { return t.cols[i] }

// Columns returns a copy of the column descriptions.
func (t *Table) Columns() []Column { return append([]Column(nil), t.cols...) }

// ColumnIndex returns the index of the named column, or -1.
func (t *Table) ColumnIndex(name string) int {
	for i, c := range t.cols {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Grow reserves room for n more rows, to avoid reallocation when the row
// count is known.
func (t *Table) Grow(n int) {
	for i, c := range t.cols {
		d := &t.data[i]
		switch c.Type {
		case TypeInt64, TypeBool:
			d.ints = growSlice(d.ints, n)
		case TypeFloat64:
			d.floats = growSlice(d.floats, n)
		case TypeString:
			d.codes = growSlice(d.codes, n)
		}
		if d.valid != nil {
			d.valid = growSlice(d.valid, n)
		}
	}
}

func growSlice[E any](s []E, n int) []E {
	if cap(s)-len(s) >= n {
		return s
	}
	out := make([]E, len(s), len(s)+n)
	copy(out, s)
	return out
}

// AppendRow appends one row with one value per column, in column order.
// It returns an error, and leaves the table unchanged, if the count or a type
// does not match or a null is given for a non-nullable column.
func (t *Table) AppendRow(vals ...Value) error {
	if len(vals) != len(t.cols) {
		return fmt.Errorf("table %s: row %d has %d %s, want %d", t.Name, t.rows, len(vals), plural.Of(len(vals), "value", "values"), len(t.cols))
	}
	// Check everything first so a bad row never leaves columns of unequal length.
	for i, v := range vals {
		c := &t.cols[i]
		if v.typ == 0 {
			if !c.Nullable {
				return fmt.Errorf("table %s: row %d: null in non-nullable column %s", t.Name, t.rows, c.Name)
			}
			continue
		}
		if v.typ != c.Type {
			return fmt.Errorf("table %s: row %d: column %s is %v, got %v value %v", t.Name, t.rows, c.Name, c.Type, v.typ, v)
		}
	}
	for i, v := range vals {
		t.data[i].append(t.cols[i].Type, v, t.rows)
	}
	t.rows++
	return nil
}

// append adds v (already type-checked) as row number row.
func (d *columnData) append(typ Type, v Value, row int) {
	null := v.typ == 0
	if null && d.valid == nil {
		d.valid = make([]bool, row, max(row+1, cap(d.ints), cap(d.floats), cap(d.codes)))
		for j := range d.valid {
			d.valid[j] = true
		}
	}
	if d.valid != nil {
		d.valid = append(d.valid, !null)
	}
	if null {
		d.nulls++
	}
	switch typ {
	case TypeInt64, TypeBool:
		d.ints = append(d.ints, v.i)
	case TypeFloat64:
		d.floats = append(d.floats, v.f)
	case TypeString:
		var code int32
		if !null {
			code = d.intern(v.s)
		}
		d.codes = append(d.codes, code)
	}
}

// intern returns the dictionary code of s, adding it on first sight. Codes
// follow first appearance, which keeps output deterministic.
func (d *columnData) intern(s string) int32 {
	if len(d.dict) > 0 && d.dict[d.last] == s {
		return d.last
	}
	if code, ok := d.lookup[s]; ok {
		d.last = code
		return code
	}
	if len(d.dict) == math.MaxInt32 {
		panic("export: more than 2^31-1 distinct strings in one column")
	}
	code := int32(len(d.dict))
	d.dict = append(d.dict, s)
	d.lookup[s] = code
	d.last = code
	return code
}

// RowsAppender fills rows added by [Table.AppendRows] column by column,
// without a [Value] per cell: the path for tables of millions of rows.
// Every string cell must be set; a nullable cell may be set to null.
// Misuse (a wrong type, a row outside the block) panics, as a slice index
// would. Different columns may be filled by different goroutines at once;
// one column by one goroutine at a time.
type RowsAppender struct {
	t         *Table
	base, end int
}

// AppendRows adds n rows — zero numbers and false — for a to fill.
// Many rows are added by several goroutines, a share of the columns each:
// the first touch of tens of MB of new memory (phase_instances' row group)
// took ~8 ms on one.
func (t *Table) AppendRows(n int) *RowsAppender {
	extendCol := func(i int) {
		d := &t.data[i]
		switch t.cols[i].Type {
		case TypeInt64, TypeBool:
			d.ints = extend(d.ints, n)
		case TypeFloat64:
			d.floats = extend(d.floats, n)
		case TypeString:
			d.codes = extend(d.codes, n)
		}
		if d.valid != nil {
			for range n {
				d.valid = append(d.valid, true)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(t.cols), 1+n*len(t.cols)/appendCellsPerWorker)
	if workers <= 1 {
		for i := range t.cols {
			extendCol(i)
		}
	} else {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < len(t.cols); i += workers {
					extendCol(i)
				}
			})
		}
		wg.Wait()
	}
	a := &RowsAppender{t: t, base: t.rows, end: t.rows + n}
	t.rows += n
	return a
}

// appendCellsPerWorker is the fewest new cells worth a goroutine of their
// own in AppendRows (8 MB of int64s).
const appendCellsPerWorker = 1 << 20

// col is column col's data, which must be of type want (TypeInt64 takes
// bool columns too, as 0/1). Not variadic: SetString runs once per cell,
// and a variadic list escaping into the panic's message was an allocation
// per call.
func (a *RowsAppender) col(col int, want Type) *columnData {
	if c := a.t.cols[col]; c.Type != want && (want != TypeInt64 || c.Type != TypeBool) {
		panic(fmt.Sprintf("export: table %s: column %s is %v, not %v", a.t.Name, c.Name, c.Type, want))
	}
	return &a.t.data[col]
}

// Int64s returns the new cells of an int64 column (or a bool column, as
// 0/1), to be written in place.
func (a *RowsAppender) Int64s(col int) []int64 {
	return a.col(col, TypeInt64).ints[a.base:a.end]
}

// Float64s returns the new cells of a float64 column, to be written in place.
func (a *RowsAppender) Float64s(col int) []float64 {
	return a.col(col, TypeFloat64).floats[a.base:a.end]
}

// Codes returns the new cells of a string column as dictionary codes (see
// Intern), to be written in place.
func (a *RowsAppender) Codes(col int) []int32 {
	return a.col(col, TypeString).codes[a.base:a.end]
}

// Intern returns the code of s in the dictionary of string column col,
// adding s on first sight: codes follow first appearance, so a column
// whose cells are interned in row order has the dictionary SetString
// gives.
func (a *RowsAppender) Intern(col int, s string) int32 {
	return a.col(col, TypeString).intern(s)
}

// SetString sets cell i (from 0) of the new rows of a string column.
func (a *RowsAppender) SetString(col, i int, s string) {
	d := a.col(col, TypeString)
	d.codes[a.base+i] = d.intern(s)
}

// SetNull makes cell i (from 0) of the new rows of a nullable column null.
func (a *RowsAppender) SetNull(col, i int) {
	c := a.t.cols[col]
	if !c.Nullable {
		panic(fmt.Sprintf("export: table %s: null in non-nullable column %s", a.t.Name, c.Name))
	}
	d := &a.t.data[col]
	row := a.base + i
	if row >= a.end {
		panic(fmt.Sprintf("export: table %s: row %d outside the appended rows", a.t.Name, row))
	}
	if d.valid == nil {
		d.valid = make([]bool, a.t.rows, max(a.t.rows, cap(d.ints), cap(d.floats), cap(d.codes)))
		for j := range d.valid {
			d.valid[j] = true
		}
	}
	if d.valid[row] {
		d.valid[row] = false
		d.nulls++
	}
	// A null holds the zero value, as AppendRow stores it.
	d.ints = zeroAt(d.ints, row)
	d.floats = zeroAt(d.floats, row)
	d.codes = zeroAt(d.codes, row)
}

// extend appends n zero values to s.
func extend[E any](s []E, n int) []E {

	s = slices.Grow(s, n)
	s = s[:len(s)+n]
	clear(s[len(s)-n:])
	return s
}

func zeroAt[E int64 | float64 | int32](s []E, i int) []E {
	if i < len(s) {
		s[i] = 0
	}
	return s
}

func (d *columnData) isNull(row int) bool { return d.valid != nil && !d.valid[row] }

// checkCell panics with a useful message on an out-of-range or mistyped
// access, like a slice index would.
func (t *Table) checkCell(row, col int, want Type) *columnData {
	if row < 0 || row >= t.rows {
		panic(fmt.Sprintf("export: table %s: row %d out of range [0,%d)", t.Name, row, t.rows))
	}
	if t.cols[col].Type != want {
		panic(fmt.Sprintf("export: table %s: column %s is %v, not %v", t.Name, t.cols[col].Name, t.cols[col].Type, want))
	}
	return &t.data[col]
}

// IsNull reports whether the cell is null.
func (t *Table) IsNull(row, col int) bool {
	if row < 0 || row >= t.rows {
		panic(fmt.Sprintf("export: table %s: row %d out of range [0,%d)", t.Name, row, t.rows))
	}
	return t.data[col].isNull(row)
}

// NullCount returns the number of nulls in column col.
func (t *Table) NullCount(col int) int { return t.data[col].nulls }

// Int64 returns the cell of a TypeInt64 column; ok is false for null.
// Accessors panic if the column has another type, like an index out of range.
func (t *Table) Int64(row, col int) (v int64, ok bool) {
	d := t.checkCell(row, col, TypeInt64)
	return d.ints[row], !d.isNull(row)
}

// Float64 returns the cell of a TypeFloat64 column; ok is false for null.
func (t *Table) Float64(row, col int) (v float64, ok bool) {
	d := t.checkCell(row, col, TypeFloat64)
	return d.floats[row], !d.isNull(row)
}

// String returns the cell of a TypeString column; ok is false for null.
func (t *Table) String(row, col int) (v string, ok bool) {
	d := t.checkCell(row, col, TypeString)
	if d.isNull(row) {
		return "", false
	}
	return d.dict[d.codes[row]], true
}

// Bool returns the cell of a TypeBool column; ok is false for null.
func (t *Table) Bool(row, col int) (v bool, ok bool) {
	d := t.checkCell(row, col, TypeBool)
	return d.ints[row] != 0, !d.isNull(row)
}

// Value returns any cell as a Value.
func (t *Table) Value(row, col int) Value {
	if t.IsNull(row, col) {
		return Null()
	}
	d := &t.data[col]
	switch typ := t.cols[col].Type; typ {
	case TypeInt64, TypeBool:
		return Value{typ: typ, i: d.ints[row]}
	case TypeFloat64:
		return Float(d.floats[row])
	default:
		return Str(d.dict[d.codes[row]])
	}
}

// Row returns all cells of one row.
func (t *Table) Row(row int) []Value {
	out := make([]Value, len(t.cols))
	for c := range t.cols {
		out[c] = t.Value(row, c)
	}
	return out
}

// project returns a new table holding the given rows (in order) and the
// columns not in drop. Strings are re-interned so each part gets a
// dictionary of only the values it uses.
func (t *Table) project(rows []int, drop map[int]bool) *Table {
	var cols []Column
	var keep []int
	for i, c := range t.cols {
		if !drop[i] {
			cols = append(cols, c)
			keep = append(keep, i)
		}
	}
	out := NewTable(t.Name, t.Doc, cols...)
	out.Grow(len(rows))
	for j, src := range keep {
		for k, r := range rows {
			out.data[j].append(cols[j].Type, t.Value(r, src), k)
		}
	}
	out.rows = len(rows)
	return out
}
