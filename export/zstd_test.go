package export

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// TestZstdSameBytesAsLibrary: the small-window encoders write the bytes the
// library's own encoder writes, for pages on either side of the window and
// of the 64 KiB block, at the level the writer uses and the default: the
// window is a matter of memory, never of the files' bytes.
func TestZstdSameBytesAsLibrary(t *testing.T) {
	lib, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	ours, ok := lib.(*smallWindowZstd)
	if !ok {
		t.Fatalf("registered zstd codec is %T, want *smallWindowZstd", lib)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// Page-like contents: timestamps that grow (an int64 column), small
	// codes with runs, repeated names, and noise that does not compress. A
	// list, not a map: the inputs draw on one generator, so a fixed order
	// keeps them the same from run to run.
	gens := []struct {
		name string
		gen  func(n int) []byte
	}{
		{"int64 ascending", func(n int) []byte {
			b := make([]byte, 0, n+8)
			v := int64(1_700_000_000_000)
			for len(b) < n {
				v += int64(rng.IntN(5000))
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			}
			return b[:n]
		}},
		{"codes", func(n int) []byte {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(i / (1 + rng.IntN(40)) % 7)
			}
			return b
		}},
		{"names", func(n int) []byte {
			names := []string{"policy_action", "physics_step", "observation", "reward", "reset"}
			var sb strings.Builder
			for sb.Len() < n {
				sb.WriteString(names[rng.IntN(len(names))])
			}
			return []byte(sb.String()[:n])
		}},
		{"noise", func(n int) []byte {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			return b
		}},
	}
	sizes := []int{0, 7, 1000, 1025, 40 << 10, 64 << 10, 64<<10 + 1, 70_000, 128 << 10, 128<<10 + 1, 300 << 10, 1 << 20, 1<<20 + 1, 1536 << 10}
	for _, g := range gens {
		name := g.name
		for _, n := range sizes {
			src := g.gen(n)
			for _, level := range []int{1, compress.DefaultCompressionLevel} {
				got := ours.EncodeLevel(nil, src, level)
				want := ours.Codec.EncodeLevel(nil, src, level)
				if !bytes.Equal(got, want) {
					t.Errorf("%s, %d bytes, level %d: %d compressed bytes differ from the library's %d", name, n, level, len(got), len(want))
				}
				// A reused encoder and a dst with room write the same.
				again := ours.EncodeLevel(make([]byte, 3, 1<<20), src, level)
				if !bytes.Equal(again, want) {
					t.Errorf("%s, %d bytes, level %d, second call: bytes differ", name, n, level)
				}
			}
		}
	}
}
