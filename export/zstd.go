package export

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// zstdWindow is the window of the encoders that compress Parquet pages.
// The pages are 64 KiB, and a page no larger than the window compresses to
// the same bytes whatever the window (one single-segment frame): the
// library's 8 MiB window only made each encoder hold an 8 MiB history
// (several per row group, ~140 MB on 16 cores). Larger pages (a big
// dictionary) go to the library's encoder, so every file keeps its bytes.
const zstdWindow = 1 << 20

// smallWindowZstd is the library's zstd codec with small-window encoders
// for pages up to zstdWindow.
type smallWindowZstd struct {
	compress.Codec
	pools sync.Map // zstd.EncoderLevel → *sync.Pool of *zstd.Encoder
}

func (c *smallWindowZstd) EncodeLevel(dst, src []byte, level int) []byte {
	if len(src) > zstdWindow {
		return c.Codec.EncodeLevel(dst, src, level)
	}
	lv := zstd.EncoderLevelFromZstd(level)
	if level == compress.DefaultCompressionLevel {
		lv = zstd.SpeedDefault
	}
	p, ok := c.pools.Load(lv)
	if !ok {
		p, _ = c.pools.LoadOrStore(lv, &sync.Pool{New: func() any {
			// The library's options (parquet/compress/zstd.go), the window aside.
			enc, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(lv), zstd.WithEncoderConcurrency(1),
				zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(zstdWindow))
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
