package btree

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"zombiezen.com/go/sqlite"
)

const smallRows = 40

// smallDB writes a database of 512-byte pages with a table deep enough for
// interior pages and records long enough for overflow chains.
func smallDB(tb testing.TB) []byte {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "small.sqlite")
	c, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		tb.Fatal(err)
	}
	exec := func(q string) {
		st, _, err := c.PrepareTransient(q)
		if err != nil {
			tb.Fatal(err)
		}
		defer st.Finalize()
		if _, err := st.Step(); err != nil {
			tb.Fatal(err)
		}
	}
	exec("PRAGMA page_size=512")
	exec("CREATE TABLE t (a INTEGER, b TEXT)")
	for i := range smallRows {
		exec(fmt.Sprintf("INSERT INTO t VALUES (%d, '%s')", i*i-50, bytes.Repeat([]byte{'x'}, i*37%1200)))
	}
	if err := c.Close(); err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// scanAll reads every row of the table rooted at page 2.
func scanAll(data []byte) (rows int, sum int64, err error) {
	f, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return 0, 0, err
	}
	var rec Record
	err = f.NewScanner(nil).Scan(2, -1<<63, 1<<63-1, func(rowid int64, b []byte) bool {
		if e := rec.Parse(b, 2, ^uint64(0)); e != nil {
			return false
		}
		rows++
		sum += rec.Int(0) + int64(len(rec.Bytes(1)))
		return true
	})
	return rows, sum, err
}

func TestScanSmall(t *testing.T) {
	rows, sum, err := scanAll(smallDB(t))
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for i := range smallRows {
		want += int64(i*i-50) + int64(i*37%1200)
	}
	if rows != smallRows || sum != want {
		t.Errorf("rows %d sum %d, want %d and %d", rows, sum, smallRows, want)
	}
}

// TestScanDamaged: a page that points back at its own parent, or past the end
// of the file, is an error naming the page, not a hang or a panic.
func TestScanDamaged(t *testing.T) {
	data := smallDB(t)
	// Page 2 is the table's root, an interior page (type 5): point its
	// right-most child back at itself.
	root := data[512:1024]
	if root[0] != 0x05 {
		t.Fatalf("root page type %#x, want an interior page", root[0])
	}
	cyc := bytes.Clone(data)
	copy(cyc[512+8:], []byte{0, 0, 0, 2})
	_, _, err := scanAll(cyc)
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("cycle: got %v, want a CorruptError", err)
	}
	far := bytes.Clone(data)
	copy(far[512+8:], []byte{0, 1, 0, 0})
	if _, _, err := scanAll(far); !errors.As(err, &ce) || ce.Page != 65536 {
		t.Fatalf("page out of range: got %v", err)
	}
}

// FuzzScan's seed is the committed testdata/fuzz/FuzzScan/small (written
// by TestWriteFuzzSeed), so a fuzzing run builds nothing through SQLite.
func FuzzScan(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		scanAll(data) // must return, with or without an error, and never panic
	})
}

func BenchmarkScanSmall(b *testing.B) {
	data := smallDB(b)
	for b.Loop() {
		scanAll(data)
	}
}

// TestWriteFuzzSeed rewrites FuzzScan's committed seed:
//
//	NSYSPHASE_WRITE_FUZZ_SEEDS=1 go test ./nsys/internal/btree -run TestWriteFuzzSeed
func TestWriteFuzzSeed(t *testing.T) {
	if os.Getenv("NSYSPHASE_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set NSYSPHASE_WRITE_FUZZ_SEEDS=1 to rewrite the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzScan")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small"), []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", smallDB(t))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSubtrees: the leaf level of the small table, with the keys between
// its pages, covers every row once; a scan bounded by those keys reads each
// leaf's rows only.
func TestSubtrees(t *testing.T) {
	data := smallDB(t)
	f, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	leaves, keys, isLeaf, err := f.Subtrees(2, 1<<62)
	if err != nil || !isLeaf || len(leaves) < 3 || len(keys) != len(leaves)-1 {
		t.Fatalf("Subtrees: %d leaves, %d keys, leaves %v, err %v", len(leaves), len(keys), isLeaf, err)
	}
	total := 0
	for i := range leaves {
		lo, hi := int64(-1<<63), int64(1<<63-1)
		if i > 0 {
			lo = keys[i-1] + 1
		}
		if i < len(keys) {
			hi = keys[i]
		}
		cells, err := f.Cells(leaves[i])
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if err := f.NewScanner(nil).Scan(2, lo, hi, func(int64, []byte) bool { n++; return true }); err != nil {
			t.Fatal(err)
		}
		if n != cells {
			t.Errorf("leaf %d: the scan of (%d..%d) read %d rows, the leaf has %d cells", leaves[i], lo, hi, n, cells)
		}
		total += n
	}
	if total != smallRows {
		t.Errorf("%d rows in all, want %d", total, smallRows)
	}
	if top, _, isLeaf, err := f.Subtrees(2, 1); err != nil || isLeaf || len(top) != 1 || top[0] != 2 {
		t.Errorf("Subtrees(root, 1) = %v, %v, %v", top, isLeaf, err)
	}
}

// TestOverflowChainDamage: an overflow chain that ends short, points past
// the file or runs on past its record is an error naming the leaf page.
func TestOverflowChainDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ovf.sqlite")
	c, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"PRAGMA page_size=512", "CREATE TABLE t (a INTEGER, b TEXT)", "INSERT INTO t VALUES (1, '" + string(bytes.Repeat([]byte{'y'}, 2000)) + "')"} {
		st, _, err := c.PrepareTransient(q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Step(); err != nil {
			t.Fatal(err)
		}
		st.Finalize()
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rows, _, err := scanAll(data); err != nil || rows != 1 {
		t.Fatalf("intact: %d rows, %v", rows, err)
	}
	pages := len(data) / 512
	if pages < 4 {
		t.Fatalf("%d pages: no overflow chain", pages)
	}
	// Pages 3.. hold the chain of the one record, in order; the last ends it.
	next := func(pg int) []byte { return data[(pg-1)*512 : (pg-1)*512+4] }
	for name, set := range map[string]func(d []byte){
		"ends short": func(d []byte) { copy(d[2*512:], []byte{0, 0, 0, 0}) },
		"past file":  func(d []byte) { copy(d[2*512:], []byte{0, 1, 0, 0}) },
		"runs on":    func(d []byte) { copy(d[(pages-1)*512:], []byte{0, 0, 0, 3}) },
	} {
		if name == "runs on" && !bytes.Equal(next(pages), []byte{0, 0, 0, 0}) {
			t.Fatalf("page %d is not the end of the chain", pages)
		}
		d := bytes.Clone(data)
		set(d)
		_, _, err := scanAll(d)
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Errorf("%s: got %v, want a CorruptError", name, err)
		}
	}
}
