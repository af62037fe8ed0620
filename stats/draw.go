package stats

import (
	"math/bits"
)

// The bootstrap's draws: the count vectors of a plan's resamples from its
// seeded PCG stream (docs/statistics.md §3).

// draw fills the count vectors from the stream (seed, key). Sides draw in
// order of arm name, so swapping baseline and arm draws the same vectors.
func (pl *plan) draw(seed uint64, key string, b int, confidence float64) {
	pl.stream = streamSeed2(key)
	pl.alphaP = expandedAlpha(pl.n, confidence)
	pl.b = minResamplesFor(b, pl.alphaP)
	rng := pcg{hi: seed, lo: pl.stream}
	drawSide := func(g int) []int32 {
		c := getIndexBuf(pl.b * (g + 1)) // back to the pool in release; fill sets every count
		rng.fill(c, pl.b, g)
		return c
	}
	pl.counts = make([][]int32, len(pl.sides))
	if pl.paired {
		c := drawSide(pl.sides[0].groups)
		for i := range pl.sides {
			pl.counts[i] = c
		}
		return
	}
	order := []int{0}
	if len(pl.sides) == 2 {
		order = []int{0, 1}
		if pl.sides[1].arm.name < pl.sides[0].arm.name {
			order = []int{1, 0}
		}
	}
	for _, i := range order {
		pl.counts[i] = drawSide(pl.sides[i].groups)
	}
}

// pcg is rand.NewPCG(hi, lo) (math/rand/v2's 128-bit LCG with the DXSM
// output) with its state held in locals while it fills count rows: drawing
// is most of a plan's setup, and the library's generator keeps its state
// in memory, on the LCG's dependency chain. TestPCGFillMatchesRand checks
// it draw for draw.
type pcg struct{ hi, lo uint64 }

// fill draws rows count rows of g unit indices each into counts (a unit
// index is the high word of the 128-bit product output × g: a specified
// mapping that does not depend on rand.IntN's algorithm), g+1 columns per
// row, the last (the never-drawn group) 0. counts need not be zero
// beforehand.
func (p *pcg) fill(counts []int32, rows, g int) {
	const (
		mulHi    = 2549297995355413924
		mulLo    = 4865540595714422341
		incHi    = 6364136223846793005
		incLo    = 1442695040888963407
		cheapMul = 0xda942042e4dd58b5
	)
	hi, lo := p.hi, p.lo
	n := uint64(g)
	cols := g + 1
	next := func() uint64 {
		// state = state·mul + inc, then DXSM, as rand.PCG.Uint64.
		h, l := bits.Mul64(lo, mulLo)
		h += hi*mulLo + lo*mulHi
		l, c := bits.Add64(l, incLo, 0)
		h, _ = bits.Add64(h, incHi, c)
		hi, lo = h, l
		h ^= h >> 32
		h *= cheapMul
		h ^= h >> 48
		h *= l | 1
		idx, _ := bits.Mul64(h, n)
		return idx
	}
	if g <= 15 {
		// A row's counts are at most g ≤ 15: count them in 4-bit fields
		// of one register instead of incrementing memory.
		for r := range rows {
			var acc uint64
			for range g {
				acc += 1 << (4 * next())
			}
			row := counts[r*cols : r*cols+cols]
			for k := range row[:g] {
				row[k] = int32(acc >> (4 * k) & 15)
			}
			row[g] = 0
		}
	} else {
		for r := range rows {
			row := counts[r*cols : (r+1)*cols]
			clear(row)
			for range g {
				row[next()]++
			}
		}
	}
	p.hi, p.lo = hi, lo
}
