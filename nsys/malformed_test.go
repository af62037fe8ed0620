package nsys_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"

	"github.com/nsysphase/nsysphase/internal/badgen"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// The tests below build each input of issue 16 (cases 1–5 and the minor
// ones) from the bundled base fixture: page-level byte edits for what SQLite
// would never write, SQL edits for unusual but valid files.

// baseCopy copies the decompressed base fixture into a fresh temp dir.
func baseCopy(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(fixture.Get(t, badgen.BaseFixture).SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "in.sqlite")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sqlEdit runs statements on the file at p, read-write.
func sqlEdit(t *testing.T, p string, stmts ...string) {
	t.Helper()
	c, err := sqlite.OpenConn(p, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range stmts {
		if err := query(c, q, func(*sqlite.Stmt) {}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// sqlInt answers a one-number query on the file at p.
func sqlInt(t *testing.T, p, q string) int64 {
	t.Helper()
	c, err := sqlite.OpenConn(p, sqlite.OpenReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int64
	if err := query(c, q, func(st *sqlite.Stmt) { n = st.ColumnInt64(0) }); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// pageImage is a database file in memory, for page edits.
type pageImage struct {
	data     []byte
	pageSize int
}

func loadImage(t *testing.T, p string) *pageImage {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.BigEndian.Uint16(data[16:18]))
	if ps == 1 {
		ps = 65536
	}
	return &pageImage{data: data, pageSize: ps}
}

func (im *pageImage) save(t *testing.T, p string) {
	t.Helper()
	if err := os.WriteFile(p, im.data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// page returns page n (1-based) and the offset of its B-tree header.
func (im *pageImage) page(n uint32) ([]byte, int) {
	pg := im.data[int(n-1)*im.pageSize : int(n)*im.pageSize]
	if n == 1 {
		return pg, 100
	}
	return pg, 0
}

// cellOffsets lists the cell offsets of a B-tree page.
func (im *pageImage) cellOffsets(n uint32) []int {
	pg, hdr := im.page(n)
	ptrs := hdr + 8
	if pg[hdr] == 0x05 {
		ptrs = hdr + 12
	}
	cnt := int(binary.BigEndian.Uint16(pg[hdr+3:]))
	out := make([]int, cnt)
	for i := range out {
		out[i] = int(binary.BigEndian.Uint16(pg[ptrs+2*i:]))
	}
	return out
}

// leaves lists the leaf pages under root in rowid order.
func (im *pageImage) leaves(root uint32) []uint32 {
	pg, hdr := im.page(root)
	if pg[hdr] == 0x0d {
		return []uint32{root}
	}
	var out []uint32
	for _, off := range im.cellOffsets(root) {
		out = append(out, im.leaves(binary.BigEndian.Uint32(pg[off:]))...)
	}
	return append(out, im.leaves(binary.BigEndian.Uint32(pg[hdr+8:]))...)
}

// leafRowid returns the rowid of cell i of leaf page n and where its varint sits.
func (im *pageImage) leafRowid(n uint32, i int) (int64, int, int) {
	pg, _ := im.page(n)
	off := im.cellOffsets(n)[i]
	_, m := uvarint(pg[off:])
	v, k := uvarint(pg[off+m:])
	return int64(v), off + m, k
}

func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 8; i++ {
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return v<<8 | uint64(b[8]), 9
}

func rootPage(t *testing.T, p, table string) uint32 {
	t.Helper()
	return uint32(sqlInt(t, p, "SELECT rootpage FROM sqlite_master WHERE name = '"+table+"'"))
}

// scanErr drains the API calls through the page reader or SQLite.
func scanErr(t *testing.T, p string, viaSQL bool) (int64, error) {
	t.Helper()
	f, err := nsys.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	f.ScanThroughSQLite(viaSQL)
	var n int64
	for _, err := range f.APICalls() {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// wantMalformed requires an *InputError about p naming the table (and,
// from the page reader, the page).
func wantMalformed(t *testing.T, p string, err error, page uint32) {
	t.Helper()
	var ie *nsys.InputError
	if !errors.As(err, &ie) || ie.Path != p {
		t.Fatalf("got %v (%T), want an *nsys.InputError about %s", err, err, p)
	}
	msg := err.Error()
	if !strings.Contains(msg, nsys.TableRuntime) {
		t.Errorf("%q does not name the table", msg)
	}
	if page != 0 && !strings.Contains(msg, "page ") {
		t.Errorf("%q does not name the page", msg)
	}
}

// Issue 16 case 1: swapped leaf pages and an edited rowid leave SQLite's
// count(*) unchanged; both read paths must refuse the file.
func TestMalformedRowidOrder(t *testing.T) {
	base := baseCopy(t)
	count := sqlInt(t, base, "SELECT count(*) FROM "+nsys.TableRuntime)
	im := loadImage(t, base)
	leaves := im.leaves(rootPage(t, base, nsys.TableRuntime))
	if len(leaves) < 4 {
		t.Fatalf("%s has %d leaves; the test needs several", nsys.TableRuntime, len(leaves))
	}

	t.Run("swapped leaves", func(t *testing.T) {
		im := loadImage(t, base)
		a, b := leaves[1], leaves[2]
		pa, _ := im.page(a)
		pb, _ := im.page(b)
		tmp := bytes.Clone(pa)
		copy(pa, pb)
		copy(pb, tmp)
		p := filepath.Join(t.TempDir(), "swapped.sqlite")
		im.save(t, p)
		if n := sqlInt(t, p, "SELECT count(*) FROM "+nsys.TableRuntime); n != count {
			t.Fatalf("SQLite counts %d rows, want %d (SQLite does not see this damage)", n, count)
		}
		_, err := scanErr(t, p, false)
		wantMalformed(t, p, err, a)
		_, err = scanErr(t, p, true)
		wantMalformed(t, p, err, 0)
	})

	t.Run("edited rowid", func(t *testing.T) {
		im := loadImage(t, base)
		leaf := leaves[len(leaves)/2]
		_, _, k0 := im.leafRowid(leaf, 0)
		_, at, k3 := im.leafRowid(leaf, 3)
		if k0 != k3 {
			t.Fatalf("rowid varints of different lengths")
		}
		pg, _ := im.page(leaf)
		off0 := im.cellOffsets(leaf)[0]
		_, m := uvarint(pg[off0:])
		copy(pg[at:at+k3], pg[off0+m:off0+m+k0]) // cell 3 now repeats cell 0's rowid
		p := filepath.Join(t.TempDir(), "rowid.sqlite")
		im.save(t, p)
		if n := sqlInt(t, p, "SELECT count(*) FROM "+nsys.TableRuntime); n != count {
			t.Fatalf("SQLite counts %d rows, want %d", n, count)
		}
		_, err := scanErr(t, p, false)
		wantMalformed(t, p, err, leaf)
		if !strings.Contains(err.Error(), "rowid") {
			t.Errorf("%v does not say what is wrong", err)
		}
		_, err = scanErr(t, p, true)
		wantMalformed(t, p, err, 0)
		if !strings.Contains(err.Error(), "rowid") || !strings.Contains(err.Error(), "follows") {
			t.Errorf("SQLite path: %v", err)
		}
	})
}

// Issue 16 case 2: a non-root leaf page with cell count 0.
func TestMalformedEmptyLeaf(t *testing.T) {
	base := baseCopy(t)
	im := loadImage(t, base)
	leaves := im.leaves(rootPage(t, base, nsys.TableRuntime))
	leaf := leaves[len(leaves)/2]
	pg, hdr := im.page(leaf)
	binary.BigEndian.PutUint16(pg[hdr+3:], 0)
	p := filepath.Join(t.TempDir(), "empty.sqlite")
	im.save(t, p)
	_, err := scanErr(t, p, false)
	wantMalformed(t, p, err, leaf)
	if !strings.Contains(err.Error(), "no cells") {
		t.Errorf("%v does not say what is wrong", err)
	}
}

// readAPI reads every API call of p and checks the two read paths agree
// row for row; it returns the rows.
func readAPI(t *testing.T, p string) []nsys.APICall {
	t.Helper()
	var out [2][]nsys.APICall
	for i, viaSQL := range []bool{false, true} {
		f, err := nsys.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		f.ScanThroughSQLite(viaSQL)
		for c, err := range f.APICalls() {
			if err != nil {
				t.Fatalf("sql %v: %v", viaSQL, err)
			}
			out[i] = append(out[i], c)
		}
		f.Close()
	}
	if len(out[0]) != len(out[1]) {
		t.Fatalf("pages read %d rows, SQLite %d", len(out[0]), len(out[1]))
	}
	for i := range out[0] {
		if out[0][i] != out[1][i] {
			t.Fatalf("row %d: pages %+v, SQLite %+v", i, out[0][i], out[1][i])
		}
	}
	return out[0]
}

// Issue 16 case 3: valid files with extreme, sparse, negative and
// out-of-order rowids are read whole, in parts that follow the rows.
func TestValidUnusualRowids(t *testing.T) {
	base := baseCopy(t)
	T := nsys.TableRuntime
	want := readAPI(t, base)
	var wantSum int64
	for _, c := range want {
		wantSum += c.End - c.Start
	}
	cases := map[string][]string{
		"max rowid": {"UPDATE " + T + " SET rowid = 9223372036854775807 WHERE rowid = (SELECT max(rowid) FROM " + T + ")"},
		// The first row moves to the end: rows out of time order, max rowid 2^63-1.
		"first row last": {"UPDATE " + T + " SET rowid = 9223372036854775807 WHERE rowid = (SELECT min(rowid) FROM " + T + ")"},
		"sparse":         {"UPDATE " + T + " SET rowid = rowid * 17179869184"},
		"near -2^63":     {"UPDATE " + T + " SET rowid = rowid - 9223372036854775807 - 1"},
		"both ends": {
			"UPDATE " + T + " SET rowid = rowid - 9223372036854775807 - 1 WHERE rowid % 2 = 0",
			"UPDATE " + T + " SET rowid = 9223372036854775807 - rowid WHERE rowid > 0",
		},
	}
	for name, stmts := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "in.sqlite")
			data, err := os.ReadFile(base)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			sqlEdit(t, p, stmts...)
			got := readAPI(t, p)
			var sum int64
			for _, c := range got {
				sum += c.End - c.Start
			}
			if len(got) != len(want) || sum != wantSum {
				t.Fatalf("%d rows, total %d ns; want %d rows, %d ns", len(got), sum, len(want), wantSum)
			}
			f := openExport(t, p)
			if h := f.RowEstimate(T); h < int64(len(want))/2 || h > 2*int64(len(want)) {
				t.Errorf("RowHint %d for %d rows", h, len(want))
			}
			parts := f.SplitTable(T, 8, 1)
			if len(parts) < 2 || len(parts) > 8 {
				t.Errorf("Split gave %d parts, want 2–8", len(parts))
			}
			var n int
			var last int64
			for _, r := range parts {
				for c, err := range f.APICallsCoreIn(r) {
					if err != nil {
						t.Fatal(err)
					}
					n++
					last = c.Start
				}
			}
			if n != len(want) {
				t.Errorf("the %d parts hold %d rows, want %d", len(parts), n, len(want))
			}
			if name == "max rowid" && last != want[len(want)-1].Start {
				t.Errorf("the row with rowid 2^63-1 was not read last (start %d, want %d)", last, want[len(want)-1].Start)
			}
		})
	}
}

// Issue 16 case 4: " DESC" in the CREATE text (a comment, PRIMARY KEY(id
// DESC)) does not break the rowid alias; INTEGER PRIMARY KEY DESC (no
// alias) is read right too.
func TestSchemaTextDESC(t *testing.T) {
	base := baseCopy(t)
	f, err := nsys.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	want, err := f.Strings()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	maxID := sqlInt(t, base, "SELECT max(id) FROM StringIds")
	creates := map[string]string{
		"comment":        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, -- sorted DESC\n value TEXT NOT NULL)",
		"table pk desc":  "CREATE TABLE StringIds (id INTEGER NOT NULL, value TEXT NOT NULL, PRIMARY KEY(id DESC))",
		"column pk desc": "CREATE TABLE StringIds (id INTEGER PRIMARY KEY DESC, value TEXT NOT NULL)",
		"upper case":     "CREATE TABLE StringIds (ID INTEGER NOT NULL PRIMARY KEY, VALUE TEXT NOT NULL)",
	}
	for name, create := range creates {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "in.sqlite")
			data, _ := os.ReadFile(base)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			sqlEdit(t, p, "ALTER TABLE StringIds RENAME TO old_strings", create, "INSERT INTO StringIds SELECT * FROM old_strings", "DROP TABLE old_strings", "VACUUM")
			for _, viaSQL := range []bool{false, true} {
				f, err := nsys.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				f.ScanThroughSQLite(viaSQL)
				got, err := f.Strings()
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				if got.Len() != want.Len() {
					t.Fatalf("sql %v: %d strings, want %d", viaSQL, got.Len(), want.Len())
				}
				for id := int64(0); id <= maxID; id++ {
					g, gok := got.Get(id)
					w, wok := want.Get(id)
					if g != w || gok != wok {
						t.Fatalf("sql %v: string %d = %q (%v), want %q (%v)", viaSQL, id, g, gok, w, wok)
					}
				}
			}
		})
	}
}

// Minor cases of issue 16: upper-case column names are found; a kernel
// table replaced by a view is read through SQLite, not as 0 rows.
func TestSchemaCaseAndView(t *testing.T) {
	base := baseCopy(t)
	kernels := func(t *testing.T, p string, viaSQL bool) []nsys.Kernel {
		f := openExport(t, p)
		f.ScanThroughSQLite(viaSQL)
		var out []nsys.Kernel
		for k, err := range f.Kernels() {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, k)
		}
		return out
	}
	want := kernels(t, base, false)
	if len(want) == 0 {
		t.Fatal("the base fixture has no kernels")
	}
	K := nsys.TableKernel
	for name, stmts := range map[string][]string{
		"upper case": {`ALTER TABLE ` + K + ` RENAME COLUMN "start" TO "START"`, `ALTER TABLE ` + K + ` RENAME COLUMN "end" TO "End"`, `ALTER TABLE ` + K + ` RENAME COLUMN deviceId TO DEVICEID`},
		"view":       {`ALTER TABLE ` + K + ` RENAME TO kernel_rows`, `CREATE VIEW ` + K + ` AS SELECT * FROM kernel_rows`},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "in.sqlite")
			data, _ := os.ReadFile(base)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			sqlEdit(t, p, stmts...)
			for _, viaSQL := range []bool{false, true} {
				got := kernels(t, p, viaSQL)
				if len(got) != len(want) {
					t.Fatalf("sql %v: %d kernels, want %d", viaSQL, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("sql %v: kernel %d = %+v, want %+v", viaSQL, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// Issue 16 case 5: a REAL NaN stored in an integer column reads as NULL
// (as SQLite reads it): the row is skipped and counted, on both paths.
func TestStoredNaN(t *testing.T) {
	p := baseCopy(t)
	K := nsys.TableKernel
	const marker = 12345.678125 // a real no export holds: its bytes locate the cell
	sqlEdit(t, p, `UPDATE `+K+` SET "end" = 12345.678125 WHERE rowid = (SELECT min(rowid) FROM `+K+` WHERE rowid > 3)`)
	im := loadImage(t, p)
	var pat [8]byte
	binary.BigEndian.PutUint64(pat[:], math.Float64bits(marker))
	at := bytes.Index(im.data, pat[:])
	if at < 0 || bytes.Contains(im.data[at+1:], pat[:]) {
		t.Fatal("marker real not found exactly once")
	}
	binary.BigEndian.PutUint64(im.data[at:], 0x7ff8000000000001) // a NaN
	im.save(t, p)
	if n := sqlInt(t, p, `SELECT count(*) FROM `+K+` WHERE typeof("end") = 'null'`); n != 1 {
		t.Fatalf("SQLite reads %d NULL ends, want 1", n)
	}
	total := sqlInt(t, p, "SELECT count(*) FROM "+K)
	for _, viaSQL := range []bool{false, true} {
		f, err := nsys.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		f.ScanThroughSQLite(viaSQL)
		var n int64
		for k, err := range f.Kernels() {
			if err != nil {
				t.Fatal(err)
			}
			if k.End == 0 || k.End < k.Start {
				t.Errorf("sql %v: kernel with start %d end %d", viaSQL, k.Start, k.End)
			}
			n++
		}
		if n != total-1 || f.Skipped()[K] != 1 {
			t.Errorf("sql %v: %d kernels read, %d skipped; want %d and 1", viaSQL, n, f.Skipped()[K], total-1)
		}
		f.Close()
	}
}
