package stats

import (
	"math"
)

// The quantile index: each group's steps sorted once, so that a resampled
// quantile is a weighted walk, not a sort of every resample.

// qIndex answers weighted Empirical quantiles of one arm's pooled steps under
// many count vectors without re-sorting (docs/statistics.md §3.2): the values are sorted once,
// and checkpoints every stride values hold how many values of each group lie
// below, so the cumulative weight at a checkpoint is a dot product with the
// count vector. A binary search over checkpoints and a walk of at most
// stride values find the quantile. The result is exactly
// stat.Quantile(p, stat.Empirical, vals, w) with w_i = c[grp[i]].
type qIndex struct {
	vals   []float64 // present values, ascending
	grp    []int32   // group of each value; cols-1 is the never-drawn group
	cols   int       // groups + 1
	stride int
	ckpt   []int32 // ckpt[j*cols+g]: values of group g among vals[:j*stride]
}

func newQIndex(vals []float64, grp []int32, groups int) *qIndex {
	cols := groups + 1
	stride := max(16, cols)
	nck := (len(vals)-1)/stride + 1
	q := &qIndex{vals: vals, grp: grp, cols: cols, stride: stride, ckpt: make([]int32, nck*cols)}
	run := make([]int32, cols)
	for i, g := range grp {
		if i%stride == 0 {
			copy(q.ckpt[(i/stride)*cols:], run)
		}
		run[g]++
	}
	return q
}

func (q *qIndex) prefix(j int, c []int32) int64 {
	// The last column is the never-drawn group, whose count is 0. Two
	// accumulators halve the dependency chain (integer sums: any order
	// gives the same value).
	row := q.ckpt[j*q.cols : (j+1)*q.cols-1]
	c = c[:len(row)] // one bounds check instead of one per group
	var s0, s1 int64
	g := 0
	for ; g+1 < len(row); g += 2 {
		s0 += int64(row[g]) * int64(c[g])
		s1 += int64(row[g+1]) * int64(c[g+1])
	}
	if g < len(row) {
		s0 += int64(row[g]) * int64(c[g])
	}
	return s0 + s1
}

// quantile returns the p-quantile (0 < p ≤ 1) under counts c (len cols, the
// last 0) whose total weight is w > 0.
//
// The cumulative weights are integers, exact in float64 as gonum adds them,
// so "cumulative weight ≥ p·w" is "cumulative weight ≥ ⌈p·w⌉" and the search
// runs on integers: a branch-free binary search over the checkpoints, then
// a walk that adds counts in an integer chain.
func (q *qIndex) quantile(p float64, c []int32, w float64) float64 {
	fidx := p * w // the same float expression as gonum's empiricalQuantile
	if !(fidx > 0 && fidx < 1<<52) {
		return q.quantileFloat(fidx, c)
	}
	t := int64(math.Ceil(fidx))
	// The last checkpoint whose prefix is below t (prefix(0) = 0 is).
	cols := q.cols
	cg := c[:cols-1] // the last column, the never-drawn group, counts 0
	lo, size := 0, len(q.ckpt)/cols
	for size > 1 {
		half := size / 2
		// prefix(lo+half), inlined; the step taken by a mask, not a
		// branch (which would mispredict half the time).
		row := q.ckpt[(lo+half)*cols : (lo+half)*cols+len(cg)]
		var s0, s1 int64
		g := 0
		for ; g+1 < len(row); g += 2 {
			s0 += int64(row[g]) * int64(cg[g])
			s1 += int64(row[g+1]) * int64(cg[g+1])
		}
		if g < len(row) {
			s0 += int64(row[g]) * int64(cg[g])
		}
		lo += half & int((s0+s1-t)>>63)
		size -= half
	}
	var cum int64 // prefix(0) is always 0: skip its dot product (all of it when groups ≥ stride)
	if lo > 0 {
		cum = q.prefix(lo, c)
	}
	grp := q.grp[lo*q.stride:]
	for i, g := range grp {
		cum += int64(c[g])
		if cum >= t {
			return q.vals[lo*q.stride+i]
		}
	}
	return q.vals[len(q.vals)-1] // unreachable while w matches c
}

// quantileFloat is quantile by float comparisons, for a p·w outside the
// range where integer counts stand in for it.
func (q *qIndex) quantileFloat(fidx float64, c []int32) float64 {
	lo, hi := 0, len(q.ckpt)/q.cols-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if float64(q.prefix(mid, c)) < fidx {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	cum := float64(q.prefix(lo, c))
	for i := lo * q.stride; i < len(q.vals); i++ {
		cum += float64(c[q.grp[i]])
		if cum >= fidx {
			return q.vals[i]
		}
	}
	return q.vals[len(q.vals)-1]
}
