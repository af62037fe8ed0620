package stats

import "sync"

// The plan: one resampling task (an arm alone, or a baseline and an arm),
// its count vectors and the memos and denominators its replicates share.

// plan is one resampling task: one arm alone (arm summary) or a baseline and
// an arm (comparison), with the count vectors of its stream.
type plan struct {
	sides   []*side
	paired  bool
	n       int // the ladder's n
	level   string
	method  string
	b       int
	alphaP  float64
	stream  uint64
	counts  [][]int32    // per side: b rows of groups+1 counts
	den     [2][]float64 // per side: shared resampled denominators
	denOnce [2]sync.Once
	// Per side and class (plans with shared classes): den at each class's
	// first row, and Σ c_g·steps_g in one chain, side.mean's denominator.
	classDen, chainDen         [2][]float64
	classDenOnce, chainDenOnce [2]sync.Once
	// memos[i] memoizes side i's running sums over its count rows (paired
	// sides share the rows, so they share memos[0]).
	memos    [2]*sumMemo
	memoOnce [2]sync.Once
}

// memo returns the sum memo of side i's count rows, built on first use.
func (pl *plan) memo(i int) *sumMemo {
	if pl.paired {
		i = 0
	}
	pl.memoOnce[i].Do(func() {
		pl.memos[i] = newSumMemo(pl.counts[i], pl.sides[i].groups, pl.b)
	})
	return pl.memos[i]
}

// prepare builds the sum memos and shared denominators of a drawn plan
// while the tasks are set up in parallel; built lazily instead, the first
// metrics of every plan would queue behind one worker building them.
func (pl *plan) prepare() {
	for i := range pl.sides {
		pl.memo(i)
		pl.denominators(i)
		if pl.memo(i).classes != nil {
			pl.classDenominators(i)
		}
	}
}

// release hands a drawn plan's count rows, memos and denominators back to
// the pools once its task is done; nothing of them is in a Result.
func (pl *plan) release() {
	if pl == nil || pl.counts == nil {
		return
	}
	putIndexBuf(pl.counts[0])
	if len(pl.counts) > 1 && !pl.paired {
		putIndexBuf(pl.counts[1])
	}
	pl.counts = nil
	for i, m := range pl.memos {
		if m != nil {
			m.release()
			pl.memos[i] = nil
		}
	}
	for i, d := range pl.den {
		if d != nil {
			putBuf(d)
			pl.den[i] = nil
		}
	}
}

// row returns side i's counts of resample r.
func (pl *plan) row(i, r int) []int32 {
	cols := pl.sides[i].groups + 1
	return pl.counts[i][r*cols : (r+1)*cols]
}

// Replicate values. When every side of a plan resamples with the same count
// rows (one side, or paired sides) and the rows fall into classes of equal
// rows, a statistic is computed once per class: the plan's "values" are
// then per class, and their CIs weigh each class by its size. Otherwise
// values are per row, the replicates themselves. Either way a CI is that of
// the B replicates, bit for bit.
