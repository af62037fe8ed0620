package export

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// File-level metadata keys. The caller supplies the provenance keys through
// Options.Metadata; the table keys are written by this package.
const (
	MetaSchemaVersion = "nsysphase.schema_version"
	MetaVersion       = "nsysphase.version"
	MetaInputs        = "nsysphase.inputs" // JSON array of Input, see InputsMetadata
	MetaNsysVersion   = "nsysphase.nsys_version"
	MetaGPU           = "nsysphase.gpu"

	MetaTable    = "nsysphase.table"     // Table.Name
	MetaTableDoc = "nsysphase.table_doc" // Table.Doc
	// MetaPartitionKeys, in each file of a partitioned table, describes the
	// key columns that live only in the directory names, so ReadDataset can
	// restore them with their types, units and positions.
	MetaPartitionKeys = "nsysphase.partition_keys"
)

func reservedMetaKey(k string) bool {
	return k == MetaTable || k == MetaTableDoc || k == MetaPartitionKeys || strings.HasPrefix(k, "ARROW:")
}

// Field-level metadata keys, carried in ARROW:schema (Parquet) and in the
// Arrow schema; pyarrow shows them as field.metadata.
const (
	FieldUnit = "nsysphase.unit"
	FieldDoc  = "nsysphase.doc"
)

// Input identifies one input file for MetaInputs.
type Input struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"` // lowercase hex
}

// InputsMetadata encodes inputs as the MetaInputs value: a JSON array, which
// DuckDB (parquet_kv_metadata + json functions) and pyarrow can both query.
func InputsMetadata(inputs []Input) string {
	b, err := json.Marshal(inputs)
	if err != nil {
		panic(err) // two strings cannot fail to marshal
	}
	return string(b)
}

var stringDictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// arrowSchema maps t to an Arrow schema. Strings become
// dictionary<int32, utf8>: one dictionary per column, shared by the whole
// file, which is what fast Parquet writing and the Arrow IPC file format
// both want.
func arrowSchema(t *Table, opt Options) (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(t.cols))
	for i, c := range t.cols {
		f := arrow.Field{Name: c.Name, Nullable: c.Nullable}
		switch c.Type {
		case TypeInt64:
			f.Type = arrow.PrimitiveTypes.Int64
		case TypeFloat64:
			f.Type = arrow.PrimitiveTypes.Float64
		case TypeBool:
			f.Type = arrow.FixedWidthTypes.Boolean
		case TypeString:
			f.Type = stringDictType
		}
		var keys, vals []string
		if c.Unit != "" {
			keys, vals = append(keys, FieldUnit), append(vals, c.Unit)
		}
		if c.Doc != "" {
			keys, vals = append(keys, FieldDoc), append(vals, c.Doc)
		}
		if keys != nil {
			f.Metadata = arrow.NewMetadata(keys, vals)
		}
		fields[i] = f
	}
	keys := make([]string, 0, len(opt.Metadata)+2)
	for k := range opt.Metadata {
		if reservedMetaKey(k) {
			return nil, fmt.Errorf("metadata key %q is reserved", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := make([]string, len(keys), len(keys)+2)
	for i, k := range keys {
		vals[i] = opt.Metadata[k]
	}
	keys, vals = append(keys, MetaTable), append(vals, t.Name)
	if t.Doc != "" {
		keys, vals = append(keys, MetaTableDoc), append(vals, t.Doc)
	}
	if opt.partitionKeys != "" {
		keys, vals = append(keys, MetaPartitionKeys), append(vals, opt.partitionKeys)
	}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(fields, &md), nil
}

// validityBuffer returns an Arrow validity bitmap, or nil when there are no
// nulls (Arrow's "all valid").
func validityBuffer(d *columnData) *memory.Buffer {
	if d.nulls == 0 {
		return nil
	}
	bits := make([]byte, bitutil.BytesForBits(int64(len(d.valid))))
	for i, ok := range d.valid {
		if ok {
			bitutil.SetBit(bits, i)
		}
	}
	return memory.NewBufferBytes(bits)
}

// arrowColumns builds one Arrow array per column. Numeric and index buffers
// alias the table's slices (no copy), so the arrays must be released before
// the table is appended to.
func arrowColumns(t *Table) ([]arrow.Array, error) {
	out := make([]arrow.Array, 0, len(t.cols))
	release := func() {
		for _, a := range out {
			a.Release()
		}
	}
	n := t.rows
	for i, c := range t.cols {
		d := &t.data[i]
		valid := validityBuffer(d)
		switch c.Type {
		case TypeInt64:
			data := array.NewData(arrow.PrimitiveTypes.Int64, n,
				[]*memory.Buffer{valid, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(d.ints))}, nil, d.nulls, 0)
			out = append(out, array.NewInt64Data(data))
			data.Release()
		case TypeFloat64:
			data := array.NewData(arrow.PrimitiveTypes.Float64, n,
				[]*memory.Buffer{valid, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(d.floats))}, nil, d.nulls, 0)
			out = append(out, array.NewFloat64Data(data))
			data.Release()
		case TypeBool:
			bits := make([]byte, bitutil.BytesForBits(int64(n)))
			for r, v := range d.ints {
				if v != 0 {
					bitutil.SetBit(bits, r)
				}
			}
			data := array.NewData(arrow.FixedWidthTypes.Boolean, n,
				[]*memory.Buffer{valid, memory.NewBufferBytes(bits)}, nil, d.nulls, 0)
			out = append(out, array.NewBooleanData(data))
			data.Release()
		case TypeString:
			dict, err := stringArray(d.dict)
			if err != nil {
				release()
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
			idxData := array.NewData(arrow.PrimitiveTypes.Int32, n,
				[]*memory.Buffer{valid, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(d.codes))}, nil, d.nulls, 0)
			idx := array.NewInt32Data(idxData)
			out = append(out, array.NewDictionaryArray(stringDictType, idx, dict))
			idxData.Release()
			idx.Release()
			dict.Release()
		}
	}
	return out, nil
}

// stringArray builds a utf8 array of the dictionary values.
func stringArray(vals []string) (arrow.Array, error) {
	offsets := make([]int32, len(vals)+1)
	total := 0
	for i, s := range vals {
		total += len(s)
		if total > math.MaxInt32 {
			return nil, fmt.Errorf("distinct strings exceed 2 GiB")
		}
		offsets[i+1] = int32(total)
	}
	buf := make([]byte, 0, total)
	for _, s := range vals {
		buf = append(buf, s...)
	}
	data := array.NewData(arrow.BinaryTypes.String, len(vals),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(buf)}, nil, 0, 0)
	defer data.Release()
	return array.NewStringData(data), nil
}

// arrowRecord returns t as one record batch.
func arrowRecord(t *Table, opt Options) (arrow.RecordBatch, error) {
	schema, err := arrowSchema(t, opt)
	if err != nil {
		return nil, err
	}
	cols, err := arrowColumns(t)
	if err != nil {
		return nil, err
	}
	rec := array.NewRecordBatch(schema, cols, int64(t.rows))
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// tableFromArrow converts Arrow data back to a Table. Integer, float,
// string (plain, large or dictionary) and bool columns are accepted;
// narrower integers and float32 widen to int64 and float64 so files from
// other writers load too. fallbackName is used when the schema carries no
// table name.
func tableFromArrow(schema *arrow.Schema, columns [][]arrow.Array, fallbackName string) (*Table, error) {
	name, doc := fallbackName, ""
	if md := schema.Metadata(); md.Len() > 0 {
		if i := md.FindKey(MetaTable); i >= 0 {
			name = md.Values()[i]
		}
		if i := md.FindKey(MetaTableDoc); i >= 0 {
			doc = md.Values()[i]
		}
	}
	cols := make([]Column, schema.NumFields())
	for i, f := range schema.Fields() {
		typ, err := typeFromArrow(f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		cols[i] = Column{Name: f.Name, Type: typ, Nullable: f.Nullable}
		if j := f.Metadata.FindKey(FieldUnit); j >= 0 {
			cols[i].Unit = f.Metadata.Values()[j]
		}
		if j := f.Metadata.FindKey(FieldDoc); j >= 0 {
			cols[i].Doc = f.Metadata.Values()[j]
		}
	}
	t := NewTable(name, doc, cols...)
	rows := -1
	for i := range cols {
		d := &t.data[i]
		n := 0
		for _, chunk := range columns[i] {
			if err := appendArrow(d, cols[i], chunk, n); err != nil {
				return nil, fmt.Errorf("column %s: %w", cols[i].Name, err)
			}
			n += chunk.Len()
		}
		if rows >= 0 && n != rows {
			return nil, fmt.Errorf("column %s has %d %s, want %d", cols[i].Name, n, plural.Of(n, "row", "rows"), rows)
		}
		rows = n
	}
	t.rows = max(rows, 0)
	return t, nil
}

func typeFromArrow(dt arrow.DataType) (Type, error) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		return TypeInt64, nil
	case arrow.FLOAT32, arrow.FLOAT64:
		return TypeFloat64, nil
	case arrow.STRING, arrow.LARGE_STRING:
		return TypeString, nil
	case arrow.BOOL:
		return TypeBool, nil
	case arrow.DICTIONARY:
		vt := dt.(*arrow.DictionaryType).ValueType.ID()
		if vt == arrow.STRING || vt == arrow.LARGE_STRING {
			return TypeString, nil
		}
	}
	return 0, fmt.Errorf("unsupported arrow type %v", dt)
}

// appendArrow appends the values of one chunk; base is the row number of
// its first value.
func appendArrow(d *columnData, c Column, a arrow.Array, base int) error {
	if a.NullN() > 0 && !c.Nullable {
		// A non-nullable field cannot hold nulls; treat the file as the truth.
		return fmt.Errorf("%d %s in a non-nullable field", a.NullN(), plural.Of(a.NullN(), "null", "nulls"))
	}
	var str func(i int) string
	switch a := a.(type) {
	case *array.Dictionary:
		values, ok := a.Dictionary().(interface{ Value(int) string })
		if !ok {
			return fmt.Errorf("unsupported dictionary values %v", a.Dictionary().DataType())
		}
		// Intern each dictionary entry once, then map indices.
		codes := make([]int32, a.Dictionary().Len())
		for i := range codes {
			codes[i] = d.intern(values.Value(i))
		}
		for i := range a.Len() {
			if a.IsNull(i) {
				d.append(TypeString, Null(), base+i)
				continue
			}
			d.appendCode(codes[a.GetValueIndex(i)])
		}
		return nil
	case *array.String:
		str = a.Value
	case *array.LargeString:
		str = a.Value
	}
	for i := range a.Len() {
		if a.IsNull(i) {
			d.append(c.Type, Null(), base+i)
			continue
		}
		var v Value
		switch a := a.(type) {
		case *array.Int8:
			v = Int(int64(a.Value(i)))
		case *array.Int16:
			v = Int(int64(a.Value(i)))
		case *array.Int32:
			v = Int(int64(a.Value(i)))
		case *array.Int64:
			v = Int(a.Value(i))
		case *array.Uint8:
			v = Int(int64(a.Value(i)))
		case *array.Uint16:
			v = Int(int64(a.Value(i)))
		case *array.Uint32:
			v = Int(int64(a.Value(i)))
		case *array.Float32:
			v = Float(float64(a.Value(i)))
		case *array.Float64:
			v = Float(a.Value(i))
		case *array.Boolean:
			v = Bool(a.Value(i))
		default:
			if str == nil {
				return fmt.Errorf("unsupported arrow array %T", a)
			}
			v = Str(str(i))
		}
		d.append(c.Type, v, base+i)
	}
	return nil
}

// appendCode appends an already interned, non-null string.
func (d *columnData) appendCode(code int32) {
	if d.valid != nil {
		d.valid = append(d.valid, true)
	}
	d.codes = append(d.codes, code)
}
