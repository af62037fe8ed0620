package nsys_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFuzzSeeds rewrites the committed seed corpora of FuzzOpen and
// FuzzPagesVsSQLite from the base fixture (through SQLite, so that fuzzing
// never has to):
//
//	NSYSPHASE_WRITE_FUZZ_SEEDS=1 go test ./nsys -run TestWriteFuzzSeeds
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("NSYSPHASE_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set NSYSPHASE_WRITE_FUZZ_SEEDS=1 to rewrite the seed corpora")
	}
	tiny := tinyExport(t)
	for name, data := range map[string][]byte{
		"tiny": tiny, "half": tiny[:len(tiny)/2], "header": tiny[:100], "page1": tiny[:512],
		"magic": []byte("SQLite format 3\x00"), "empty": {},
	} {
		writeCorpus(t, "FuzzOpen", name, data)
	}

	// FuzzPagesVsSQLite: edits of tiny that SQLite's cursor or integrity
	// check refuses, on the table of tiny with the most leaves.
	p := filepath.Join(t.TempDir(), "tiny.sqlite")
	if err := os.WriteFile(p, tiny, 0o644); err != nil {
		t.Fatal(err)
	}
	im := loadImage(t, p)
	var leaves []uint32
	var root uint32
	for _, table := range []string{"StringIds", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL"} {
		r := rootPage(t, p, table)
		if l := im.leaves(r); len(l) > len(leaves) {
			leaves, root = l, r
		}
	}
	if len(leaves) < 3 {
		t.Fatalf("no table of tiny has 3 leaves")
	}
	ps := im.pageSize
	at := func(pg uint32) int { return int(pg-1) * ps }
	leaf := leaves[1]
	pa, pb := im.data[at(leaves[0]):at(leaves[0])+ps], im.data[at(leaves[1]):at(leaves[1])+ps]
	_, dupAt, k := im.leafRowid(leaf, 1)
	_, srcAt, k0 := im.leafRowid(leaf, 0)
	if k != k0 {
		t.Fatal("rowid varints of different lengths")
	}
	seeds := map[string][]byte{
		"none":           nil,
		"empty-leaf":     edit(at(leaf)+3, []byte{0, 0}),
		"swapped-leaves": append(edit(at(leaves[0]), pb), edit(at(leaves[1]), pa)...),
		"dup-rowid":      edit(at(leaf)+dupAt, bytes.Clone(im.data[at(leaf)+srcAt:at(leaf)+srcAt+k])),
		"cycle":          edit(at(root)+8, binary.BigEndian.AppendUint32(nil, root)),
		"bad-child":      edit(at(root)+8, binary.BigEndian.AppendUint32(nil, 1)),
		"cell-offset":    edit(at(leaf)+8, []byte{0xff, 0xff}),
	}
	for name, e := range seeds {
		writeCorpus(t, "FuzzPagesVsSQLite", name, e)
	}
}

// edit encodes edits of b at file offset off (see applyEdits in
// pages_fuzz_test.go): a 2-byte offset, a length byte, the bytes.
func edit(off int, b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		n := min(len(b), 255)
		out = append(out, byte(off>>8), byte(off), byte(n))
		out = append(out, b[:n]...)
		off, b = off+n, b[n:]
	}
	return out
}

// writeCorpus writes one `go test fuzz v1` file holding data.
func writeCorpus(t *testing.T, fuzzName, name string, data []byte) {
	dir := filepath.Join("testdata", "fuzz", fuzzName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)), 0o644); err != nil {
		t.Fatal(err)
	}
}
