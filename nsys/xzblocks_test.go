package nsys

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ulikunitz/xz"
)

// multiBlockXZ compresses data in blocks of blockSize bytes, as xz -T does.
func multiBlockXZ(t *testing.T, data []byte, blockSize int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := xz.WriterConfig{BlockSize: blockSize}.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDecompressBlocks: a file of several blocks decodes, block by block
// and concurrently, to exactly the original bytes; a damaged block, or an
// index that does not match the blocks, is an error or no block list (then
// the one-pass reader decides), never wrong bytes.
func TestDecompressBlocks(t *testing.T) {
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = byte(i*7 + i/1000) // compressible, not trivially
	}
	// An SQLite header (4096-byte pages, no page count): the decoder checks
	// the first block's start before writing.
	copy(data, sqliteMagic)
	data[16], data[17] = 0x10, 0x00
	clear(data[24:32])
	const blockSize = 64 << 10
	comp := multiBlockXZ(t, data, blockSize)
	header, blocks, ok := xzBlocks(bytes.NewReader(comp), int64(len(comp)))
	if !ok || len(blocks) != (len(data)+blockSize-1)/blockSize {
		t.Fatalf("xzBlocks: ok %v, %d blocks; want %d", ok, len(blocks), (len(data)+blockSize-1)/blockSize)
	}
	disk := filepath.Join(t.TempDir(), "out.sqlite")
	if err := decompressBlocks(context.Background(), bytes.NewReader(comp), header, blocks, disk); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(disk)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("decoded %d bytes differ from the %d original", len(got), len(data))
	}

	// A flipped byte inside the second block's data: its check fails.
	bad := bytes.Clone(comp)
	bad[blocks[1].off+blocks[1].unpadded/2] ^= 0x55
	if err := decompressBlocks(context.Background(), bytes.NewReader(bad), header, blocks, disk); err == nil {
		t.Error("a damaged block decoded without error")
	}
	// Stream padding after the footer, or a damaged index: no block list.
	padded := append(bytes.Clone(comp), 0, 0, 0, 0)
	if _, _, ok := xzBlocks(bytes.NewReader(padded), int64(len(padded))); ok {
		t.Error("xzBlocks accepted stream padding")
	}
	badIdx := bytes.Clone(comp)
	badIdx[len(badIdx)-14] ^= 1 // in the index's CRC32
	if _, _, ok := xzBlocks(bytes.NewReader(badIdx), int64(len(badIdx))); ok {
		t.Error("xzBlocks accepted an index with a wrong CRC32")
	}
}
