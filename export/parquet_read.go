package export

import (
	"fmt"
	"math"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// Reading a Parquet file through pqarrow builds an Arrow array per column
// and row group, which tableFromArrow then copies into the table: for the
// thousand small datasets of a rank reduce (`analyze --from`, ~80 columns
// each) the arrays' buffers, readers and copies were half of the reading.
// A flat file of the types a Table holds is decoded here instead, column
// chunk by column chunk, straight into the table's columns.

// directBatch is the most values decoded at once per column.
const directBatch = 64 << 10

// readParquetDirect decodes the flat columns of rdr straight into a table
// of sc's columns; ok is false when a column is not one it decodes (nested
// or of another physical type than its Arrow type implies): the caller
// then reads the file through pqarrow.
func readParquetDirect(rdr *file.Reader, sc *arrow.Schema, name string) (t *Table, ok bool, err error) {
	ps := rdr.MetaData().Schema
	if ps.NumColumns() != sc.NumFields() {
		return nil, false, nil
	}
	cols := make([]Column, sc.NumFields())
	for i, f := range sc.Fields() {
		typ, err := typeFromArrow(f.Type)
		if err != nil {
			return nil, false, nil
		}
		c := ps.Column(i)
		if c.MaxRepetitionLevel() != 0 || c.MaxDefinitionLevel() > 1 || c.Name() != f.Name || !physicalFits(c, typ) {
			return nil, false, nil
		}
		cols[i] = Column{Name: f.Name, Type: typ, Nullable: f.Nullable}
		if j := f.Metadata.FindKey(FieldUnit); j >= 0 {
			cols[i].Unit = f.Metadata.Values()[j]
		}
		if j := f.Metadata.FindKey(FieldDoc); j >= 0 {
			cols[i].Doc = f.Metadata.Values()[j]
		}
	}
	t = NewTable(name, tableDoc(sc), cols...)
	n := int(rdr.NumRows())
	dec := decoders.Get().(*columnDecoder)
	defer func() {
		clear(dec.byteAr) // they point into this file's pages
		decoders.Put(dec)
	}()
	dec.batch = max(1, min(directBatch, n)) // a small table's scratch stays small
	for i := range cols {
		d := &t.data[i]
		switch cols[i].Type {
		case TypeInt64, TypeBool:
			d.ints = make([]int64, 0, n)
		case TypeFloat64:
			d.floats = make([]float64, 0, n)
		case TypeString:
			d.codes = make([]int32, 0, n)
		}
		unsigned := sc.Field(i).Type.ID() == arrow.UINT8 || sc.Field(i).Type.ID() == arrow.UINT16 || sc.Field(i).Type.ID() == arrow.UINT32
		for rg := range rdr.NumRowGroups() {
			cr, err := rdr.RowGroup(rg).Column(i)
			if err != nil {
				return nil, true, fmt.Errorf("column %s: %w", cols[i].Name, err)
			}
			if err := dec.chunk(d, cols[i], cr, unsigned); err != nil {
				return nil, true, fmt.Errorf("column %s: %w", cols[i].Name, err)
			}
		}
		if rows := len(d.ints) + len(d.floats) + len(d.codes); rows != n {
			return nil, true, fmt.Errorf("column %s has %d %s, want %d", cols[i].Name, rows, plural.Of(rows, "row", "rows"), n)
		}
	}
	t.rows = n
	return t, true, nil
}

// tableDoc is the table doc of the schema's metadata, "" without one.
func tableDoc(sc *arrow.Schema) string {
	if md := sc.Metadata(); md.Len() > 0 {
		if i := md.FindKey(MetaTableDoc); i >= 0 {
			return md.Values()[i]
		}
	}
	return ""
}

// physicalFits says whether column c's physical type is the one a value
// of typ is decoded from here.
func physicalFits(c *schema.Column, typ Type) bool {
	switch c.PhysicalType() {
	case parquet.Types.Int32, parquet.Types.Int64:
		return typ == TypeInt64
	case parquet.Types.Float, parquet.Types.Double:
		return typ == TypeFloat64
	case parquet.Types.Boolean:
		return typ == TypeBool
	case parquet.Types.ByteArray:
		return typ == TypeString
	}
	return false
}

// columnDecoder holds the scratch buffers of readParquetDirect, reused
// from column to column.
type columnDecoder struct {
	batch  int // values decoded at once
	defs   []int16
	i32    []int32
	i64    []int64
	f32    []float32
	f64    []float64
	bools  []bool
	byteAr []parquet.ByteArray
}

var decoders = sync.Pool{New: func() any { return new(columnDecoder) }}

// chunk appends the values of one column chunk to d.
func (dec *columnDecoder) chunk(d *columnData, c Column, cr file.ColumnChunkReader, unsigned bool) error {
	nullable := cr.Descriptor().MaxDefinitionLevel() > 0
	for cr.HasNext() {
		var total int64
		var read int
		var err error
		dec.defs = scratch(dec.defs, dec.batch)
		defs := dec.defs
		if !nullable {
			defs = nil
		}
		var put func(v int) // appends value v of those read
		switch r := cr.(type) {
		case *file.Int64ColumnChunkReader:
			dec.i64 = scratch(dec.i64, dec.batch)
			total, read, err = r.ReadBatch(int64(dec.batch), dec.i64, defs, nil)
			put = func(v int) { d.ints = append(d.ints, dec.i64[v]); d.valueAdded() }
		case *file.Int32ColumnChunkReader:
			dec.i32 = scratch(dec.i32, dec.batch)
			total, read, err = r.ReadBatch(int64(dec.batch), dec.i32, defs, nil)
			put = func(v int) {
				if unsigned {
					d.ints = append(d.ints, int64(uint32(dec.i32[v])))
				} else {
					d.ints = append(d.ints, int64(dec.i32[v]))
				}
				d.valueAdded()
			}
		case *file.Float64ColumnChunkReader:
			dec.f64 = scratch(dec.f64, dec.batch)
			total, read, err = r.ReadBatch(int64(dec.batch), dec.f64, defs, nil)
			put = func(v int) { d.floats = append(d.floats, dec.f64[v]); d.valueAdded() }
		case *file.Float32ColumnChunkReader:
			dec.f32 = scratch(dec.f32, dec.batch)
			total, read, err = r.ReadBatch(int64(dec.batch), dec.f32, defs, nil)
			put = func(v int) { d.floats = append(d.floats, float64(dec.f32[v])); d.valueAdded() }
		case *file.BooleanColumnChunkReader:
			dec.bools = scratch(dec.bools, dec.batch)
			total, read, err = r.ReadBatch(int64(dec.batch), dec.bools, defs, nil)
			put = func(v int) { d.ints = append(d.ints, boolInt(dec.bools[v])); d.valueAdded() }
		case *file.ByteArrayColumnChunkReader:
			dec.byteAr = scratch(dec.byteAr, dec.batch)
			total, read, err = r.ReadBatch(int64(dec.batch), dec.byteAr, defs, nil)
			put = func(v int) { d.appendCode(d.internBytes(dec.byteAr[v])) } // appendCode marks it valid
		default:
			return fmt.Errorf("unsupported column reader %T", cr)
		}
		if err != nil {
			return err
		}
		if total == 0 {
			break
		}
		if !nullable || int(total) == read {
			for v := range read {
				put(v)
			}
			continue
		}
		if !c.Nullable {
			nulls := int(total) - read
			return fmt.Errorf("%d %s in a non-nullable field", nulls, plural.Of(nulls, "null", "nulls"))
		}
		v := 0
		for k := range int(total) {
			if defs[k] > 0 {
				put(v)
				v++
				continue
			}
			d.appendNull(c.Type)
		}
	}
	return nil
}

func scratch[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// valueAdded marks the value just appended to ints or floats present.
func (d *columnData) valueAdded() {
	if d.valid != nil {
		d.valid = append(d.valid, true)
	}
}

// appendNull appends a null of typ.
func (d *columnData) appendNull(typ Type) {
	d.append(typ, Null(), len(d.ints)+len(d.floats)+len(d.codes))
}

// internBytes is intern of a string's bytes, which it copies only for a
// string not seen before.
func (d *columnData) internBytes(b []byte) int32 {
	if len(d.dict) > 0 && d.dict[d.last] == string(b) {
		return d.last
	}
	if code, ok := d.lookup[string(b)]; ok {
		d.last = code
		return code
	}
	if len(d.dict) == math.MaxInt32 {
		panic("export: more than 2^31-1 distinct strings in one column")
	}
	return d.intern(string(b))
}

// leanSchema is the Arrow schema of a flat file of nsysphase's own types
// read from the Parquet schema alone (int64, double, boolean, UTF-8
// strings), without decoding the Arrow schema stored in the file: columns
// get their names, types and nullability, not their units and docs. ok is
// false for any other column.
func leanSchema(ps *schema.Schema, md arrow.Metadata) (sc *arrow.Schema, ok bool) {
	fields := make([]arrow.Field, ps.NumColumns())
	for i := range fields {
		c := ps.Column(i)
		if c.MaxRepetitionLevel() != 0 || c.MaxDefinitionLevel() > 1 {
			return nil, false
		}
		lt := c.LogicalType()
		none := lt == nil || lt.Equals(schema.NoLogicalType{})
		var dt arrow.DataType
		switch c.PhysicalType() {
		case parquet.Types.Int64:
			if it, isInt := lt.(schema.IntLogicalType); !none && (!isInt || !it.IsSigned()) {
				return nil, false
			}
			dt = arrow.PrimitiveTypes.Int64
		case parquet.Types.Double:
			if !none {
				return nil, false
			}
			dt = arrow.PrimitiveTypes.Float64
		case parquet.Types.Boolean:
			if !none {
				return nil, false
			}
			dt = arrow.FixedWidthTypes.Boolean
		case parquet.Types.ByteArray:
			if _, isStr := lt.(schema.StringLogicalType); !isStr {
				return nil, false
			}
			dt = arrow.BinaryTypes.String
		default:
			return nil, false
		}
		fields[i] = arrow.Field{Name: c.Name(), Type: dt, Nullable: c.MaxDefinitionLevel() == 1}
	}
	return arrow.NewSchema(fields, &md), true
}
