package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// The weighted quantile index must agree exactly with
// stat.Quantile(p, stat.Empirical, sorted, w), the package's definition.
func TestQIndexMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := 1 + rng.IntN(300)
		groups := 1 + rng.IntN(40)
		vals := make([]float64, n)
		grp := make([]int32, n)
		for i := range vals {
			vals[i] = math.Round(rng.ExpFloat64()*10) / 2 // ties on purpose
			grp[i] = int32(rng.IntN(groups + 1))          // some in the never-drawn group
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmpFloat(vals[a], vals[b]) })
		sv, sg := make([]float64, n), make([]int32, n)
		for i, j := range order {
			sv[i], sg[i] = vals[j], grp[j]
		}
		q := newQIndex(sv, sg, groups)
		c := make([]int32, groups+1)
		for g := range groups {
			c[g] = int32(rng.IntN(4))
		}
		w := make([]float64, n)
		var total float64
		for i, g := range sg {
			w[i] = float64(c[g])
			total += w[i]
		}
		if total == 0 {
			continue
		}
		for _, p := range []float64{0.01, 0.1, 0.5, 0.9, 0.99, 1} {
			got := q.quantile(p, c, total)
			want := stat.Quantile(p, stat.Empirical, sv, w)
			if got != want {
				t.Fatalf("trial %d p=%v: got %v, gonum %v", trial, p, got, want)
			}
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestSelectionMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		n := 1 + rng.IntN(500)
		if trial%5 == 1 {
			n = 1 + rng.IntN(5000) // bucket selection
		}
		xs := make([]float64, n)
		for i := range xs {
			switch trial % 5 {
			case 1, 2: // skewed ns durations with spikes: most values in few buckets
				xs[i] = math.Round(1e6 * math.Exp(0.3*rng.NormFloat64()))
				if rng.IntN(200) == 0 {
					xs[i] *= 1000
				}
			default:
				xs[i] = float64(rng.IntN(1 + n/3)) // many ties
			}
		}
		if trial%3 == 0 {
			slices.Sort(xs) // sorted and V-shaped inputs broke naive pivots
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		k := rng.IntN(n)
		if got := selectKth(slices.Clone(xs), k); got != sorted[k] {
			t.Fatalf("selectKth(%d) = %v, want %v", k, got, sorted[k])
		}
		j := 1 + rng.IntN((n+1)/2)
		lo, hi := extremeRanks(slices.Clone(xs), j)
		if lo != sorted[j-1] || hi != sorted[n-j] {
			t.Fatalf("extremeRanks(%d) = %v, %v, want %v, %v", j, lo, hi, sorted[j-1], sorted[n-j])
		}
		q, tail := selectSummary(slices.Clone(xs))
		want := [3]float64{Quantile(0.5, sorted), Quantile(0.9, sorted), Quantile(0.99, sorted)}
		if q != want || tail != tailSteps(sorted) {
			t.Fatalf("selectSummary = %v, %d; want %v, %d", q, tail, want, tailSteps(sorted))
		}
	}
}

func TestSummarizeAndQuantileKinds(t *testing.T) {
	s := Summarize([]float64{4, math.NaN(), 1, 3, 2})
	if s.N != 4 || s.Mean != 2.5 || s.Median != 2 || s.Min != 1 || s.Max != 4 || s.P90 != 4 {
		t.Fatalf("Summarize = %+v", s)
	}
	if math.Abs(s.Std-math.Sqrt(5.0/3)) > 1e-15 {
		t.Fatalf("Std = %v", s.Std)
	}
	if (Summarize(nil) != Summary{}) {
		t.Fatal("empty summary not zero")
	}
	// Empirical is the lower median; numpy's type 7 interpolates.
	xs := []float64{1, 2, 3, 4}
	if Quantile(0.5, xs) != 2 || QuantileType7(0.5, xs) != 2.5 || QuantileType7(0.9, xs) != 3.7 {
		t.Fatalf("quantiles: %v %v %v", Quantile(0.5, xs), QuantileType7(0.5, xs), QuantileType7(0.9, xs))
	}
}

func TestExpandedPercentile(t *testing.T) {
	// §3.3: n = 8 gives α′ ≈ 0.0115 and j = 57 at B = 9999.
	a := expandedAlpha(8, 0.95)
	if math.Abs(a-0.0115) > 0.0005 {
		t.Fatalf("α′(8) = %v", a)
	}
	if j := percentileRank(9999, a); j != 57 {
		t.Fatalf("j = %d, want 57", j)
	}
	// Large n tends to the plain percentile: j → 250.
	if j := percentileRank(9999, expandedAlpha(100000, 0.95)); j != 249 && j != 250 {
		t.Fatalf("j(large n) = %d", j)
	}
	// j < 10 raises B.
	a99 := expandedAlpha(8, 0.99)
	b := minResamplesFor(9999, a99)
	if b <= 9999 || percentileRank(b, a99) < 10 || percentileRank(b-1, a99) >= 10 {
		t.Fatalf("raised B = %d (j %d)", b, percentileRank(b, a99))
	}
	if minResamplesFor(9999, a) != 9999 {
		t.Fatal("B raised without need")
	}
}

func TestJackknifeT(t *testing.T) {
	// Delete-one means of 1..5 give the usual t interval of the mean.
	xs := []float64{1, 2, 3, 4, 5}
	del := make([]float64, len(xs))
	for k := range xs {
		var s float64
		for i, v := range xs {
			if i != k {
				s += v
			}
		}
		del[k] = s / 4
	}
	lo, hi, se, ok := jackknifeT(3, del, 0.95)
	wantSE := math.Sqrt(2.5 / 5)
	if !ok || math.Abs(se-wantSE) > 1e-12 || math.Abs((hi-lo)/2-2.7764451051977987*wantSE) > 1e-9 {
		t.Fatalf("jackknifeT = %v %v %v", lo, hi, se)
	}
}

func TestTauAndBatches(t *testing.T) {
	// AR(1) with φ = 0.8 has τ = (1+φ)/(1−φ) = 9.
	rng := rand.New(rand.NewPCG(9, 9))
	x := make([]float64, 200000)
	for i := 1; i < len(x); i++ {
		x[i] = 0.8*x[i-1] + rng.NormFloat64()
	}
	if tau := integratedTau([][]float64{x}); math.Abs(tau-9) > 1 {
		t.Fatalf("τ̂ = %v, want ≈ 9", tau)
	}
	if r := rho1([][]float64{x}); math.Abs(r-0.8) > 0.01 {
		t.Fatalf("ρ̂₁ = %v", r)
	}
}

// invalidDuration finds the first negative or infinite step wherever it
// lies, and passes NaN (absent) and −0.
func TestInvalidDuration(t *testing.T) {
	for n := range 11 {
		for at := range n {
			for _, bad := range []float64{-1, math.Inf(1), math.Inf(-1)} {
				s := make([]float64, n)
				for k := range s {
					s[k] = float64(k)
					if k%3 == 1 {
						s[k] = math.NaN()
					}
				}
				s[0] = math.Copysign(0, -1)
				s[at] = bad
				if got := invalidDuration(s); got != at {
					t.Fatalf("n=%d bad %v at %d: got %d", n, bad, at, got)
				}
				s[at] = 1
				if got := invalidDuration(s); got != -1 {
					t.Fatalf("n=%d valid: got %d", n, got)
				}
			}
		}
	}
}
