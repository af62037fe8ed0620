package nsys_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"zombiezen.com/go/sqlite"

	"github.com/nsysphase/nsysphase/internal/badgen"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// Fuzzing the reader (about a minute each; see docs/robustness.md):
//
//	go test ./nsys -run '^$' -fuzz '^FuzzOpen$' -fuzztime 60s
//	go test ./nsys -run '^$' -fuzz '^FuzzRows$' -fuzztime 60s
//
// Without -fuzz, `go test ./nsys` runs both on their seeds, committed under
// nsys/testdata/fuzz/ with any crasher saved there.

// tinyExport builds the seed export (TestWriteFuzzSeeds commits it): a
// ~34 KiB copy of a real export with a few rows in each table the reader uses.
func tinyExport(tb testing.TB) []byte {
	tb.Helper()
	base := fixture.Get(tb, badgen.BaseFixture).SQLite(tb)
	dir, err := os.MkdirTemp("", "nsysphase-fuzz-seed-*")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(dir)
	p, err := badgen.Tiny(dir, base)
	if err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// checkRead reads the export at path completely and fails on any error that
// is not an *InputError about path, on a lost row, and on any file
// appearing beside the input.
func checkRead(t *testing.T, path string) {
	t.Helper()
	in, err := readSome(path)
	if err != nil {
		var ie *nsys.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("error %v (%T) is not an *nsys.InputError", err, err)
		}
		if ie.Path != path || ie.Problem == "" {
			t.Fatalf("InputError %+v: want Path %s and a Problem", ie, path)
		}
	} else {
		checkAccounted(t, in)
	}
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		names := make([]string, len(ents))
		for i, e := range ents {
			names[i] = e.Name()
		}
		t.Fatalf("files beside the input after reading: %v", names)
	}
}

// readSome is readAll cut to what a fuzzing run can afford per input (each
// scan opens a connection, and the fuzzer instruments all of SQLite): Open,
// Describe (every summary scan and the quality checks) and the two scans
// Describe does not run.
func readSome(path string) (*nsys.Info, error) {
	f, err := nsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	in, err := f.Describe()
	if err != nil {
		return nil, err
	}
	for _, err := range f.NVTXEvents() {
		if err != nil {
			return nil, err
		}
	}
	for _, err := range f.GraphTraces() {
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// FuzzOpen mutates the bytes of a small real-derived export: whatever the
// bytes, reading never panics, fails only with an *InputError, accounts for
// every row when it succeeds and writes nothing beside the input.
//
// Its seeds are the committed files under testdata/fuzz/FuzzOpen (written
// by TestWriteFuzzSeeds), so a fuzzing run builds nothing through SQLite.
func FuzzOpen(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "in.sqlite")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		checkRead(t, p)
	})
}

// FuzzRows writes one fuzzed value (NULL, an integer, a real or a string)
// into one cell (or a whole column) of the tiny export, through SQL, and
// reads the result: odd values must become warnings, skipped rows or an
// *InputError, never a panic or a lost row.
func FuzzRows(f *testing.F) {
	tiny := nsys.TinySeed(f)
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.sqlite")
	if err := os.WriteFile(seed, tiny, 0o644); err != nil {
		f.Fatal(err)
	}
	type column struct{ table, name string }
	var cols []column
	{
		c, err := sqlite.OpenConn(seed, sqlite.OpenReadOnly)
		if err != nil {
			f.Fatal(err)
		}
		err = query(c, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY m.name, p.cid`, func(st *sqlite.Stmt) {
			cols = append(cols, column{st.ColumnText(0), st.ColumnText(1)})
		})
		c.Close()
		if err != nil {
			f.Fatal(err)
		}
	}
	// Seeds: the cells the reader interprets most.
	for i, c := range cols {
		for _, v := range []struct {
			kind uint8
			i    int64
			s    string
		}{{0, 0, ""}, {1, -1, ""}, {1, math.MaxInt64, ""}, {3, 0, "3.11.0"}} {
			switch c.name {
			case "start", "end", "textId", "correlationId", "globalTid", "globalPid", "eventType", "id", "value", "endGlobalTid", "demangledName", "nameId":
				f.Add(uint16(i), uint8(0), v.kind, v.i, v.s)
			}
		}
	}
	f.Fuzz(func(t *testing.T, col uint16, row uint8, kind uint8, ival int64, sval string) {
		c := cols[int(col)%len(cols)]
		p := filepath.Join(t.TempDir(), "in.sqlite")
		if err := os.WriteFile(p, tiny, 0o644); err != nil {
			t.Fatal(err)
		}
		conn, err := sqlite.OpenConn(p, sqlite.OpenReadWrite)
		if err != nil {
			t.Fatal(err)
		}
		where := ""
		if row > 0 { // row 0: the whole column
			where = " WHERE rowid = (SELECT rowid FROM \"" + c.table + "\" ORDER BY rowid LIMIT 1 OFFSET ?)"
		}
		st, _, err := conn.PrepareTransient(`UPDATE "` + c.table + `" SET "` + c.name + `" = ?` + where)
		if err != nil {
			conn.Close()
			t.Fatal(err)
		}
		switch kind % 4 {
		case 0:
			st.BindNull(1)
		case 1:
			st.BindInt64(1, ival)
		case 2:
			st.BindFloat(1, float64(ival)/3)
		case 3:
			st.BindText(1, sval)
		}
		if row > 0 {
			st.BindInt64(2, int64(row-1))
		}
		_, err = st.Step()
		st.Finalize()
		conn.Close()
		if err != nil {
			return // a constraint of the schema refused the value
		}
		checkRead(t, p)
	})
}

func query(c *sqlite.Conn, q string, fn func(*sqlite.Stmt)) error {
	st, _, err := c.PrepareTransient(q)
	if err != nil {
		return err
	}
	defer st.Finalize()
	for {
		ok, err := st.Step()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		fn(st)
	}
}
