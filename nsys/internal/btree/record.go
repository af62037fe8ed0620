package btree

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// Kind is the storage class of one value of a record.
type Kind uint8

const (
	Null Kind = iota
	Integer
	Float
	Text
	Blob
)

// errRecord is returned for a record whose header contradicts its length.
var errRecord = errors.New("damaged record")

// Record is one row's record with its header parsed: the storage class and
// location of each leading column, with integers decoded. Parse it again for
// the next row; the slices are reused.
type Record struct {
	data []byte
	cols []value
}

// value is one decoded column of a record.
type value struct {
	v    int64 // integer value (Integer), float bits (Float), body offset (Text, Blob)
	size int32 // body length of Text and Blob values
	kind Kind
}

// Parse reads the header of rec for its first cols columns (fewer when the
// record holds fewer: the rest read as NULL, as for a column added by
// ALTER TABLE with no default) and decodes the columns whose bit is set in
// want (columns from 64 on are always decoded). The others are skipped:
// reading them from r afterwards is meaningless. rec must stay unchanged
// while r is used.
func (r *Record) Parse(rec []byte, cols int, want uint64) error {
	r.data = rec
	if cap(r.cols) < cols {
		r.cols = make([]value, cols)
	}
	vals := r.cols[:cols]
	r.cols = vals
	if len(rec) == 0 {
		return errRecord
	}
	var h, pos int
	if rec[0] < 0x80 { // one-byte header size: every record of a few columns
		h, pos = int(rec[0]), 1
	} else {
		hsize, n := varint(rec)
		if n == 0 || hsize > uint64(len(rec)) {
			return errRecord
		}
		h, pos = int(hsize), n
	}
	if h < pos || h > len(rec) {
		return errRecord
	}
	body := h
	i := 0
	for ; i < len(vals) && pos < h; i++ {
		t := uint64(rec[pos])
		if t < 0x80 {
			pos++
		} else {
			var m int
			t, m = varint(rec[pos:h])
			if m == 0 {
				return errRecord
			}
			pos += m
		}
		var size int
		if t < 12 {
			size = int(fixedSize[t])
			if size < 0 {
				return errRecord // serial types 10 and 11 are reserved
			}
		} else {
			if t > 1<<31 {
				return errRecord
			}
			size = int(t-12) / 2
		}
		if i < 64 && want&(1<<uint(i)) == 0 {
			body += size
			continue
		}
		if body+size > len(rec) {
			return errRecord
		}
		b := rec[body : body+size]
		k, v := Integer, int64(0)
		switch t {
		case 0:
			k = Null
		case 1:
			v = int64(int8(b[0]))
		case 2:
			v = int64(int16(binary.BigEndian.Uint16(b)))
		case 3:
			v = int64(int32(uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8) >> 8)
		case 4:
			v = int64(int32(binary.BigEndian.Uint32(b)))
		case 5:
			v = int64(uint64(binary.BigEndian.Uint16(b))<<48|uint64(binary.BigEndian.Uint32(b[2:]))<<16) >> 16
		case 6:
			v = int64(binary.BigEndian.Uint64(b))
		case 7:
			k, v = Float, int64(binary.BigEndian.Uint64(b))
			if math.IsNaN(math.Float64frombits(uint64(v))) {
				k, v = Null, 0 // SQLite reads a stored NaN as NULL
			}
		case 8, 9:
			v = int64(t - 8)
		default:
			k, v = Blob, int64(body)
			if t&1 == 1 {
				k = Text
			}
		}
		vals[i] = value{v: v, size: int32(size), kind: k}
		body += size
	}
	if err := checkEnd(rec, body, pos, h); err != nil {
		return err
	}
	for ; i < len(vals); i++ {
		vals[i].kind = Null
	}
	return nil
}

// ParseInts is Parse for the common row whose selected columns are all
// integers or NULL, decoding straight into ints: column i goes to
// ints[slot[i]] when slot[i] >= 0 (slot covers the first cols columns),
// and a NULL sets bit slot[i] of nulls instead (so does a column the
// record lacks). It checks the record exactly as Parse does and returns
// the same errors. ok is false, with no error, when a selected column
// holds a real, text or blob: Parse the record then (it makes the checks
// that ParseInts stopped short of). The record is not kept: Kind, Int and
// the other accessors do not see it.
func (r *Record) ParseInts(rec []byte, cols int, slot []int8, ints []int64) (nulls uint64, ok bool, err error) {
	if len(rec) == 0 {
		return 0, false, errRecord
	}
	var h, pos int
	if rec[0] < 0x80 {
		h, pos = int(rec[0]), 1
	} else {
		hsize, n := varint(rec)
		if n == 0 || hsize > uint64(len(rec)) {
			return 0, false, errRecord
		}
		h, pos = int(hsize), n
	}
	if h < pos || h > len(rec) {
		return 0, false, errRecord
	}
	body := h
	i := 0
	for ; i < cols && pos < h; i++ {
		t := uint64(rec[pos])
		if t < 0x80 {
			pos++
		} else {
			var m int
			t, m = varint(rec[pos:h])
			if m == 0 {
				return 0, false, errRecord
			}
			pos += m
		}
		var size int
		if t < 12 {
			size = int(fixedSize[t])
			if size < 0 {
				return 0, false, errRecord
			}
		} else {
			if t > 1<<31 {
				return 0, false, errRecord
			}
			size = int(t-12) / 2
		}
		k := slot[i]
		if k < 0 {
			body += size
			continue
		}
		if body+size > len(rec) {
			return 0, false, errRecord
		}
		b := rec[body : body+size]
		var v int64
		switch t {
		case 0:
			nulls |= 1 << uint(k)
		case 1:
			v = int64(int8(b[0]))
		case 2:
			v = int64(int16(binary.BigEndian.Uint16(b)))
		case 3:
			v = int64(int32(uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8) >> 8)
		case 4:
			v = int64(int32(binary.BigEndian.Uint32(b)))
		case 5:
			v = int64(uint64(binary.BigEndian.Uint16(b))<<48|uint64(binary.BigEndian.Uint32(b[2:]))<<16) >> 16
		case 6:
			v = int64(binary.BigEndian.Uint64(b))
		case 8, 9:
			v = int64(t - 8)
		default: // a real (even a NaN, which reads as NULL), text or blob
			return 0, false, nil // Parse decides, with every check it makes
		}
		ints[k] = v
		body += size
	}
	if err := checkEnd(rec, body, pos, h); err != nil {
		return 0, false, err
	}
	for ; i < cols; i++ {
		if k := slot[i]; k >= 0 {
			nulls |= 1 << uint(k)
		}
	}
	return nulls, true, nil
}

// checkEnd checks a record whose header was read up to pos and whose
// columns so far end at body.
func checkEnd(rec []byte, body, pos, h int) error {
	if body > len(rec) || pos > h {
		return errRecord
	}
	// With the whole header read, its columns must fill the payload exactly:
	// SQLite calls any other record malformed.
	if pos == h && body != len(rec) {
		return errRecord
	}
	return nil
}

// fixedSize is the body length of serial types 0–11; -1 marks the reserved
// types 10 and 11.
var fixedSize = [12]int8{0, 1, 2, 3, 4, 6, 8, 8, 0, 0, -1, -1}

// Kind returns the storage class of column i.
func (r *Record) Kind(i int) Kind {
	if i >= len(r.cols) {
		return Null
	}
	return r.cols[i].kind
}

// Stored returns the storage class of column i with its raw value: the
// integer for Integer (what Int returns), 0 for Null; for the other kinds
// use Int, Float, Text or Bytes.
func (r *Record) Stored(i int) (Kind, int64) {
	if i >= len(r.cols) {
		return Null, 0
	}
	c := r.cols[i]
	return c.kind, c.v
}

// Int returns column i as sqlite3_column_int64 would: integers as stored,
// reals truncated toward zero and clamped, text and blobs by their leading
// decimal integer, NULL as 0.
func (r *Record) Int(i int) int64 {
	if i >= len(r.cols) {
		return 0
	}
	switch c := r.cols[i]; c.kind {
	case Integer:
		return c.v
	case Float:
		return RealToInt(math.Float64frombits(uint64(c.v)))
	case Text, Blob:
		return atoi64(r.Bytes(i))
	default:
		return 0
	}
}

// Float returns column i as sqlite3_column_double would for numbers; text
// and blobs are parsed with strconv (SQLite's own parser accepts a
// leading numeric prefix; exports store no numbers as text).
func (r *Record) Float(i int) float64 {
	switch r.Kind(i) {
	case Null:
		return 0
	case Float:
		return math.Float64frombits(uint64(r.cols[i].v))
	case Integer:
		return float64(r.Int(i))
	default:
		f, _ := strconv.ParseFloat(string(r.Bytes(i)), 64)
		return f
	}
}

// Bytes returns the bytes of a text or blob column (nil otherwise).
func (r *Record) Bytes(i int) []byte {
	if k := r.Kind(i); k != Text && k != Blob {
		return nil
	}
	c := r.cols[i]
	return r.data[int(c.v) : int(c.v)+int(c.size)]
}

// Text returns an integer, text or blob column as sqlite3_column_text
// would: integers in decimal, text and blobs as stored, NULL as "". Reals
// are the caller's: SQLite renders them with its own printf, which the
// caller asks SQLite for (a rare path: exports store numbers as integers).
func (r *Record) Text(i int) string {
	switch r.Kind(i) {
	case Integer:
		return strconv.FormatInt(r.Int(i), 10)
	case Text, Blob:
		return string(r.Bytes(i))
	default:
		return ""
	}
}

// RealToInt converts like SQLite's sqlite3RealToI64: truncation toward
// zero, clamped to the int64 range.
func RealToInt(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f <= -9223372036854775808.0:
		return math.MinInt64
	case f >= 9223372036854775808.0:
		return math.MaxInt64
	default:
		return int64(f)
	}
}

// atoi64 converts text like SQLite's sqlite3Atoi64 as used by
// sqlite3_column_int64: leading spaces, a sign, the leading decimal digits;
// values beyond the int64 range clamp.
func atoi64(b []byte) int64 {
	i := 0
	for i < len(b) && (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	for i < len(b) && b[i] == '0' {
		i++
	}
	var u uint64
	digits := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if digits < 20 {
			u = u*10 + uint64(b[i]-'0')
		}
		digits++
	}
	switch {
	case digits > 19 || (digits == 19 && u > math.MaxInt64):
		if neg {
			return math.MinInt64
		}
		return math.MaxInt64
	case neg:
		return -int64(u)
	default:
		return int64(u)
	}
}
