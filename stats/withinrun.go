package stats

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Within-run comparison (docs/statistics.md §12): two single runs compared
// by a stationary bootstrap over their steps (Politis & Romano 1994), the
// mean block length chosen from the data (Politis & White 2004, with the
// correction of Patton, Politis & White 2009). It keeps the
// autocorrelation of the steps, but it cannot see run-to-run variance: it
// says whether these two runs differ, not whether the code does, and every
// output labels it "within-run".

// MethodWithinRunBootstrap labels the stationary-bootstrap comparison of
// single runs.
const MethodWithinRunBootstrap = "within-run-stationary-bootstrap"

// The calibration of the within-run interval (docs/statistics.md §12),
// chosen by TestWithinRunFalsePositiveGrid: two runs of one program (AR(1)
// log steps with rare spikes, φ 0.5–0.9, 100–1000 steps) are called
// different in at most about 5% of the experiments that get an interval.
const (
	// WithinRunBlockScale multiplies the Politis–White block length: it
	// minimises the error of a variance estimate, while an interval needs
	// its bias smaller (at 1× two identical runs differed in 7–16%).
	WithinRunBlockScale = 2
	// MinWithinRunBlocks is the fewest expected blocks (steps / block
	// length) of the shorter run that give an interval: below it the
	// resampled spread is too coarse (7.7% false positives at 4 blocks).
	MinWithinRunBlocks = 6
)

// WithinRunComparison is an arm against the baseline, each one run (or a
// few blocks), by resampling steps in blocks. Ratio = arm / baseline.
type WithinRunComparison struct {
	Metric        string  `json:"metric"`
	Stat          string  `json:"stat"`
	Baseline      string  `json:"baseline"`
	Arm           string  `json:"arm"`
	Method        string  `json:"method"`
	Confidence    float64 `json:"confidence"`
	B             int     `json:"b"`
	Seed          uint64  `json:"seed"`
	Stream        uint64  `json:"stream"`
	BaselineValue float64 `json:"baseline_value"`
	ArmValue      float64 `json:"arm_value"`
	RatioEstimate
	BaselineSteps int `json:"baseline_steps"`
	ArmSteps      int `json:"arm_steps"`
	// BlockLength is the mean block length of each series (baseline's
	// units, then the arm's), from Politis–White.
	BaselineBlocks []float64 `json:"baseline_block_length"`
	ArmBlocks      []float64 `json:"arm_block_length"`
	// Blocks is the expected number of blocks of the arm with fewer: the n
	// of the expanded percentile interval.
	Blocks float64 `json:"blocks"`
	// BlockBias is, per arm (baseline, arm), the largest share ĝ/b of a
	// run's variance that its blocks miss; the interval is widened by it.
	BlockBias [2]float64 `json:"block_bias"`
	Warnings  []string   `json:"warnings"` // always ci_excludes_run_to_run_variance
	// Reason says why there is no interval (too few blocks).
	Reason string `json:"reason,omitempty"`
}

// OptimalBlockLength is the Politis–White (2004) estimate, with the
// Patton–Politis–White (2009) correction, of the mean block length of the
// stationary bootstrap for the mean of x: b = (2Ĝ²/D̂)^{1/3} n^{1/3} with
// Ĝ = Σ λ(k/M)|k|γ̂(k), D̂ = 2(Σ λ(k/M)γ̂(k))², λ the flat-top kernel and M
// twice the first lag after which K_N = max(5, ⌊log10 n⌋) autocorrelations
// are all below 2√(log10 n / n). The result lies in [1, min(3√n, n/3)].
func OptimalBlockLength(x []float64) float64 {
	b, _ := blockLengthAndBias(x)
	return b
}

// blockLengthAndBias is OptimalBlockLength and ĝ = Ĝ/σ̂²_∞ (Ĝ = Σ λ|k|γ̂(k),
// σ̂²_∞ = Σ λγ̂(k)): the stationary bootstrap's variance of the mean with
// mean block length b is about σ²_∞(1 − ĝ/b) (Politis & White 2004), so
// ĝ/b is the share of the variance that blocks of length b miss.
func blockLengthAndBias(x []float64) (b, gHat float64) {
	n := len(x)
	if n < 4 {
		return 1, 0
	}
	mean := meanOf(x)
	eps := make([]float64, n)
	for i, v := range x {
		eps[i] = v - mean
	}
	bMax := math.Ceil(math.Min(3*math.Sqrt(float64(n)), float64(n)/3))
	kn := max(5, int(math.Log10(float64(n))))
	mMax := int(math.Ceil(math.Sqrt(float64(n)))) + kn
	mMax = min(mMax, n-1)
	crit := 2 * math.Sqrt(math.Log10(float64(n))/float64(n))
	acv := make([]float64, mMax+1)
	for k := 0; k <= mMax; k++ {
		var s float64
		for i := k; i < n; i++ {
			s += eps[i] * eps[i-k]
		}
		acv[k] = s / float64(n)
	}
	if acv[0] == 0 {
		return 1, 0
	}
	m := -1
	for k := 1; k+kn-1 <= mMax; k++ {
		small := true
		for j := k; j < k+kn; j++ {
			if math.Abs(acv[j]/acv[0]) >= crit {
				small = false
				break
			}
		}
		if small {
			m = k - 1
			break
		}
	}
	M := mMax
	if m >= 0 {
		M = min(2*max(m, 1), mMax)
	}
	g, lr := 0.0, acv[0]
	for k := 1; k <= M; k++ {
		r := float64(k) / float64(M)
		lam := 1.0
		if r > 0.5 {
			lam = 2 * (1 - r)
		}
		g += 2 * lam * float64(k) * acv[k]
		lr += 2 * lam * acv[k]
	}
	d := 2 * lr * lr
	if d == 0 || lr <= 0 {
		return 1, 0
	}
	b = math.Cbrt(2*g*g/d) * math.Cbrt(float64(n))
	return math.Max(1, math.Min(b, bMax)), math.Max(0, g/lr)
}

// CompareWithinRun compares arm with baseline, each given as the step
// series of its units (one run: one series), by the stationary bootstrap:
// each series is resampled on its own in blocks of geometric length with
// mean OptimalBlockLength (circularly), the statistic stat is taken over the
// resampled steps of all units of an arm, and the interval is the
// percentile interval of log(arm / baseline) over B resamples. NaN steps
// (phase absent) are left out first. Deterministic for (seed, key).
func CompareWithinRun(key, metric, stat, baseline, arm string, base, other [][]float64, opt Options) (*WithinRunComparison, error) {
	conf := opt.Confidence
	if conf == 0 {
		conf = 0.95
	}
	b := opt.Resamples
	if b == 0 {
		b = 9999
	}
	if b < 1999 {
		return nil, fmt.Errorf("within-run: B = %d: at least 1999", b)
	}
	seed := opt.Seed
	if seed == 0 {
		seed = 1
	}
	p, ok := map[string]float64{StatMean: 0, StatMedian: 0.5, StatP90: 0.9, StatP99: 0.99}[stat]
	if !ok {
		return nil, fmt.Errorf("within-run: unknown statistic %q", stat)
	}
	var gs [2][]float64
	bs, bbl, bg, bn, err := cleanWithinRun(base)
	if err != nil {
		return nil, err
	}
	gs[0] = bg
	as, abl, ag, an, err := cleanWithinRun(other)
	if err != nil {
		return nil, err
	}
	gs[1] = ag
	if bn == 0 || an == 0 {
		return nil, errors.New("within-run: an arm has no step")
	}
	stream := streamSeed2(key + "\x00" + metric + "\x00within-run\x00" + baseline + "\x00" + arm)
	w := &WithinRunComparison{Metric: metric, Stat: stat, Baseline: baseline, Arm: arm, Method: MethodWithinRunBootstrap, Confidence: conf, B: b,
		Seed: seed, Stream: stream, BaselineSteps: bn, ArmSteps: an, BaselineBlocks: bbl, ArmBlocks: abl,
		Warnings: []string{WarnRunToRunExcluded}}
	buf := make([]float64, 0, max(an, bn))
	w.BaselineValue, w.ArmValue = pooledStat(p, bs, buf), pooledStat(p, as, buf)
	if w.BaselineValue > 0 {
		r := w.ArmValue / w.BaselineValue
		w.Ratio = &r
	}
	if w.BaselineValue <= 0 || w.ArmValue <= 0 {
		return w, nil // no log-ratio interval
	}
	// n of the expanded percentile (docs/statistics.md §3.3): the expected
	// number of blocks of the arm with fewer.
	nb := math.Inf(1)
	for _, g := range [][2][]float64{{bbl, lens(bs)}, {abl, lens(as)}} {
		var k float64
		for i, l := range g[0] {
			k += g[1][i] / l
		}
		nb = math.Min(nb, k)
	}
	w.Blocks = nb
	w.BlockBias = [2]float64{maxShare(gs[0], bbl), maxShare(gs[1], abl)}
	if nb < MinWithinRunBlocks {
		w.Reason = fmt.Sprintf("%.1f blocks of the steps' autocorrelation length in the shorter run, %d needed: too few steps for a within-run interval (record longer runs)", nb, MinWithinRunBlocks)
		return w, nil
	}
	w.RatioCI = withinRunInterval(w, p, [2][][]float64{bs, as}, [2][]float64{bbl, abl}, rand.New(rand.NewPCG(seed, stream)), buf)
	return w, nil
}

// cleanWithinRun drops the NaN steps of each series and keeps the
// non-empty ones, with each one's block length and autocorrelation share;
// n counts the steps kept.
func cleanWithinRun(series [][]float64) (out [][]float64, bl, gs []float64, n int, err error) {
	for _, s := range series {
		var c []float64
		for _, v := range s {
			if math.IsNaN(v) {
				continue
			}
			if v < 0 || math.IsInf(v, 0) {
				return nil, nil, nil, 0, fmt.Errorf("within-run: invalid duration %v", v)
			}
			c = append(c, v)
		}
		if len(c) > 0 {
			out = append(out, c)
			bb, g := blockLengthOf(c)
			bl = append(bl, bb)
			gs = append(gs, g)
			n += len(c)
		}
	}
	return out, bl, gs, n, nil
}

// pooledStat is the mean (p = 0) or the p-quantile of every step of
// series, pooled in buf.
func pooledStat(p float64, series [][]float64, buf []float64) float64 {
	buf = buf[:0]
	for _, s := range series {
		buf = append(buf, s...)
	}
	if p == 0 {
		return meanOf(buf)
	}
	slices.Sort(buf)
	return Quantile(p, buf)
}

// withinRunInterval is the stationary-bootstrap interval of the ratio
// arm/baseline (series[1] over series[0], block lengths bl), widened by
// what each arm's resampling misses; nil with fewer than two positive
// replicates.
func withinRunInterval(w *WithinRunComparison, p float64, series [2][][]float64, bl [2][]float64, rng *rand.Rand, buf []float64) *[2]float64 {
	bs, as := series[0], series[1]
	rb := make([][]float64, len(bs))
	for i, s := range bs {
		rb[i] = make([]float64, len(s))
	}
	ra := make([][]float64, len(as))
	for i, s := range as {
		ra[i] = make([]float64, len(s))
	}
	reps := make([]float64, 0, w.B)
	var sv [2][]float64
	for range w.B {
		for i, s := range bs {
			stationaryResample(rng, s, bl[0][i], rb[i])
		}
		for i, s := range as {
			stationaryResample(rng, s, bl[1][i], ra[i])
		}
		vb, va := pooledStat(p, rb, buf), pooledStat(p, ra, buf)
		if vb > 0 && va > 0 {
			reps = append(reps, math.Log(va/vb))
			sv[0] = append(sv[0], math.Log(vb))
			sv[1] = append(sv[1], math.Log(va))
		}
	}
	if len(reps) < 2 {
		return nil
	}
	slices.Sort(reps)
	// The variance of a stationary-bootstrap estimate rests on about half
	// as many degrees of freedom as it has blocks: n = blocks / 2.
	alphaPrime := expandedAlpha(int(w.Blocks/2), w.Confidence)
	j := percentileRank(len(reps), alphaPrime)
	lo, hi := reps[j-1], reps[len(reps)-j]
	// Each arm's resampled variance misses about ĝ/b of the true one:
	// widen the interval about the point ratio by what the arms miss.
	var num, den float64
	for i := range sv {
		v := variance(sv[i])
		den += v
		num += v / math.Max(1-w.BlockBias[i], 0.25)
	}
	if den > 0 {
		f := math.Sqrt(num / den)
		c := math.Log(w.ArmValue / w.BaselineValue)
		lo, hi = c+(lo-c)*f, c+(hi-c)*f
	}
	return &[2]float64{math.Exp(lo), math.Exp(hi)}
}

func lens(xs [][]float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(len(x))
	}
	return out
}

// stationaryResample fills out with a stationary-bootstrap resample of x:
// blocks start at a uniform index and continue circularly, each step
// ending the block with probability 1/blockLen.
func stationaryResample(rng *rand.Rand, x []float64, blockLen float64, out []float64) {
	n := uint64(len(x))
	pEnd := 1 / blockLen
	i := uint64(0)
	for t := range out {
		if t == 0 || rng.Float64() < pEnd {
			i, _ = bits.Mul64(rng.Uint64(), n)
		} else {
			i++
			if i == n {
				i = 0
			}
		}
		out[t] = x[i]
	}
}

// Regression reports whether the arm is slower than the baseline by more
// than limit with this within-run interval (it compares the two runs only).
func (w *WithinRunComparison) Regression(limit float64) bool {
	return w.Above(1 + limit)
}

// robustLogSteps are the log steps with their outliers pulled in (a
// Hampel filter: a step more than 3 robust SDs from the running median of
// the 5 around it is set to that bound), on which a run's autocorrelation
// is estimated. A rare spike is independent of its neighbours: on the raw
// scale it swamps the autocovariances (the interval under-covered, 83%
// against 88% in TestWithinRunCoverage), and even on the log scale one 5×
// spike in 100 steps of φ = 0.9 lowers the upper bound of the lag-1
// autocorrelation by about 0.6 (TestWithinRunBlockFloor), shortening the
// blocks of just the runs that then get an interval. The robust SD is
// 1.4826 times the median absolute deviation from the running median, so
// that a slowly wandering level is not clipped. The bootstrap itself
// resamples the steps as they are.
func robustLogSteps(x []float64) []float64 {
	n := len(x)
	l := make([]float64, n)
	for i, v := range x {
		l[i] = math.Log(math.Max(v, 1))
	}
	if n < 5 {
		return l
	}
	med := make([]float64, n)
	dev := make([]float64, n)
	var win [5]float64
	for i := range l {
		lo := min(max(i-2, 0), n-5)
		w := win[:copy(win[:], l[lo:lo+5])]
		slices.Sort(w)
		med[i] = w[2]
		dev[i] = math.Abs(l[i] - med[i])
	}
	slices.Sort(dev)
	k := 3 * 1.4826 * Quantile(0.5, dev)
	for i, v := range l {
		l[i] = math.Max(med[i]-k, math.Min(med[i]+k, v))
	}
	return l
}

// blockLengthOf is the mean block length of a run's steps and its ĝ, both
// on robustLogSteps. The length is WithinRunBlockScale times the
// Politis–White length, never shorter than the Politis–White length of an
// AR(1) with ρ⁺, the upper 95% bound of the lag-1 autocorrelation
// (lag1Upper), and at most half the run; ĝ is the larger of the flat-top
// estimate and the AR(1)'s 2ρ⁺/(1−ρ⁺²). The bounds are for short runs:
// there the estimated autocorrelation is noisy, and the runs whose blocks
// came out short by chance were exactly those given an interval, too
// narrow (at φ = 0.9 and 200 steps, 7.2–22.7% of them were called
// different without the floor, 17% with it but ĝ from the data alone,
// 11% with both: docs/statistics.md §12).
func blockLengthOf(x []float64) (float64, float64) {
	l := robustLogSteps(x)
	b, g := blockLengthAndBias(l)
	rho := lag1Upper(l)
	b = math.Max(WithinRunBlockScale*b, arBlockLength(rho, len(l)))
	return math.Min(b, float64(len(x))/2), math.Max(g, 2*rho/(1-rho*rho))
}

// arBlockLength is the Politis–White length of an AR(1) with lag-1
// autocorrelation ρ over n steps: b = g^{2/3} n^{1/3}, g = 2ρ/(1−ρ²).
func arBlockLength(rho float64, n int) float64 {
	g := 2 * rho / (1 - rho*rho)
	return math.Max(1, math.Cbrt(g*g)*math.Cbrt(float64(n)))
}

// lag1Upper is ρ⁺, the one-sided 95% upper bound of the lag-1
// autocorrelation of x, in [0, 0.99]: ρ̂ bias-corrected (Kendall: E ρ̂ ≈
// ρ − (1+3ρ)/n) plus 1.645 √((1−ρ²)/n); 0 for constant or short x.
func lag1Upper(x []float64) float64 {
	n := float64(len(x))
	if len(x) < 4 || slices.Min(x) == slices.Max(x) {
		return 0
	}
	m := meanOf(x)
	var c0, c1 float64
	for i, v := range x {
		c0 += (v - m) * (v - m)
		if i > 0 {
			c1 += (v - m) * (x[i-1] - m)
		}
	}
	r := math.Max(-0.99, math.Min(0.99, (c1/c0*n+1)/(n-3)))
	return math.Max(0, math.Min(0.99, r+1.645*math.Sqrt((1-r*r)/n)))
}

// maxShare is the largest g[k]/b[k].
func maxShare(g, b []float64) float64 {
	var m float64
	for k := range g {
		m = math.Max(m, g[k]/b[k])
	}
	return m
}

func variance(xs []float64) float64 {
	m := meanOf(xs)
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(max(1, len(xs)-1))
}
