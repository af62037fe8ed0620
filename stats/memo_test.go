package stats

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// referenceMean is the per-row two-accumulator mean replicate that the sum
// memo must reproduce bit for bit: even groups in one chain, odd groups in
// the other, in group order.
func referenceMean(row []int32, sums, cnts, den []float64, r int) float64 {
	var s0, s1, n0, n1 float64
	g := 0
	for ; g+1 < len(sums); g += 2 {
		s0 += float64(row[g]) * sums[g]
		s1 += float64(row[g+1]) * sums[g+1]
		n0 += float64(row[g]) * cnts[g]
		n1 += float64(row[g+1]) * cnts[g+1]
	}
	if g < len(sums) {
		s0 += float64(row[g]) * sums[g]
		n0 += float64(row[g]) * cnts[g]
	}
	if den != nil {
		return (s0 + s1) / den[r]
	}
	return (s0 + s1) / (n0 + n1)
}

// Mean replicates, shared denominators and one-chain side means from the
// memo (complete tries, truncated tries, no trie at all) equal the plain
// per-row loops bit for bit.
func TestSumMemoMatchesRowLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, groups := range []int{5, 8, 9, 16, 24, 60, 300} {
		t.Run(fmt.Sprint(groups), func(t *testing.T) {
			units := make([]Unit, groups)
			for i := range units {
				steps := 1 + rng.IntN(40)
				s := [][]float64{make([]float64, steps), make([]float64, steps)}
				for k := range steps {
					s[0][k] = math.Exp(3 * rng.NormFloat64()) // not integers: rounding matters
					s[1][k] = s[0][k]
					if rng.IntN(3) == 0 {
						s[1][k] = math.NaN() // metric 1 is not present in every step
					}
				}
				units[i] = Unit{ID: fmt.Sprintf("u%03d", i), Arm: "A", Profile: "p", Start: int64(i), Steps: s}
			}
			ptrs := make([]*Unit, len(units))
			for i := range units {
				ptrs[i] = &units[i]
			}
			primary := []bool{true, false}
			pl := buildArmPlan(newArmData("A", ptrs, 2, primary, tuning{}), primary)
			pl.draw(3, "memo", 1999, 0.95)
			s := pl.sides[0]
			den := make([]float64, pl.b)
			for r := range den { // the shared denominators: Σ_even c·steps + Σ_odd c·steps
				var n0, n1 float64
				row := pl.row(0, r)
				g := 0
				for ; g+1 < groups; g += 2 {
					n0 += float64(row[g]) * s.steps[g]
					n1 += float64(row[g+1]) * s.steps[g+1]
				}
				if g < groups {
					n0 += float64(row[g]) * s.steps[g]
				}
				den[r] = n0 + n1
			}
			got := pl.denominators(0)
			for r := range den {
				if math.Float64bits(got[r]) != math.Float64bits(den[r]) {
					t.Fatalf("denominator %d: %v, want %v", r, got[r], den[r])
				}
			}
			for m := range 2 {
				var d []float64
				if s.full[m] {
					d = den
				}
				reps := pl.meanReplicates(0, m)
				vals := pl.meanValues(0, m)
				sides := pl.sideMeanValues(0, m)
				cl := pl.classes()
				for r := range pl.b {
					want := referenceMean(pl.row(0, r), s.sum[m][:groups], s.cnt[m][:groups], d, r)
					k := r
					if cl != nil {
						k = int(cl.class[r])
					}
					if math.Float64bits(reps[r]) != math.Float64bits(want) || math.Float64bits(vals[k]) != math.Float64bits(want) {
						t.Fatalf("metric %d resample %d: replicate %v, value %v, want %v", m, r, reps[r], vals[k], want)
					}
					if w := s.mean(m, pl.row(0, r)); math.Float64bits(sides[k]) != math.Float64bits(w) {
						t.Fatalf("metric %d resample %d: side mean %v, want %v", m, r, sides[k], w)
					}
				}
				putBuf(reps)
				putBuf(vals)
				putBuf(sides)
			}
		})
	}
}

// The plan's inlined generator draws exactly what rand.PCG draws, mapped
// to unit indices as the high word of output × g, with and without the
// packed 4-bit counters (g ≤ 15), across calls that continue one stream.
func TestPCGFillMatchesRand(t *testing.T) {
	for _, g := range []int{1, 2, 7, 8, 15, 16, 41} {
		for _, seed := range []uint64{1, 7, 1 << 63} {
			ref := rand.NewPCG(seed, 0x9e3779b97f4a7c15)
			fast := pcg{hi: seed, lo: 0x9e3779b97f4a7c15}
			for range 2 { // the second call continues the stream
				const rows = 300
				want := make([]int32, rows*(g+1))
				for r := range rows {
					for range g {
						hi, _ := bits.Mul64(ref.Uint64(), uint64(g))
						want[r*(g+1)+int(hi)]++
					}
				}
				got := make([]int32, rows*(g+1))
				for k := range got {
					got[k] = -7 // fill must set every count
				}
				fast.fill(got, rows, g)
				if !slices.Equal(got, want) {
					t.Fatalf("g=%d seed=%d: counts differ from rand.PCG's draws", g, seed)
				}
			}
		}
	}
}
