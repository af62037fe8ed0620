package stats

import (
	"math"
	"slices"
)

// Replicates: a statistic under every resample of a plan (per row, per
// class of equal rows, or from the memoized sums), and its interval.

// statFunc evaluates a statistic of side i under counts c.
type statFunc func(i int, c []int32) float64

func meanStat(sides []*side, m int) statFunc {
	return func(i int, c []int32) float64 { return sides[i].mean(m, c) }
}

func quantileStat(sides []*side, m int, p float64) statFunc {
	return func(i int, c []int32) float64 { return sides[i].quantile(m, p, c) }
}

// denominators returns Σ_g c_g·steps_g of every resample of side i,
// computed once and shared by all metrics present in every step.
func (pl *plan) denominators(i int) []float64 {
	pl.denOnce[i].Do(func() {
		s := pl.sides[i]
		den := getBuf(pl.b) // back to the pool in release
		pl.memo(i).paritySums(den, pl.counts[i], s.groups+1, s.steps)
		pl.den[i] = den
	})
	return pl.den[i]
}

// meanReplicates is side i's mean of metric m under every resample, like
// side.mean but summing the even and the odd groups in two chains (half the
// floating-point dependency chain of one), in a fixed order, from the
// side's sum memo.
func (pl *plan) meanReplicates(i, m int) []float64 {
	s := pl.sides[i]
	if v, ok := s.constantMean(m); ok {
		return constantValues(pl.b, v)
	}
	var den []float64
	if s.full[m] {
		den = pl.denominators(i)
	}
	memo := pl.memo(i)
	if cl := memo.classes; cl != nil {
		vals := getBuf(len(cl.reps))
		defer putBuf(vals)
		if den != nil {
			den = pl.classDenominators(i)
		}
		memo.classMeans(vals, s.sum[m][:s.groups], s.cnt[m][:s.groups], den)
		return cl.rows(vals)
	}
	out := getBuf(pl.b)
	memo.parityReplicates(out, pl.counts[i], s.groups+1, s.sum[m][:s.groups], s.cnt[m][:s.groups], den)
	return out
}

// quantileAt is the p-quantile of side i's metric m under resample r, with
// the total weight taken from the shared denominators when metric m is
// present in every step.
func (pl *plan) quantileAt(i, m int, p float64, r int) float64 {
	s := pl.sides[i]
	c := pl.row(i, r)
	if !s.full[m] {
		return s.quantile(m, p, c)
	}
	den := pl.denominators(i)
	if den[r] == 0 {
		return math.NaN()
	}
	return s.q[m].quantile(p, c, den[r])
}

// quantileReplicates is side i's p-quantile of metric m under every
// resample, computed once per distinct count row when the memo knows them.
func (pl *plan) quantileReplicates(i, m int, p float64) []float64 {
	return pl.perRow(i, func(r int) float64 { return pl.quantileAt(i, m, p, r) })
}

// perRow returns f(r) for every resample r of side i into a pooled buffer,
// calling f once per distinct count row when the memo knows them (f must
// depend on the row's counts only).
func (pl *plan) perRow(i int, f func(r int) float64) []float64 {
	cl := pl.memo(i).classes
	vals := pl.atClasses(cl, f)
	if cl == nil {
		return vals
	}
	defer putBuf(vals)
	return cl.rows(vals)
}

// atClasses returns f(r) at the first row r of every class of cl, or at
// every row when cl is nil, in a pooled buffer.
func (pl *plan) atClasses(cl *rowClasses, f func(r int) float64) []float64 {
	if cl == nil {
		out := getBuf(pl.b)
		for r := range out {
			out[r] = f(r)
		}
		return out
	}
	out := getBuf(len(cl.reps))
	for k, r := range cl.reps {
		out[k] = f(int(r))
	}
	return out
}

// classes returns the row classes that all sides of pl share, or nil.
func (pl *plan) classes() *rowClasses {
	if len(pl.sides) > 1 && !pl.paired {
		return nil
	}
	return pl.memo(0).classes
}

// values returns f(r) at the first row r of every class, or at every row
// when pl has no shared classes, in a pooled buffer.
func (pl *plan) values(f func(r int) float64) []float64 {
	return pl.atClasses(pl.classes(), f)
}

// classDenominators is denominators(i) at the first row of each class of
// side i's rows.
func (pl *plan) classDenominators(i int) []float64 {
	pl.classDenOnce[i].Do(func() {
		den := pl.denominators(i)
		reps := pl.memo(i).classes.reps
		cd := make([]float64, len(reps))
		for k, r := range reps {
			cd[k] = den[r]
		}
		pl.classDen[i] = cd
	})
	return pl.classDen[i]
}

// chainDenominators is Σ_g c_g·steps_g in one chain (side.mean's
// denominator for metrics present in every step) of each class of side i's
// rows.
func (pl *plan) chainDenominators(i int) []float64 {
	pl.chainDenOnce[i].Do(func() {
		s := pl.sides[i]
		den := make([]float64, len(pl.memo(i).classes.reps))
		pl.memo(i).chainSums(den, pl.counts[i], s.groups+1, s.steps)
		pl.chainDen[i] = den
	})
	return pl.chainDen[i]
}

// meanValues is meanReplicates as values.
func (pl *plan) meanValues(i, m int) []float64 {
	cl := pl.classes()
	if cl == nil {
		return pl.meanReplicates(i, m)
	}
	s := pl.sides[i]
	if v, ok := s.constantMean(m); ok {
		return constantValues(len(cl.reps), v)
	}
	var den []float64
	if s.full[m] {
		den = pl.classDenominators(i)
	}
	out := getBuf(len(cl.reps))
	pl.memo(i).classMeans(out, s.sum[m][:s.groups], s.cnt[m][:s.groups], den)
	return out
}

// quantileValues is quantileReplicates as values.
func (pl *plan) quantileValues(i, m int, p float64) []float64 {
	return pl.values(func(r int) float64 { return pl.quantileAt(i, m, p, r) })
}

// sideMeanValues is side i's mean of metric m (side.mean, one chain) as
// values.
func (pl *plan) sideMeanValues(i, m int) []float64 {
	s := pl.sides[i]
	cl := pl.classes()
	if v, ok := s.constantMean(m); ok {
		n := pl.b
		if cl != nil {
			n = len(cl.reps)
		}
		return constantValues(n, v)
	}
	if !s.arm.tune.noExactSums && s.exactSums(m) {
		// One chain or two, every sum is the same exact integer.
		return pl.meanValues(i, m)
	}
	if cl == nil {
		return pl.values(func(r int) float64 { return s.mean(m, pl.row(i, r)) })
	}
	memo, cols := pl.memo(i), s.groups+1
	out := getBuf(len(cl.reps))
	memo.chainSums(out, pl.counts[i], cols, s.sum[m][:s.groups])
	var den []float64
	if s.full[m] {
		den = pl.chainDenominators(i)
	} else {
		den = getBuf(len(cl.reps))
		defer putBuf(den)
		memo.chainSums(den, pl.counts[i], cols, s.cnt[m][:s.groups])
	}
	for k := range out {
		out[k] /= den[k]
	}
	return out
}

// replicateRows returns the replicates of values vals: a fresh row-level
// copy (for the test hook).
func (pl *plan) replicateRows(vals []float64) []float64 {
	if cl := pl.classes(); cl != nil {
		rows := cl.rows(vals)
		return rows[:len(rows):len(rows)]
	}
	return slices.Clone(vals)
}

// interval is the expanded-percentile CI of the replicates that values vals
// stand for (class values weighted by the class sizes when pl has shared
// classes); vals may be reordered.
func (pl *plan) interval(vals []float64) (ci *[2]float64, undefined int) {
	lo, hi, undefined, ok := classInterval(vals, pl.classes(), pl.alphaP)
	if !ok {
		return nil, undefined
	}
	return &[2]float64{lo, hi}, undefined
}

// releasedInterval is interval and then returns vals to the pool.
func (pl *plan) releasedInterval(vals []float64) (*[2]float64, int) {
	ci, und := pl.interval(vals)
	putBuf(vals)
	return ci, und
}
