package export

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// appendFloatExact appends the shortest representation that parses back to
// f, in positional notation for everyday magnitudes (as encoding/json
// does), always with a '.' or exponent so typed readers infer a float
// column even when every value happens to be integral.
func appendFloatExact(b []byte, f float64) []byte {
	a := math.Abs(f)
	format := byte('f')
	if a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	for _, c := range b[start:] {
		if c == '.' || c == 'e' {
			return b
		}
	}
	return append(b, '.', '0')
}

// csvNeedsQuotes follows RFC 4180 and also quotes the empty string and
// blank-edged values: unquoted empty means null, and some readers trim.
func csvNeedsQuotes(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return true
	}
	return strings.ContainsAny(s, ",\"\r\n")
}

func writeCSVField(bw *bufio.Writer, s string) {
	if !csvNeedsQuotes(s) {
		bw.WriteString(s)
		return
	}
	bw.WriteByte('"')
	bw.WriteString(strings.ReplaceAll(s, `"`, `""`))
	bw.WriteByte('"')
}

// writeCSV writes an RFC 4180 CSV with a header row. Lines end in LF, not
// CRLF: every CSV reader accepts LF, and Unix tools (awk, cut) choke on CR.
// A null is an empty unquoted field; an empty string is "".
func writeCSV(bw *bufio.Writer, t *Table) error {
	for c, col := range t.cols {
		if c > 0 {
			bw.WriteByte(',')
		}
		writeCSVField(bw, col.Name)
	}
	bw.WriteByte('\n')
	var num []byte
	for r := range t.rows {
		for c, col := range t.cols {
			if c > 0 {
				bw.WriteByte(',')
			}
			d := &t.data[c]
			if d.isNull(r) {
				continue
			}
			switch col.Type {
			case TypeInt64:
				num = strconv.AppendInt(num[:0], d.ints[r], 10)
				bw.Write(num)
			case TypeFloat64:
				v := d.floats[r]
				switch {
				case math.IsNaN(v):
					bw.WriteString("NaN")
				case math.IsInf(v, 1):
					bw.WriteString("Inf")
				case math.IsInf(v, -1):
					bw.WriteString("-Inf")
				default:
					num = appendFloatExact(num[:0], v)
					bw.Write(num)
				}
			case TypeBool:
				bw.WriteString(strconv.FormatBool(d.ints[r] != 0))
			case TypeString:
				writeCSVField(bw, CSVCell(d.dict[d.codes[r]]))
			}
		}
		bw.WriteByte('\n')
	}
	return nil
}

// appendJSONString appends s as a JSON string. Unlike encoding/json it
// leaves <, > and & alone (this is data, not HTML); invalid UTF-8 becomes
// U+FFFD as in encoding/json.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript source.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONRow appends row r as one JSON object. Int64 stays an exact
// integer (JavaScript readers must use BigInt-aware parsers above 2^53,
// but the bytes are right); NaN and ±Inf, which JSON cannot express, are
// written as null.
func appendJSONRow(b []byte, t *Table, r int, keys [][]byte) []byte {
	b = append(b, '{')
	for c, col := range t.cols {
		if c > 0 {
			b = append(b, ", "...)
		}
		b = append(b, keys[c]...)
		d := &t.data[c]
		if d.isNull(r) {
			b = append(b, "null"...)
			continue
		}
		switch col.Type {
		case TypeInt64:
			b = strconv.AppendInt(b, d.ints[r], 10)
		case TypeFloat64:
			v := d.floats[r]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				b = append(b, "null"...)
			} else {
				b = appendFloatExact(b, v)
			}
		case TypeBool:
			b = strconv.AppendBool(b, d.ints[r] != 0)
		case TypeString:
			b = appendJSONString(b, d.dict[d.codes[r]])
		}
	}
	return append(b, '}')
}

// writeJSONArray writes the rows of t as a JSON array with one object per
// line: valid JSON for jq, pandas and DuckDB, and readable in a diff.
func writeJSONArray(bw *bufio.Writer, t *Table, indent string) {
	if t.rows == 0 {
		bw.WriteString("[]")
		return
	}
	keys := make([][]byte, len(t.cols))
	for c, col := range t.cols {
		keys[c] = append(appendJSONString(nil, col.Name), ": "...)
	}
	bw.WriteString("[\n")
	var buf []byte
	for r := range t.rows {
		buf = append(buf[:0], indent...)
		buf = append(buf, "  "...)
		buf = appendJSONRow(buf, t, r, keys)
		if r < t.rows-1 {
			buf = append(buf, ',')
		}
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	bw.WriteString(indent)
	bw.WriteByte(']')
}

func writeJSONRows(bw *bufio.Writer, t *Table) error {
	writeJSONArray(bw, t, "")
	bw.WriteByte('\n')
	return nil
}

// writeJSONTables writes {"<table>": [rows…], …} in the given order.
func writeJSONTables(bw *bufio.Writer, tables []*Table) error {
	if len(tables) == 0 {
		bw.WriteString("{}\n")
		return nil
	}
	seen := make(map[string]bool, len(tables))
	for _, t := range tables {
		if seen[t.Name] {
			return fmt.Errorf("write tables as json: duplicate table name %s", t.Name)
		}
		seen[t.Name] = true
	}
	bw.WriteString("{\n")
	for i, t := range tables {
		bw.WriteString("  ")
		bw.Write(appendJSONString(nil, t.Name))
		bw.WriteString(": ")
		writeJSONArray(bw, t, "  ")
		if i < len(tables)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("}\n")
	return nil
}
