package stats

import (
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// streamSeed2 is FNV-1a-64 of a task key: one PCG stream per task (§3.5).
func streamSeed2(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}

// drawIndex maps one PCG output onto [0, n) as the high word of the 128-bit
// product: a specified mapping that does not depend on rand.IntN's algorithm.
func drawIndex(src *rand.PCG, n int) int {
	hi, _ := bits.Mul64(src.Uint64(), uint64(n))
	return int(hi)
}

// expandedAlpha is α′ of the expanded percentile interval (Hesterberg 2015):
// z_{1−α′/2} = √(n/(n−1))·t_{n−1,1−α/2}.
func expandedAlpha(n int, confidence float64) float64 {
	alpha := 1 - confidence
	if n < 2 {
		return alpha
	}
	t := studentT(float64(n-1), 1-alpha/2)
	z := math.Sqrt(float64(n)/float64(n-1)) * t
	return 2 * (1 - distuv.UnitNormal.CDF(z))
}

// percentileRank is j = max(1, ⌊(B+1)·α′/2⌋); the interval is [θ*_(j), θ*_(B+1−j)].
func percentileRank(b int, alphaPrime float64) int {
	j := int(math.Floor(float64(b+1) * alphaPrime / 2))
	return max(j, 1)
}

// minResamplesFor is the smallest B ≥ b whose rank j is at least 10 (§3.3:
// fewer than 10 replicates beyond an endpoint make it too noisy).
func minResamplesFor(b int, alphaPrime float64) int {
	for percentileRank(b, alphaPrime) < 10 {
		need := int(math.Ceil(20/alphaPrime)) - 1
		if need <= b {
			need = b + 1
		}
		b = need
	}
	return b
}

// percentileInterval returns the expanded-percentile endpoints of the
// non-NaN replicates in reps (compacted in place) and how many were NaN.
// ok is false when fewer than two replicates remain.
func percentileInterval(reps []float64, alphaPrime float64) (lo, hi float64, undefined int, ok bool) {
	k := 0
	for _, v := range reps {
		if !math.IsNaN(v) {
			reps[k] = v
			k++
		}
	}
	undefined = len(reps) - k
	reps = reps[:k]
	if k < 2 {
		return 0, 0, undefined, false
	}
	j := min(percentileRank(k, alphaPrime), k/2)
	lo, hi = extremeRanks(reps, j)
	return lo, hi, undefined, true
}

// extremeRanks returns the j-th smallest and the j-th largest (1-based) of
// xs in one pass, keeping the j smallest in a max-heap and the j largest in
// a min-heap. The ranks are near the ends (j ≈ 50–250 of 10⁴), so few values
// enter a heap after the first j and the pass is about 2n comparisons; the
// result is an order statistic, so it does not depend on xs's order.
func extremeRanks(xs []float64, j int) (lo, hi float64) {
	small := make([]float64, 0, j) // max-heap: small[0] is the largest of the j smallest
	large := make([]float64, 0, j) // min-heap: large[0] is the smallest of the j largest
	for _, v := range xs {
		if len(small) < j {
			small = append(small, v)
			siftUp(small, len(small)-1, greater)
			large = append(large, v)
			siftUp(large, len(large)-1, less)
			continue
		}
		if v < small[0] {
			small[0] = v
			siftDown(small, greater)
		}
		if v > large[0] {
			large[0] = v
			siftDown(large, less)
		}
	}
	return small[0], large[0]
}

func less(a, b float64) bool    { return a < b }
func greater(a, b float64) bool { return a > b }

// siftUp and siftDown keep h a heap whose root is first under before.
func siftUp(h []float64, i int, before func(a, b float64) bool) {
	for i > 0 {
		p := (i - 1) / 2
		if !before(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDown(h []float64, before func(a, b float64) bool) {
	i, n := 0, len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && before(h[c+1], h[c]) {
			c++
		}
		if !before(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// tQuantiles caches t_{ν, p}: the jackknife and trend CIs ask for the same
// few degrees of freedom many times.
var tQuantiles sync.Map // [2]float64{ν, p} → float64

func studentT(nu, p float64) float64 {
	key := [2]float64{nu, p}
	if v, ok := tQuantiles.Load(key); ok {
		return v.(float64)
	}
	v := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(p)
	tQuantiles.Store(key, v)
	return v
}

// jackknifeSE is se_J = √((n−1)/n · Σ(θ̂_(−k) − θ̄)²) over the delete-one
// values. ok is false with fewer than two or a non-finite one.
func jackknifeSE(deleted []float64) (se float64, ok bool) {
	n := len(deleted)
	if n < 2 {
		return 0, false
	}
	var mean float64
	for _, v := range deleted {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false
		}
		mean += v
	}
	mean /= float64(n)
	var ss float64
	for _, v := range deleted {
		d := v - mean
		ss += d * d
	}
	return math.Sqrt(float64(n-1) / float64(n) * ss), true
}

// jackknifeT is the cluster jackknife-t interval θ̂ ± t_{n−1,1−α/2}·se_J,
// computed on whatever scale the caller passes (log for ratios and arm
// values).
func jackknifeT(theta float64, deleted []float64, confidence float64) (lo, hi, se float64, ok bool) {
	se, ok = jackknifeSE(deleted)
	if !ok || math.IsNaN(theta) || math.IsInf(theta, 0) {
		return 0, 0, 0, false
	}
	ci := tInterval(theta, se, len(deleted), confidence)
	return ci[0], ci[1], se, true
}
