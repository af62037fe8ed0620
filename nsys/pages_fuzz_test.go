package nsys

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Differential fuzzing of the page reader against SQLite (about ten
// seconds is a useful run; see docs/robustness.md):
//
//	go test ./nsys -run '^$' -fuzz '^FuzzPagesVsSQLite$' -fuzztime 10s
//
// The seeds are committed under testdata/fuzz/FuzzPagesVsSQLite, and the
// base export under testdata/fuzz/FuzzOpen/tiny: a run builds nothing
// through SQLite.

// corpusBytes reads the single []byte value of a committed fuzz corpus file.
func corpusBytes(tb testing.TB, path string) []byte {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	_, body, ok := strings.Cut(string(raw), "\n")
	body = strings.TrimSpace(body)
	if !ok || !strings.HasPrefix(body, "[]byte(") || !strings.HasSuffix(body, ")") {
		tb.Fatalf("%s: not a `go test fuzz v1` file of one []byte", path)
	}
	s, err := strconv.Unquote(body[len("[]byte(") : len(body)-1])
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// tinySeed is the small real-derived export the fuzzers mutate.
func tinySeed(tb testing.TB) []byte {
	return corpusBytes(tb, filepath.Join("testdata", "fuzz", "FuzzOpen", "tiny"))
}

// applyEdits patches base with edits: records of a 2-byte big-endian file
// offset, a length byte and that many bytes.
func applyEdits(base, edits []byte) []byte {
	out := bytes.Clone(base)
	for len(edits) >= 3 {
		off := int(binary.BigEndian.Uint16(edits))
		n := int(edits[2])
		edits = edits[3:]
		n = min(n, len(edits))
		if off < len(out) {
			copy(out[off:], edits[:n])
		}
		edits = edits[n:]
	}
	return out
}

// scanTable reads every column of table t through SQLite or the pages.
func scanTable(f *File, t string, viaSQL bool) ([][]cell, error) {
	var cols []column
	for _, c := range f.Columns(t) {
		cols = append(cols, opt(c))
	}
	f.sqlScans = viaSQL
	defer func() { f.sqlScans = false }()
	var rows [][]cell
	err := f.scanRange(t, cols, "", AllRows, func(st row) bool {
		cs := make([]cell, len(cols))
		for i := range cols {
			cs[i] = cell{typ: st.ColumnType(i), i: st.ColumnInt64(i)}
			if cs[i].typ != 4 { // not a blob
				cs[i].text = st.ColumnText(i)
			}
		}
		rows = append(rows, cs)
		return len(rows) < 100_000
	})
	return rows, err
}

// diffPagesSQLite compares the two read paths on every table the page
// reader takes: where both succeed they must give the same rows; the page
// reader must fail wherever SQLite does (it may refuse more: it checks
// what SQLite checks only in PRAGMA integrity_check).
func diffPagesSQLite(t *testing.T, path string) {
	f, err := Open(path)
	if err != nil {
		return // both paths share Open
	}
	defer f.Close()
	if f.pages == nil {
		return
	}
	for _, table := range f.Tables() {
		if f.pageTables[table] == nil {
			continue
		}
		sqlRows, sqlErr := scanTable(f, table, true)
		pageRows, pageErr := scanTable(f, table, false)
		for _, err := range []error{sqlErr, pageErr} {
			var ie *InputError
			if err != nil && !errors.As(err, &ie) {
				t.Fatalf("%s: error %v (%T) is not an *InputError", table, err, err)
			}
		}
		switch {
		case sqlErr != nil && pageErr == nil:
			t.Fatalf("%s: SQLite fails (%v), the page reader reads %d rows", table, sqlErr, len(pageRows))
		case sqlErr == nil && pageErr == nil:
			if len(sqlRows) != len(pageRows) {
				t.Fatalf("%s: SQLite read %d rows, the page reader %d", table, len(sqlRows), len(pageRows))
			}
			for i := range sqlRows {
				for j := range sqlRows[i] {
					if sqlRows[i][j] != pageRows[i][j] {
						t.Fatalf("%s row %d column %d: SQLite %+v, pages %+v", table, i, j, sqlRows[i][j], pageRows[i][j])
					}
				}
			}
		}
	}
}

// FuzzPagesVsSQLite edits bytes of a small real-derived export and reads
// every page-readable table both ways (see diffPagesSQLite).
func FuzzPagesVsSQLite(f *testing.F) {
	tiny := tinySeed(f)
	f.Fuzz(func(t *testing.T, edits []byte) {
		p := filepath.Join(t.TempDir(), "in.sqlite")
		if err := os.WriteFile(p, applyEdits(tiny, edits), 0o644); err != nil {
			t.Fatal(err)
		}
		diffPagesSQLite(t, p)
	})
}

// TinySeed gives the external tests (FuzzOpen, FuzzRows) the committed
// base export.
func TinySeed(tb testing.TB) []byte { return tinySeed(tb) }
