package export

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// zstdWindows are the windows of the encoders that compress Parquet pages,
// smallest first: a page goes to the smallest that holds it. The pages are
// 64 KiB, and a page no larger than the window compresses to the same
// bytes whatever the window (one single-segment frame): the library's 8
// MiB window only made each encoder hold an 8 MiB history (several per row
// group, ~140 MB on 16 cores). At 128 KiB, with the library's low-memory
// option, an encoder holds a 256 KiB history instead of 2 MiB at 1 MiB:
// ~25 MB less live heap while the tables are encoded on 16 cores (up to 8
// encoders a table, several tables at once), which memtune's soft limit
// needs. Pages up to 1 MiB (a dictionary) keep a 1 MiB encoder; larger
// ones go to the library's, so every file keeps its bytes.
var zstdWindows = [...]struct {
	size   int
	lowMem bool
}{{128 << 10, true}, {1 << 20, false}}

// smallWindowZstd is the library's zstd codec with small-window encoders
// for pages up to the largest of zstdWindows.
type smallWindowZstd struct {
	compress.Codec
	pools sync.Map // zstdPoolKey → *sync.Pool of *zstd.Encoder
}

// zstdPoolKey names a pool of encoders: a level and an index in zstdWindows.
type zstdPoolKey struct {
	level  zstd.EncoderLevel
	window int
}

func (c *smallWindowZstd) EncodeLevel(dst, src []byte, level int) []byte {
	w := 0
	for w < len(zstdWindows) && len(src) > zstdWindows[w].size {
		w++
	}
	if w == len(zstdWindows) {
		return c.Codec.EncodeLevel(dst, src, level)
	}
	lv := zstd.EncoderLevelFromZstd(level)
	if level == compress.DefaultCompressionLevel {
		lv = zstd.SpeedDefault
	}
	key := zstdPoolKey{lv, w}
	p, ok := c.pools.Load(key)
	if !ok {
		p, _ = c.pools.LoadOrStore(key, &sync.Pool{New: func() any {
			// The library's options (parquet/compress/zstd.go), the window aside.
			enc, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(lv), zstd.WithEncoderConcurrency(1),
				zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(zstdWindows[w].size),
				zstd.WithLowerEncoderMem(zstdWindows[w].lowMem))
			if err != nil {
				panic(err) // constant options
			}
			return enc
		}})
	}
	pool := p.(*sync.Pool)
	enc := pool.Get().(*zstd.Encoder)
	defer pool.Put(enc)
	return enc.EncodeAll(src, dst[:0])
}

func init() {
	lib, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic(err)
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &smallWindowZstd{Codec: lib})
}
