package nsys

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// xzOf compresses data (blockSize > 0: in blocks of that size, as xz -T
// writes large files).
func xzOf(t *testing.T, data []byte, blockSize int64) []byte {
	t.Helper()
	if bin, err := exec.LookPath("xz"); err == nil { // much faster than the Go encoder
		args := []string{"-c", "-0", "-T1"}
		if blockSize > 0 {
			args = append(args, "--block-size="+strconv.FormatInt(blockSize, 10))
		}
		cmd := exec.Command(bin, args...)
		cmd.Stdin = bytes.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var b bytes.Buffer
	cfg := xz.WriterConfig{}
	if blockSize > 0 {
		cfg.BlockSize = blockSize
	}
	w, err := cfg.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// countReader counts the bytes read through it.
type countReader struct {
	r *bytes.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestXZChecksHeaderFirst is issue 24 case 17: a small .xz that expands to
// gigabytes of zeros was written whole to the temporary directory before
// the SQLite header was checked. Every decoder (the xz program, the Go
// decoder, the block-parallel one) now checks the header in the first 100
// bytes and stops; a stream longer than its header declares, or larger
// than the free space, is refused with a message that says so.
func TestXZChecksHeaderFirst(t *testing.T) {
	base, err := os.ReadFile(fixture.Get(t, "eager_graph_small").SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, 4<<20) // incompressible: the decoder must stop reading early
	r := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	longer := append(append([]byte(nil), base...), make([]byte, 1<<20)...)
	undeclared := bytes.Clone(base) // page count 0: the header declares no size
	clear(undeclared[28:32])
	decoders := []string{""}
	if _, err := exec.LookPath("xz"); err == nil {
		decoders = append(decoders, "xz")
	}
	compressedOf := map[any][]byte{}
	saved := xzCommand
	defer func() { xzCommand, freeSpace = saved, freeSpaceOS }()
	for _, c := range []struct {
		name   string
		data   []byte
		free   int64 // 0: the real free space
		want   string
		early  bool // the input must not be read whole
		blocks bool
	}{
		{name: "noise", data: noise, want: "not an SQLite database", early: true},
		{name: "noise_blocks", data: noise, want: "not an SQLite database", early: true, blocks: true},
		{name: "longer", data: longer, want: "runs past the 1589248 bytes its SQLite header declares"},
		{name: "longer_blocks", data: longer, want: "runs past the 1589248 bytes", blocks: true},
		{name: "no_room", data: base, free: 1 << 20, want: "takes 1 MB, and the temporary directory"},
		{name: "no_room_blocks", data: base, free: 1 << 20, want: "temporary directory", blocks: true},
		{name: "no_room_undeclared", data: undeclared, free: 1 << 20, want: "more than the 1 MB free in the temporary directory"},
		{name: "fits", data: base},
	} {
		var bs int64
		if c.blocks {
			bs = 1 << 18
		}
		type key struct {
			data   *byte
			blocks bool
		}
		k := key{&c.data[0], c.blocks} // each input compressed once per layout
		compressed, ok := compressedOf[k]
		if !ok {
			compressed = xzOf(t, c.data, bs)
			compressedOf[k] = compressed
		}
		for _, d := range decoders {
			if c.blocks && d != "" {
				continue // the block path is the Go decoder's
			}
			xzCommand = d
			freeSpace = freeSpaceOS
			if c.free > 0 {
				freeSpace = func(string) (int64, bool) { return c.free, true }
			}
			dir := t.TempDir()
			disk := filepath.Join(dir, "out.sqlite")
			src := &countReader{r: bytes.NewReader(compressed)}
			var in *os.File
			if c.blocks {
				p := filepath.Join(t.TempDir(), "in.sqlite.xz")
				if err := os.WriteFile(p, compressed, 0o644); err != nil {
					t.Fatal(err)
				}
				if in, err = os.Open(p); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if in != nil {
				err = decompressTo(context.Background(), in, in, disk)
				in.Close()
			} else {
				err = decompressTo(context.Background(), nil, src, disk)
			}
			what := c.name + " (decoder " + map[string]string{"": "Go", "xz": "xz"}[d] + ")"
			if c.want == "" {
				if err != nil {
					t.Errorf("%s: %v", what, err)
				}
				continue
			}
			if _, ok := asGuardError(err); !ok || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: got %v, want a refusal containing %q", what, err, c.want)
			}
			if c.early && in == nil && src.n >= int64(len(compressed)) {
				t.Errorf("%s: read %d of %d compressed bytes before refusing", what, src.n, len(compressed))
			}
			if st, err := os.Stat(disk); err == nil && st.Size() > 2<<20 {
				t.Errorf("%s: %d bytes written before refusing", what, st.Size())
			}
		}
	}
}
