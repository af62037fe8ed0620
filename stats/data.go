package stats

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// minResamples is the smallest B the public API accepts (docs/statistics.md §3.5).
const minResamples = 1999

// config is the resolved form of Options.
type config struct {
	confidence float64
	b          int
	seed       uint64
	baseline   string
	quantiles  bool
	primary    []bool // per metric: in QuantileMetrics
	primaryIdx []int  // sorted
	decompose  *Decomposition
	// hook, set only by tests, sees internal replicate arrays.
	hook func(event string, data ...[]float64)
	// stratified, set only by tests, resamples each arm on its own even
	// when the arms interleave (to compare with the paired design).
	stratified bool
	// tune, set only by tests, turns exact shortcuts off.
	tune tuning
}

// tuning turns off the engine's exact shortcuts, so that tests can compare
// each with the plain computation it replaces. The zero value (what Options
// gives) uses every shortcut. It lives in the config, not in package
// variables, so that such tests can run in parallel.
type tuning struct {
	// plainSort: ascendingOrder sorts by comparison, not by radix.
	plainSort bool
	// noConstantShortcut: metrics with one value take the sums and
	// selections (side.constantMean, newArmData's point summary).
	noConstantShortcut bool
	// noExactSums: side means take one chain even when the sums are exact
	// (plan.sideMeanValues).
	noExactSums bool
}

var errNoUnits = errors.New("no units")

func resolveOptions(metrics []string, opt Options, minB int) (*config, error) {
	if len(metrics) == 0 {
		return nil, errors.New("no metrics")
	}
	cfg := &config{
		confidence: opt.Confidence,
		b:          opt.Resamples,
		seed:       opt.Seed,
		baseline:   opt.Baseline,
		quantiles:  opt.Quantiles,
		decompose:  opt.Decompose,
		primary:    make([]bool, len(metrics)),
	}
	if cfg.confidence == 0 {
		cfg.confidence = 0.95
	}
	if !(cfg.confidence > 0 && cfg.confidence < 1) {
		return nil, fmt.Errorf("confidence %v outside (0, 1)", opt.Confidence)
	}
	if cfg.b == 0 {
		cfg.b = 9999
	}
	if cfg.b < minB {
		return nil, fmt.Errorf("resamples %d below the minimum %d", opt.Resamples, minB)
	}
	if cfg.seed == 0 {
		cfg.seed = 1
	}
	qm := opt.QuantileMetrics
	if qm == nil {
		qm = []int{0}
	}
	for _, m := range qm {
		if m < 0 || m >= len(metrics) {
			return nil, fmt.Errorf("quantile metric index %d out of range [0, %d)", m, len(metrics))
		}
		cfg.primary[m] = true
	}
	for m, p := range cfg.primary {
		if p {
			cfg.primaryIdx = append(cfg.primaryIdx, m)
		}
	}
	if d := opt.Decompose; d != nil {
		if d.Total < 0 || d.Total >= len(metrics) {
			return nil, fmt.Errorf("decomposition total index %d out of range", d.Total)
		}
		if len(d.Parts) == 0 {
			return nil, errors.New("decomposition has no parts")
		}
		for _, p := range d.Parts {
			if p < 0 || p >= len(metrics) || p == d.Total {
				return nil, fmt.Errorf("decomposition part index %d invalid", p)
			}
		}
		for _, in := range d.Inner {
			if in.Metric < 0 || in.Metric >= len(metrics) || in.Metric == d.Total || in.Of < 0 || in.Of >= len(metrics) {
				return nil, fmt.Errorf("decomposition inner part index %d (of %d) invalid", in.Metric, in.Of)
			}
		}
	}
	return cfg, nil
}

// validateUnits checks shapes and values and returns the units sorted by (Start, ID).
func validateUnits(metrics []string, units []Unit, cfg *config) ([]*Unit, error) {
	if len(units) == 0 {
		return nil, errNoUnits
	}
	sorted := make([]*Unit, len(units))
	for i := range units {
		u := &units[i]
		sorted[i] = u
		if len(u.Steps) != len(metrics) {
			return nil, fmt.Errorf("unit %q: %d metric series, want %d", u.ID, len(u.Steps), len(metrics))
		}
		n := len(u.Steps[0])
		if n == 0 {
			return nil, fmt.Errorf("unit %q: no steps", u.ID)
		}
		for m, s := range u.Steps {
			if len(s) != n {
				return nil, fmt.Errorf("unit %q: metric %q has %d %s, metric %q has %d", u.ID, metrics[m], len(s), plural.Of(len(s), "step", "steps"), metrics[0], n)
			}
			if t := invalidDuration(s); t >= 0 {
				return nil, fmt.Errorf("unit %q: metric %q step %d: invalid duration %v", u.ID, metrics[m], t, s[t])
			}
		}
		if d := cfg.decompose; d != nil {
			if err := checkDecomposition(metrics, u, d); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(sorted, func(a, b *Unit) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.ID, b.ID))
	})
	for i := 1; i < len(sorted); i++ {
		if sorted[i].Start == sorted[i-1].Start && sorted[i].ID == sorted[i-1].ID {
			return nil, fmt.Errorf("duplicate unit %q at start %d", sorted[i].ID, sorted[i].Start)
		}
	}
	return sorted, nil
}

// invalidDuration returns the first step of s that is negative or
// infinite (NaN is absent, not invalid), or −1. The scan ORs the sign bits
// and tests the exponent of four values at a time, without a branch per
// value; only a hit is located exactly.
func invalidDuration(s []float64) int {
	const expMask = 0x7ff << 52
	i := 0
	for ; i+4 <= len(s); i += 4 {
		a, b := math.Float64bits(s[i]), math.Float64bits(s[i+1])
		c, d := math.Float64bits(s[i+2]), math.Float64bits(s[i+3])
		// A sign bit (a negative value, −0 or a NaN with the sign), or an
		// all-ones exponent (±Inf or NaN): look closer.
		if (a|b|c|d)>>63 != 0 || a&expMask == expMask || b&expMask == expMask || c&expMask == expMask || d&expMask == expMask {
			for k := i; k < i+4; k++ {
				if v := s[k]; v < 0 || math.IsInf(v, 0) {
					return k
				}
			}
		}
	}
	for ; i < len(s); i++ {
		if v := s[i]; v < 0 || math.IsInf(v, 0) {
			return i
		}
	}
	return -1
}

// checkDecomposition makes sure the parts are present exactly where the total
// is and sum to it, so that Σ parts = total holds in every resample.
func checkDecomposition(metrics []string, u *Unit, d *Decomposition) error {
	total := u.Steps[d.Total]
	for t, w := range total {
		var sum float64
		for _, p := range d.Parts {
			v := u.Steps[p][t]
			if math.IsNaN(v) != math.IsNaN(w) {
				return fmt.Errorf("unit %q step %d: part %q presence differs from total %q", u.ID, t, metrics[p], metrics[d.Total])
			}
			sum += v
		}
		for _, in := range d.Inner {
			if math.IsNaN(u.Steps[in.Metric][t]) != math.IsNaN(w) {
				return fmt.Errorf("unit %q step %d: inner part %q presence differs from total %q", u.ID, t, metrics[in.Metric], metrics[d.Total])
			}
		}
		if !math.IsNaN(w) && math.Abs(sum-w) > 1e-9*math.Abs(w)+1e-6 {
			return fmt.Errorf("unit %q step %d: parts sum to %v, total %q is %v", u.ID, t, sum, metrics[d.Total], w)
		}
	}
	return nil
}

// armData is one arm's steps, flattened in time order, with per-metric sorted
// present values for the point quantiles and the quantile indexes.
type armData struct {
	name     string
	units    []*Unit
	offset   []int // offset[i] = first flat step of unit i; len(units)+1 entries
	profiles []string
	vals     [][]float64 // [metric][flat step], NaN = absent
	sorted   [][]float64 // [metric] present values, ascending
	order    [][]int32   // [metric] flat step of each sorted value (primary metrics only)
	present  []int
	quant    [][3]float64 // [metric] point median, p90, p99 (Empirical)
	tail     []int        // [metric] tail steps (modified z > 10)
	unitSum  [][]float64  // [metric][unit]
	unitCnt  [][]float64
	// same[m]: every present step of metric m has one value, its bits
	// sameBits[m] (see side.constantMean).
	same     []bool
	sameBits []uint64
	tune     tuning // the shortcuts the engine may take for this arm
}

func newArmData(name string, units []*Unit, nMetrics int, primary []bool, tune tuning) *armData {
	a := &armData{name: name, units: units, offset: make([]int, len(units)+1), tune: tune}
	for i, u := range units {
		a.offset[i+1] = a.offset[i] + len(u.Steps[0])
		if !slices.Contains(a.profiles, u.Profile) {
			a.profiles = append(a.profiles, u.Profile)
		}
	}
	n := a.offset[len(units)]
	a.vals = make([][]float64, nMetrics)
	a.sorted = make([][]float64, nMetrics)
	a.order = make([][]int32, nMetrics)
	a.present = make([]int, nMetrics)
	a.quant = make([][3]float64, nMetrics)
	a.tail = make([]int, nMetrics)
	a.unitSum = make([][]float64, nMetrics)
	a.unitCnt = make([][]float64, nMetrics)
	a.same = make([]bool, nMetrics)
	a.sameBits = make([]uint64, nMetrics)
	var present, dev []float64 // buffers of the selection path, shared by the metrics
	for m := range nMetrics {
		flat, inPlace := adjacentSteps(units, m, n)
		if !inPlace {
			flat = make([]float64, 0, n)
		}
		sums := make([]float64, len(units))
		cnts := make([]float64, len(units))
		first := math.NaN() // the first present value
		for _, u := range units {
			for _, v := range u.Steps[m] {
				if !math.IsNaN(v) {
					first = v
					break
				}
			}
			if !math.IsNaN(first) {
				break
			}
		}
		fb := math.Float64bits(first)
		var differ uint64 // bits in which some present value differs from first
		for i, u := range units {
			// Local accumulators keep the sum in a register; the order of
			// additions is that of the steps, as always.
			var sum, cnt float64
			for _, v := range u.Steps[m] {
				if !math.IsNaN(v) {
					sum += v
					cnt++
					differ |= math.Float64bits(v) ^ fb
				}
			}
			sums[i], cnts[i] = sum, cnt
			if !inPlace {
				flat = append(flat, u.Steps[m]...)
			}
		}
		a.vals[m], a.unitSum[m], a.unitCnt[m] = flat, sums, cnts
		a.same[m], a.sameBits[m] = !math.IsNaN(first) && differ == 0, fb
		if primary[m] {
			idx := ascendingOrder(flat, tune.plainSort)
			s := make([]float64, len(idx))
			for i, j := range idx {
				s[i] = flat[j]
			}
			a.sorted[m], a.order[m] = s, idx
			a.present[m] = len(s)
			if len(s) > 0 {
				a.quant[m] = [3]float64{Quantile(0.5, s), Quantile(0.9, s), Quantile(0.99, s)}
				a.tail[m] = tailSteps(s)
			}
			continue
		}
		// Other metrics need only three order statistics and the MAD:
		// selection is linear where sorting every metric would dominate.
		if !tune.noConstantShortcut && a.same[m] && a.sameBits[m]>>63 == 0 {
			// One value in every present step (as selectSummaryInto finds):
			// every quantile, MAD 0, no step above the median.
			var n float64
			for _, c := range cnts {
				n += c
			}
			v := math.Float64frombits(a.sameBits[m])
			a.present[m], a.quant[m], a.tail[m] = int(n), [3]float64{v, v, v}, 0
			continue
		}
		present = appendPresent(present[:0], flat)
		a.present[m] = len(present)
		if len(present) > 0 {
			a.quant[m], a.tail[m] = selectSummaryInto(present, &dev)
		}
	}
	return a
}

// adjacentSteps returns the n steps of metric m of units as one slice
// when the units' series lie end to end in one array (as the phases
// adapter lays them out), so that they need no copy. The arm only reads
// them.
func adjacentSteps(units []*Unit, m, n int) ([]float64, bool) {
	first := units[0].Steps[m]
	if cap(first) < n {
		return nil, false
	}
	all := first[:n]
	at := 0
	for _, u := range units {
		s := u.Steps[m]
		if len(s) > 0 && &all[at] != &s[0] {
			return nil, false
		}
		at += len(s)
	}
	return all[:n:n], true
}

// ascendingOrder returns the flat steps of flat's present values in
// ascending order of value. Validated values are non-negative, and
// without a −0 among them they order as their bits: an LSD radix sort on
// the bits (skipping bytes that all keys share; ties in step order) instead
// of comparison sorting. Which step of a tie comes first changes nothing
// computed from the order: a tie is one value, and the cumulative weight
// at either end of a tie does not depend on the order inside. With a −0
// (equal to +0 but not the same bits), or with plain, it sorts by
// comparison.
func ascendingOrder(flat []float64, plain bool) []int32 {
	idx := make([]int32, 0, len(flat))
	var or uint64
	for i, v := range flat {
		if !math.IsNaN(v) {
			idx = append(idx, int32(i))
			or |= math.Float64bits(v)
		}
	}
	n := len(idx)
	if or>>63 != 0 || n < 64 || plain {
		slices.SortFunc(idx, func(x, y int32) int { return cmp.Compare(flat[x], flat[y]) })
		return idx
	}
	keys := make([]uint64, n)
	for k, i := range idx {
		keys[k] = math.Float64bits(flat[i])
	}
	tmpK, tmpI := make([]uint64, n), make([]int32, n)
	for shift := 0; shift < 64; shift += 8 {
		var count [256]int
		for _, k := range keys {
			count[k>>shift&255]++
		}
		if count[keys[0]>>shift&255] == n {
			continue // every key has this byte
		}
		sum := 0
		for b, c := range count {
			count[b] = sum
			sum += c
		}
		for j, k := range keys {
			b := k >> shift & 255
			tmpK[count[b]], tmpI[count[b]] = k, idx[j]
			count[b]++
		}
		keys, tmpK = tmpK, keys
		idx, tmpI = tmpI, idx
	}
	return idx
}

func (a *armData) steps() int { return a.offset[len(a.offset)-1] }

// mean is the arm's point mean: Σ unit sums / Σ unit counts.
func (a *armData) mean(m int) float64 {
	var s, n float64
	for i := range a.units {
		s += a.unitSum[m][i]
		n += a.unitCnt[m][i]
	}
	return s / n
}

// unitSteps returns unit i's series of metric m.
func (a *armData) unitSteps(m, i int) []float64 { return a.vals[m][a.offset[i]:a.offset[i+1]] }
