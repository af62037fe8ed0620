package nsys

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// cell is one value as a decoder sees it.
type cell struct {
	typ  sqlite.ColumnType
	i    int64
	text string
}

// readCells scans table t (all columns, as optional columns, plus one with a
// NULL default) over r through SQLite or through the pages.
func readCells(t *testing.T, f *File, table string, r Part, viaSQL bool) [][]cell {
	t.Helper()
	cols := cellColumns(f, table)
	f.sqlScans = viaSQL
	defer func() { f.sqlScans = false }()
	var rows [][]cell
	err := f.scanRange(table, cols, "", r, func(st row) bool {
		cs := make([]cell, len(cols))
		for i := range cols {
			cs[i] = cell{typ: st.ColumnType(i), i: st.ColumnInt64(i)}
			if cs[i].typ != sqlite.TypeBlob {
				cs[i].text = st.ColumnText(i)
			}
		}
		rows = append(rows, cs)
		return true
	})
	if err != nil {
		t.Fatalf("%s (sql %v): %v", table, viaSQL, err)
	}
	return rows
}

// cellColumns are the columns readCells reads: all of table's, as optional
// columns, plus one with a NULL default and two absent ones.
func cellColumns(f *File, table string) []column {
	cols := []column{}
	for _, c := range f.Columns(table) {
		cols = append(cols, opt(c))
	}
	return append(cols, optInt(f.Columns(table)[0], -7), opt("no_such_column"), optInt("no_such_column", 42))
}

func compareCells(t *testing.T, what string, sqlRows, pageRows [][]cell) {
	t.Helper()
	if len(sqlRows) != len(pageRows) {
		t.Fatalf("%s: SQLite read %d rows, the page reader %d", what, len(sqlRows), len(pageRows))
	}
	for i := range sqlRows {
		for j := range sqlRows[i] {
			if sqlRows[i][j] != pageRows[i][j] {
				t.Fatalf("%s row %d column %d: SQLite %+v, pages %+v", what, i, j, sqlRows[i][j], pageRows[i][j])
			}
		}
	}
}

// openPaged opens path for the test and requires page scans to be on.
func openPaged(t *testing.T, path string) *File {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if f.pages == nil {
		t.Fatalf("%s: page scans are off", path)
	}
	return f
}

// TestPageScansEqualSQLite: on every fixture, every table the page reader
// takes gives the same rows, values and types as SQLite, whole and in rowid
// ranges (seeks into the B-tree). On the large fixture (1.1 M API rows,
// SQLite ten times slower than the pages) the pages' parts must add up to
// the pages' whole table, row for row, and SQLite checks three of the
// parts — the first, a middle and the last; every row of the small ones is
// compared through SQLite.
func TestPageScansEqualSQLite(t *testing.T) {
	fxs := append(fixture.All(t), fixture.Extra(t)...)
	for _, fx := range fxs {
		t.Run(fx.Name, func(t *testing.T) {
			f := openPaged(t, fx.SQLite(t))
			tables := 0
			for _, table := range f.Tables() {
				if f.pageTables[table] == nil {
					continue
				}
				tables++
				if fx.Name == fixture.LargeName {
					if !fixture.Long() {
						t.Skip("the large export's page cross-check runs in make test-long (NSYSPHASE_LONG=1)")
					}
					comparePartsSampled(t, f, table)
					continue
				}
				compareCells(t, table, readCells(t, f, table, AllRows, true), readCells(t, f, table, AllRows, false))
				parts := f.SplitTable(table, 3, 2)
				for _, r := range parts {
					compareCells(t, fmt.Sprintf("%s %+v", table, r), readCells(t, f, table, r, true), readCells(t, f, table, r, false))
				}
			}
			for _, must := range []string{TableRuntime, TableNVTX, TableStrings} {
				if f.HasTable(must) && f.pageTables[must] == nil {
					t.Errorf("%s is not read from the pages", must)
				}
			}
			t.Logf("%d tables compared", tables)
		})
	}
}

// comparePartsSampled checks table t of a large export: the page reader's
// 16 parts, in order, hold exactly the rows of its whole-table scan (by a
// digest of every cell of every row), and SQLite reads the same cells as the
// pages in the first, a middle and the last part.
func comparePartsSampled(t *testing.T, f *File, table string) {
	t.Helper()
	whole := readDigests(t, f, table, AllRows)
	parts := f.SplitTable(table, 16, 2)
	var joined []uint64
	for _, r := range parts {
		joined = append(joined, readDigests(t, f, table, r)...)
	}
	if !slices.Equal(whole, joined) {
		t.Fatalf("%s: the %d parts hold %d rows that differ from the %d of the whole table", table, len(parts), len(joined), len(whole))
	}
	for _, i := range slices.Compact([]int{0, len(parts) / 2, len(parts) - 1}) {
		r := parts[i]
		compareCells(t, fmt.Sprintf("%s part %d %+v", table, i, r), readCells(t, f, table, r, true), readCells(t, f, table, r, false))
	}
}

// readDigests reads table t over r through the pages as readCells does and
// returns one digest of each row's cells (a large table's cells would take
// gigabytes).
func readDigests(t *testing.T, f *File, table string, r Part) []uint64 {
	t.Helper()
	cols := cellColumns(f, table)
	var out []uint64
	h := fnv.New64a()
	var num [9]byte
	err := f.scanRange(table, cols, "", r, func(st row) bool {
		h.Reset()
		for i := range cols {
			typ := st.ColumnType(i)
			num[0] = byte(typ)
			binary.LittleEndian.PutUint64(num[1:], uint64(st.ColumnInt64(i)))
			h.Write(num[:])
			if typ != sqlite.TypeBlob {
				io.WriteString(h, st.ColumnText(i))
				h.Write([]byte{0})
			}
		}
		out = append(out, h.Sum64())
		return true
	})
	if err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	return out
}

// TestPageScansOddRecords builds a database with what exports rarely hold —
// records spilling into overflow pages, rows older than an ALTER TABLE,
// INTEGER PRIMARY KEY rowid aliases, reals, text and blobs in integer
// columns, integers of every stored width, a deep B-tree of 512-byte pages
// — and checks the page reader against SQLite on it. Tables it must not
// read (WITHOUT ROWID, generated columns, defaults) fall back to SQLite.
func TestPageScansOddRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd.sqlite")
	c, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{
		"PRAGMA page_size=512",
		"BEGIN", // one transaction: 3000 inserts, not 3000 journal syncs
		"CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)",
		"INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.20.3')",
		"CREATE TABLE odd (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER NOT NULL, t TEXT)",
		"CREATE TABLE old (a INTEGER, b INTEGER)",
		"INSERT INTO old VALUES (1, 2), (3, NULL)",
		"ALTER TABLE old ADD COLUMN c INTEGER",
		"INSERT INTO old VALUES (5, 6, 7)",
		"CREATE TABLE wr (k INTEGER PRIMARY KEY, v INTEGER) WITHOUT ROWID",
		"INSERT INTO wr VALUES (1, 2)",
		"CREATE TABLE dflt (a INTEGER, b INTEGER DEFAULT 9)",
		"INSERT INTO dflt(a) VALUES (1)",
		"CREATE TABLE gen (a INTEGER, b INTEGER GENERATED ALWAYS AS (a*2) VIRTUAL)",
		"INSERT INTO gen(a) VALUES (4)",
	}
	values := []string{"0", "1", "-1", "127", "-128", "128", "32767", "-32768", "32768", "8388607", "-8388608", "8388608",
		"2147483647", "-2147483648", "2147483648", "140737488355327", "-140737488355328", "140737488355328",
		"9223372036854775807", "-9223372036854775808", "NULL", "1.5", "-2.75", "1e300", "-1e300", "'12abc'", "'  -34'",
		"'abc'", "'99999999999999999999'", "x'3132'", "0.0"}
	for i := 0; i < 3000; i++ {
		v := values[i%len(values)]
		text := "NULL"
		switch i % 7 {
		case 0:
			text = "'" + strings.Repeat(fmt.Sprintf("row %d ", i), 1+i%400) + "'" // up to ~4 KB: overflow chains
		case 1:
			text = fmt.Sprintf("'%d'", i)
		case 2:
			text = "3.25"
		}
		stmts = append(stmts, fmt.Sprintf("INSERT INTO odd(id, a, b, t) VALUES (%d, %s, %d, %s)", i*3-4000, v, i, text))
	}
	stmts = append(stmts, "COMMIT")
	for _, q := range stmts {
		if err := execSimple(c, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	f := openPaged(t, path)
	for _, table := range []string{"wr", "dflt", "gen"} {
		if f.pageTables[table] != nil {
			t.Errorf("%s: the page reader must leave it to SQLite", table)
		}
	}
	for _, table := range []string{"odd", "old", "META_DATA_EXPORT"} {
		if f.pageTables[table] == nil {
			t.Fatalf("%s: not read from the pages", table)
		}
		compareCells(t, table, readCells(t, f, table, AllRows, true), readCells(t, f, table, AllRows, false))
		for _, r := range []Part{{lo: -100, hi: 4, bounded: true}, {lo: 5, hi: 5, bounded: true}, {lo: 1000, hi: 1<<63 - 1, bounded: true}, {lo: 7, hi: 6, bounded: true}, {lo: -1 << 63, hi: -3999, bounded: true}} {
			compareCells(t, fmt.Sprintf("%s %+v", table, r), readCells(t, f, table, r, true), readCells(t, f, table, r, false))
		}
	}
	// The rows really did take the paths under test.
	rows := readCells(t, f, "odd", AllRows, false)
	if len(rows) != 3000 || rows[0][0].i != -4000 || len(rows[392][3].text) < 3000 {
		t.Errorf("odd: %d rows, first id %d, row 392 text %d bytes", len(rows), rows[0][0].i, len(rows[392][3].text))
	}
}
