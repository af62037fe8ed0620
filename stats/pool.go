package stats

import (
	"math/bits"
	"sync"
)

// Buffer pools: replicate arrays recycled by capacity class.

// slicePool recycles buffers: an Analyze call fills hundreds of replicate
// arrays (B floats each), and reusing them keeps the collector out of the
// hot loop. Buffers are pooled by capacity class (powers of two), so that
// requests of different sizes (B rows, distinct rows, trie nodes) do not
// evict each other. Contents of a recycled buffer are arbitrary.
type slicePool[T any] struct{ classes [64]sync.Pool }

func (p *slicePool[T]) get(n int) []T {
	c := bits.Len(uint(max(n, 1) - 1)) // smallest class with 1<<c ≥ n
	if b, ok := p.classes[c].Get().(*[]T); ok {
		return (*b)[:n]
	}
	return make([]T, n, 1<<c)
}

func (p *slicePool[T]) put(b []T) {
	c := bits.Len(uint(cap(b))) - 1 // largest class with 1<<c ≤ cap
	if c < 0 {
		return
	}
	b = b[:1<<c]
	p.classes[c].Put(&b)
}

var (
	floatPool slicePool[float64]
	indexPool slicePool[int32]
)

func getBuf(n int) []float64 { return floatPool.get(n) }

func putBuf(b []float64) { floatPool.put(b) }
