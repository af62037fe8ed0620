package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The fast CI paths (sampled selection, class weights, log ratios from
// quotients) must return exactly what the heap pass returns on the row
// replicates, bits included, for every kind of replicate set.
func TestFastIntervalsMatchHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	negZero := math.Copysign(0, -1)
	gens := []func() float64{
		func() float64 { return rng.NormFloat64() },
		func() float64 { return math.Exp(rng.NormFloat64()) },
		func() float64 { return float64(rng.IntN(4)) },                                          // few values, ties
		func() float64 { return []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 5}[rng.IntN(10)] },         // mostly one value
		func() float64 { return []float64{0, negZero, 1, 2}[rng.IntN(4)] },                      // both zeros
		func() float64 { return []float64{0, 1, math.Inf(1), math.NaN(), 3}[rng.IntN(5)] },      // specials
		func() float64 { return math.Float64frombits(rng.Uint64()>>2 | 1) },                     // any magnitude
		func() float64 { return []float64{math.NaN(), rng.ExpFloat64()}[min(rng.IntN(20), 1)] }, // 5 % NaN
	}
	for trial := range 600 {
		gen := gens[trial%len(gens)]
		b := []int{1999, 2500, 9999}[rng.IntN(3)]
		alpha := expandedAlpha([]int{8, 10, 20}[rng.IntN(3)], 0.95)
		// Class values and a row → class map; with one class per row the
		// values are the replicates themselves.
		nc := b
		if trial%2 == 0 {
			nc = 50 + rng.IntN(b/2)
		}
		cl := &rowClasses{class: make([]int32, b), weight: make([]int32, nc)}
		for r := range b {
			k := int32(r)
			if nc < b {
				k = int32(rng.IntN(nc))
				if r < nc {
					k = int32(r) // every class has a row
				}
			}
			cl.class[r] = k
			cl.weight[k]++
		}
		va, vb := make([]float64, nc), make([]float64, nc)
		for k := range nc {
			va[k], vb[k] = gen(), gen()
		}
		if trial%3 == 0 { // differences near zero and ratios near one
			for k := range nc {
				vb[k] = va[k] * (1 + 1e-12*float64(rng.IntN(3)-1))
			}
		}
		check := func(name string, got, want [4]float64) {
			t.Helper()
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("trial %d %s: got %v, heap pass %v", trial, name, got, want)
				}
			}
		}
		heap := func(rows []float64) [4]float64 {
			lo, hi, und, ok := heapInterval(slices.Clone(rows), alpha)
			return [4]float64{lo, hi, float64(und), b2f(ok)}
		}
		rows := cl.rows(va)
		lo, hi, und, ok := percentileInterval(slices.Clone(rows), alpha)
		check("rows", [4]float64{lo, hi, float64(und), b2f(ok)}, heap(rows))
		lo, hi, und, ok = classInterval(slices.Clone(va), cl, alpha)
		check("classes", [4]float64{lo, hi, float64(und), b2f(ok)}, heap(rows))

		logs := make([]float64, b)
		for r, k := range cl.class {
			logs[r] = math.Log(vb[k]) - math.Log(va[k])
		}
		lo, hi, und, ok = classLogRatioInterval(slices.Clone(va), slices.Clone(vb), cl, alpha)
		check("log ratio", [4]float64{lo, hi, float64(und), b2f(ok)}, heap(logs))
		rb := cl.rows(vb)
		lo, hi, und, ok = classLogRatioInterval(slices.Clone(rows), rb, nil, alpha)
		check("log ratio rows", [4]float64{lo, hi, float64(und), b2f(ok)}, heap(logs))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
