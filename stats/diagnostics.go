package stats

import (
	"math"
	"math/bits"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// tailZ is hyperfine's modified z-score threshold for outliers.
const tailZ = 10

// tailSteps counts steps with modified z-score (x − med)/(1.4826·MAD) > 10
// in the ascending sample. With MAD = 0 every step above the median counts
// (its z is infinite): a mostly-zero metric with a few large steps is exactly
// the tail-limited case.
func tailSteps(sorted []float64) int {
	if len(sorted) == 0 {
		return 0
	}
	med := Quantile(0.5, sorted)
	mad := sortedMAD(sorted, med)
	n := 0
	for i := len(sorted) - 1; i >= 0 && isTail(sorted[i], med, mad); i-- {
		n++
	}
	return n
}

// isTail is the tail predicate shared by the sorted and the selection path.
func isTail(x, med, mad float64) bool {
	d := x - med
	return d > 0 && (mad == 0 || d/(1.4826*mad) > tailZ)
}

// selectSummary returns the Empirical median, p90 and p99 of xs and its
// tail-step count, reordering xs.
func selectSummary(xs []float64) (q [3]float64, tail int) {
	var dev []float64
	return selectSummaryInto(xs, &dev)
}

// selectSummaryInto is selectSummary with *dev reused (grown when short)
// for the absolute deviations, so that one arm's metrics share it.
func selectSummaryInto(xs []float64, dev *[]float64) (q [3]float64, tail int) {
	n := len(xs)
	r99, r90, r50 := empiricalRank(0.99, n), empiricalRank(0.9, n), empiricalRank(0.5, n)
	if cap(*dev) < 2*n {
		*dev = make([]float64, 2*n)
	}
	d, scratch := (*dev)[:n], (*dev)[n:2*n]
	lo, hi := xs[0], xs[0]
	var or uint64 // the sign bit of any value (a −0, or a negative value)
	for _, v := range xs {
		or |= math.Float64bits(v)
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	if or>>63 == 0 && lo == hi {
		// One value (a metric that is always 0, say): it is every
		// quantile, the MAD is 0 and no step lies above the median.
		return [3]float64{lo, lo, lo}, 0
	}
	if or>>63 != 0 {
		// Each selection leaves everything left of its rank no larger, so
		// the next (lower) rank is searched in the left part only.
		q[2] = selectKth(xs, r99)
		q[1] = selectKth(xs[:r99+1], r90)
		q[0] = selectKth(xs[:r90+1], r50)
	} else {
		// Without a −0 equal values have equal bits, so any method returns
		// the same order statistics: bucket selection.
		r := [3]int{r50, r90, r99}
		bucketSelect(xs, lo, hi, r[:], q[:], scratch)
	}
	med := q[0]
	dmax := 0.0
	for i, v := range xs {
		x := math.Abs(v - med)
		d[i] = x
		if x > dmax {
			dmax = x
		}
	}
	// The deviations carry no sign bit (Abs): bucket selection again.
	var mad [1]float64
	bucketSelect(d, 0, dmax, []int{lowerMedianRank(n)}, mad[:], scratch)
	for _, v := range xs {
		if isTail(v, med, mad[0]) {
			tail++
		}
	}
	return q, tail
}

// selectBuckets is the grid of bucketSelect: about 8 values per bucket for
// the usual arm of 2,000–4,000 steps.
const selectBuckets = 512

// bucketSelect sets out[i] to the ranks[i]-th smallest (0-based) of xs,
// whose values lie in [lo, hi] and carry no sign bit and no NaN (equal
// values then have equal bits, so the result is the order statistic any
// method finds). One pass counts the values per bucket of an even grid
// over [lo, hi]; (v−lo)·scale is monotone in v, so each bucket holds
// consecutive ranks. A second pass gathers the values of the buckets that
// hold the ranks (a few dozen), and a selection among them finds each rank.
// Both passes are branch-light, where a quickselect over all values spends
// its time on unpredictable branches. scratch (len ≥ len(xs), or nil) holds
// the gathered values; xs is left as it is.
func bucketSelect(xs []float64, lo, hi float64, ranks []int, out []float64, scratch []float64) {
	bucketSelectDepth(xs, lo, hi, ranks, out, scratch, 0)
}

// bucketSelectDepth is bucketSelect at recursion depth depth: a bucket
// that gathers many values (skewed data: a few outliers stretch the grid,
// and the bulk falls into few buckets) is selected from by another grid
// over its own range.
func bucketSelectDepth(xs []float64, lo, hi float64, ranks []int, out []float64, scratch []float64, depth int) {
	n := len(xs)
	scale := selectBuckets / (hi - lo)
	if n < 4*selectBuckets/8 || !(hi > lo) || math.IsInf(scale, 0) || math.IsInf(hi-lo, 0) {
		if !(hi > lo) && n > 0 { // every value is lo
			for i := range ranks {
				out[i] = xs[0]
			}
			return
		}
		for i, r := range ranks {
			out[i] = selectKth(xs, r) // selectKth keeps xs a permutation
		}
		return
	}
	// Four histograms, merged after: runs of values in one bucket would
	// otherwise wait on each other's increments.
	var counts [4][selectBuckets]int32
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		counts[0][min(int((xs[i]-lo)*scale), selectBuckets-1)]++
		counts[1][min(int((xs[i+1]-lo)*scale), selectBuckets-1)]++
		counts[2][min(int((xs[i+2]-lo)*scale), selectBuckets-1)]++
		counts[3][min(int((xs[i+3]-lo)*scale), selectBuckets-1)]++
	}
	for ; i < len(xs); i++ {
		counts[0][min(int((xs[i]-lo)*scale), selectBuckets-1)]++
	}
	count := &counts[0]
	for b := range count {
		count[b] += counts[1][b] + counts[2][b] + counts[3][b]
	}
	// Each rank's bucket, and the values below it.
	var bucket [8]int
	var below [8]int
	for i, r := range ranks {
		cum := 0
		b := 0
		for cum+int(count[b]) <= r {
			cum += int(count[b])
			b++
		}
		bucket[i], below[i] = b, cum
	}
	// Gather the target buckets into consecutive regions of scratch.
	var slot [selectBuckets]int32 // bucket → its region + 1; 0: not a target
	var start, fill [8]int
	regions := 0
	total := 0
	for i := range ranks {
		b := bucket[i]
		if slot[b] == 0 {
			start[regions], fill[regions] = total, total
			total += int(count[b])
			regions++
			slot[b] = int32(regions)
		}
	}
	if scratch == nil || len(scratch) < total {
		scratch = make([]float64, total)
	}
	for _, v := range xs {
		if s := slot[min(int((v-lo)*scale), selectBuckets-1)]; s != 0 {
			scratch[fill[s-1]] = v
			fill[s-1]++
		}
	}
	for i, r := range ranks {
		k := slot[bucket[i]] - 1
		region := scratch[start[k]:fill[k]]
		if len(region) <= selectBuckets/2 || depth >= 2 {
			out[i] = selectKth(region, r-below[i])
			continue
		}
		rlo, rhi := region[0], region[0]
		for _, v := range region {
			if v < rlo {
				rlo = v
			}
			if v > rhi {
				rhi = v
			}
		}
		buf := getBuf(len(region))
		bucketSelectDepth(region, rlo, rhi, []int{r - below[i]}, out[i:i+1], buf, depth+1)
		putBuf(buf)
	}
}

// empiricalRank is the 0-based rank that stat.Quantile(p, stat.Empirical,
// sorted, nil) returns for n values: the first i with i+1 ≥ p·n, computed
// with the same float expression.
func empiricalRank(p float64, n int) int {
	return max(int(math.Ceil(p*float64(n)))-1, 0)
}

// selectKth returns the k-th smallest (0-based) element of xs, reordering xs
// so that xs[:k] ≤ xs[k] ≤ xs[k+1:]. Three-way partitioning keeps it linear
// with many ties; a run of bad pivots falls back to sorting the range, so an
// unlucky order costs O(n log n), never O(n²). The pivot rule is fixed.
func selectKth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)
	budget := 2*bits.Len(uint(len(xs))) + 8
	for hi-lo > 1 {
		if budget--; budget < 0 {
			slices.Sort(xs[lo:hi])
			return xs[k]
		}
		pivot := medianOf3(xs[lo], xs[lo+(hi-lo)/2], xs[hi-1])
		// [lo,lt) < pivot, [lt,i) == pivot, (gt,hi) > pivot.
		lt, i, gt := lo, lo, hi-1
		for i <= gt {
			switch v := xs[i]; {
			case v < pivot:
				xs[lt], xs[i] = xs[i], xs[lt]
				lt++
				i++
			case v > pivot:
				xs[i], xs[gt] = xs[gt], xs[i]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k > gt:
			lo = gt + 1
		default:
			return pivot
		}
	}
	return xs[k]
}

func medianOf3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}

// tailCutoff is the value above which a step is a tail step (modified z >
// 10); +Inf when MAD = 0 leaves nothing to exclude robustly.
func tailCutoff(sorted []float64) float64 {
	if len(sorted) == 0 {
		return math.Inf(1)
	}
	med := Quantile(0.5, sorted)
	mad := sortedMAD(sorted, med)
	if mad == 0 {
		return math.Inf(1)
	}
	return med + tailZ*1.4826*mad
}

// bodyOnly returns the present steps at or below cut. Head-effect and drift
// diagnostics use it: a single tail step would dominate a 5-step mean or a
// unit mean and make a trend test meaningless.
func bodyOnly(xs []float64, cut float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, v := range xs {
		if !math.IsNaN(v) && v <= cut {
			out = append(out, v)
		}
	}
	return out
}

// sortedMAD is the Empirical (lower) median of |x − med| of an ascending
// sample: the deviations below and above the median are each sorted, so a
// merge walk finds the rank without sorting.
func sortedMAD(sorted []float64, med float64) float64 {
	k := lowerMedianRank(len(sorted))
	// First index above med; deviations grow leftwards from i−1 and rightwards from j.
	j, _ := slices.BinarySearch(sorted, math.Nextafter(med, math.Inf(1)))
	i := j - 1
	var d float64
	for range k + 1 {
		switch {
		case i < 0:
			d = sorted[j] - med
			j++
		case j >= len(sorted):
			d = med - sorted[i]
			i--
		case med-sorted[i] <= sorted[j]-med:
			d = med - sorted[i]
			i--
		default:
			d = sorted[j] - med
			j++
		}
	}
	return d
}

// lowerMedianRank is the 0-based rank of the Empirical median of n values.
func lowerMedianRank(n int) int { return (n+1)/2 - 1 }

// logIfPositive returns log x when every present value is > 0, else x: τ̂ is
// defined on log x (docs/statistics.md §4c), but zero durations have no logarithm.
func logIfPositive(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, v := range xs {
		if math.IsNaN(v) {
			continue
		}
		out = append(out, v)
	}
	for _, v := range out {
		if v <= 0 {
			return out
		}
	}
	for i, v := range out {
		out[i] = math.Log(v)
	}
	return out
}

// integratedTau is τ̂ = 1 + 2 Σ_{l≥1} ρ̂_l, summed while ρ̂_l > 0, with the
// autocovariances pooled over series (each demeaned by its own mean).
func integratedTau(series [][]float64) float64 {
	var c0 float64
	maxLen := 0
	centred := make([][]float64, 0, len(series))
	for _, s := range series {
		if len(s) < 2 {
			continue
		}
		mean := stat.Mean(s, nil)
		c := make([]float64, len(s))
		for i, v := range s {
			c[i] = v - mean
			c0 += c[i] * c[i]
		}
		centred = append(centred, c)
		maxLen = max(maxLen, len(s))
	}
	if c0 == 0 {
		return 1
	}
	tau := 1.0
	for lag := 1; lag < min(maxLen/2, 1000); lag++ {
		var cl float64
		for _, c := range centred {
			for t := 0; t+lag < len(c); t++ {
				cl += c[t] * c[t+lag]
			}
		}
		rho := cl / c0
		if !(rho > 0) {
			break
		}
		tau += 2 * rho
	}
	return tau
}

// rho1 is the lag-1 autocorrelation stat.Correlation(x[:n−1], x[1:]) of the
// present steps of each series, averaged with weights n over series where it
// is defined.
func rho1(series [][]float64) float64 {
	var sum, w float64
	for _, s := range series {
		if len(s) < 3 {
			continue
		}
		r := stat.Correlation(s[:len(s)-1], s[1:], nil)
		if math.IsNaN(r) {
			continue
		}
		sum += r * float64(len(s))
		w += float64(len(s))
	}
	if w == 0 {
		return 0
	}
	return sum / w
}

func presentOnly(xs []float64) []float64 {
	return appendPresent(make([]float64, 0, len(xs)), xs)
}

// appendPresent appends the non-NaN values of xs to out.
func appendPresent(out, xs []float64) []float64 {
	for _, v := range xs {
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// armDiagnostics computes the per-step diagnostics of metric m of arm a.
func armDiagnostics(a *armData, m int, confidence float64) *Diagnostics {
	raw := make([][]float64, len(a.units))
	logs := make([][]float64, len(a.units))
	for i := range a.units {
		raw[i] = presentOnly(a.unitSteps(m, i))
		logs[i] = logIfPositive(a.unitSteps(m, i))
	}
	d := &Diagnostics{Rho1: rho1(raw), Tau: integratedTau(logs)}

	// Variance inflation of the mean and the between-unit share (ICC).
	all := a.sorted[m]
	n := float64(len(all))
	d.VIF, d.NEff = d.Tau, n/d.Tau
	units := 0
	for _, s := range raw {
		if len(s) > 0 {
			units++
		}
	}
	if units >= 2 && n > float64(units) {
		mean, variance := stat.MeanVariance(all, nil)
		var ssb, ssw, sumN2, clus float64
		for i, s := range raw {
			if len(s) == 0 {
				continue
			}
			ni := float64(len(s))
			mi := stat.Mean(s, nil)
			ssb += ni * (mi - mean) * (mi - mean)
			for _, v := range s {
				ssw += (v - mi) * (v - mi)
			}
			sumN2 += ni * ni
			r := a.unitSum[m][i] - mean*a.unitCnt[m][i]
			clus += r * r
		}
		g := float64(units)
		msb, msw := ssb/(g-1), ssw/(n-g)
		n0 := (n - sumN2/n) / (g - 1)
		if sb := (msb - msw) / n0; sb > 0 && sb+msw > 0 {
			d.ICC = sb / (sb + msw)
		}
		if units >= 3 && variance > 0 {
			seCluster := g / (g - 1) * clus / (n * n)
			d.VIF = seCluster / (variance / n)
			d.NEff = n / d.VIF
		}
	}
	cut := tailCutoff(a.sorted[m])
	d.HeadEffect = headEffect(a, m, cut, confidence)
	d.Drift = armDrift(a, m, cut, confidence)
	return d
}

// headSteps is how many leading steps of a block the head-effect diagnostic compares.
const headSteps = 5

// headEffect is (mean of the first 5 steps) / (mean of the rest), pooled as
// a ratio of sums over blocks, with a jackknife-t CI over blocks on the log
// scale. Blocks need at least 10 present steps; tail steps are left out.
func headEffect(a *armData, m int, cut, confidence float64) *Estimate {
	var hs, hn, rs, rn []float64
	for i := range a.units {
		s := bodyOnly(a.unitSteps(m, i), cut)
		if len(s) < 2*headSteps {
			continue
		}
		var h, r float64
		for t, v := range s {
			if t < headSteps {
				h += v
			} else {
				r += v
			}
		}
		hs, hn = append(hs, h), append(hn, headSteps)
		rs, rn = append(rs, r), append(rn, float64(len(s)-headSteps))
	}
	if len(hs) == 0 {
		return nil
	}
	ratio := func(skip int) float64 {
		var h, hc, r, rc float64
		for i := range hs {
			if i == skip {
				continue
			}
			h, hc, r, rc = h+hs[i], hc+hn[i], r+rs[i], rc+rn[i]
		}
		return math.Log(h/hc) - math.Log(r/rc)
	}
	theta := ratio(-1)
	if math.IsNaN(theta) || math.IsInf(theta, 0) {
		return nil
	}
	est := &Estimate{Value: math.Exp(theta)}
	if len(hs) >= 2 {
		del := make([]float64, len(hs))
		for k := range hs {
			del[k] = ratio(k)
		}
		if lo, hi, _, ok := jackknifeT(theta, del, confidence); ok {
			est.CI = &[2]float64{math.Exp(lo), math.Exp(hi)}
		}
	}
	return est
}

// olsTrend fits y = α + β x and returns β with its t interval (n ≥ 3).
func olsTrend(x, y []float64, confidence float64) (slope, lo, hi float64, ok bool) {
	n := len(x)
	if n < 3 {
		return 0, 0, 0, false
	}
	mx, my := stat.Mean(x, nil), stat.Mean(y, nil)
	var sxx, sxy float64
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
	}
	if sxx == 0 {
		return 0, 0, 0, false
	}
	slope = sxy / sxx
	var ss float64
	for i := range x {
		r := y[i] - my - slope*(x[i]-mx)
		ss += r * r
	}
	se := math.Sqrt(ss / float64(n-2) / sxx)
	t := studentT(float64(n-2), 1-(1-confidence)/2)
	return slope, slope - t*se, slope + t*se, true
}

// armDrift is the trend of log unit means (tail steps left out) against
// unit start time.
func armDrift(a *armData, m int, cut, confidence float64) *Trend {
	var x, y []float64
	for i, u := range a.units {
		body := bodyOnly(a.unitSteps(m, i), cut)
		if len(body) == 0 {
			continue
		}
		mean := stat.Mean(body, nil)
		if mean <= 0 {
			return nil
		}
		x = append(x, float64(u.Start-a.units[0].Start)/1e9)
		y = append(y, math.Log(mean))
	}
	slope, lo, hi, ok := olsTrend(x, y, confidence)
	if !ok {
		return nil
	}
	return &Trend{Slope: slope, CI: [2]float64{lo, hi}, Change: slope * (x[len(x)-1] - x[0]), Per: "second"}
}

// roundDrift is the trend of the per-round log ratio of means (tail steps
// left out) against the round index: an arm × time interaction, which
// pairing does not cancel.
func roundDrift(pl *plan, m int, confidence float64) *Trend {
	g := pl.sides[0].groups
	var means [2][]float64
	for i, s := range pl.sides {
		cut := tailCutoff(s.arm.sorted[m])
		sum, cnt := make([]float64, g), make([]float64, g)
		for t, v := range s.arm.vals[m] {
			if grp := s.stepGrp[t]; int(grp) < g && !math.IsNaN(v) && v <= cut {
				sum[grp] += v
				cnt[grp]++
			}
		}
		for k := range g {
			means[i] = append(means[i], sum[k]/cnt[k])
		}
	}
	var x, y []float64
	for k := range g {
		a, b := means[0][k], means[1][k]
		if !(a > 0 && b > 0) {
			continue
		}
		x = append(x, float64(k))
		y = append(y, math.Log(b)-math.Log(a))
	}
	slope, lo, hi, ok := olsTrend(x, y, confidence)
	if !ok {
		return nil
	}
	return &Trend{Slope: slope, CI: [2]float64{lo, hi}, Change: slope * (x[len(x)-1] - x[0]), Per: "round"}
}

// driftThreshold is the smallest fractional change across a run that the
// drift warning reports; smaller trends are kept as data only.
const driftThreshold = 0.02

func (t *Trend) significant() bool {
	return t != nil && (t.CI[0] > 0 || t.CI[1] < 0) && math.Abs(t.Change) >= driftThreshold
}
