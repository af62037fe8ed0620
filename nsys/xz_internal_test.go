package nsys

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestDecompressDecoders: the xz program and the Go fallback decode a
// bundled export to the same bytes, and the fallback is used without xz.
func TestDecompressDecoders(t *testing.T) {
	path := filepath.Join(fixture.Root(), "testdata", "nsys-2025.3-h200", "eager_graph_small.sqlite.xz")
	decode := func(command string) []byte {
		t.Helper()
		saved := xzCommand
		xzCommand = command
		defer func() { xzCommand = saved }()
		in, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		disk := filepath.Join(t.TempDir(), "out.sqlite")
		if err := decompressTo(context.Background(), in, in, disk); err != nil {
			t.Fatalf("decoder %q: %v", command, err)
		}
		b, err := os.ReadFile(disk)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	goBytes := decode("")
	if !bytes.HasPrefix(goBytes, []byte("SQLite format 3\x00")) {
		t.Fatalf("Go decoder: %d bytes, not a SQLite file", len(goBytes))
	}
	if _, err := exec.LookPath("xz"); err != nil {
		t.Skip("xz not on PATH: only the Go decoder checked")
	}
	if xzBytes := decode("xz"); !bytes.Equal(xzBytes, goBytes) {
		t.Errorf("xz decoded %d bytes, the Go decoder %d: they differ", len(xzBytes), len(goBytes))
	}
	// A stream cut short fails through either decoder.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{"", "xz"} {
		xzCommand = command
		err := decompressTo(context.Background(), nil, bytes.NewReader(data[:len(data)/2]), filepath.Join(t.TempDir(), "cut.sqlite"))
		xzCommand = "xz"
		if err == nil {
			t.Errorf("decoder %q: a truncated stream decoded without error", command)
		}
	}
}
