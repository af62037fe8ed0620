package analysis

import (
	"fmt"
	"math"

	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// stepEnds matches the ranks' kept steps (by rankStepKeys) and measures
// when each ends on the common clock: who finishes each step last, and the
// skew of the ends, with a CI over blocks of consecutive steps.
func (d *Doc) stepEnds(ps []phases.RankProcess, byRank map[int][]rankInst, clock func(*phases.RankProcess, int64) int64, o *Options) *StepEndSkew {
	type end struct{ end, wall int64 }
	per := make([]map[string]end, len(ps))
	var keys []string
	blockOf := map[string]string{}
	for i := range ps {
		per[i] = map[string]end{}
		steps := stepsOf(byRank[ps[i].Rank])
		for j, k := range rankStepKeys(steps) {
			x := &steps[j]
			if x.Warmup {
				continue
			}
			if _, ok := blockOf[k]; !ok {
				blockOf[k] = orDash(x.Arm) + " block " + fmt.Sprint(x.Block)
				if i == 0 {
					keys = append(keys, k)
				}
			}
			per[i][k] = end{clock(&ps[i], x.End), x.Wall}
		}
	}
	out := &StepEndSkew{Matching: "steps matched by step number (numbered families) or by arm, block and step index; warm-up steps left out",
		Note: "ranks of one run are not replicates: the CI is over blocks of consecutive steps of this run, not over ranks or runs"}
	for i := range ps {
		out.Ranks = append(out.Ranks, StepEndRank{Rank: ps[i].Rank})
	}
	var skews []float64
	var blocks []string
	var margins []float64
	lastN := make([]int, len(ps))
	for _, k := range keys {
		es := make([]end, len(ps))
		all := true
		for i := range ps {
			e, ok := per[i][k]
			es[i], all = e, all && ok
		}
		if !all {
			continue
		}
		lo, last := es[0].end, 0
		for i, e := range es {
			lo = min(lo, e.end)
			if e.end > es[last].end {
				last = i
			}
		}
		next := int64(math.MinInt64)
		for i, e := range es {
			if i != last {
				next = max(next, e.end)
			}
		}
		if next == es[last].end {
			last = -1 // a tie: no rank finishes the step last
		}
		for i, e := range es {
			out.Rows = append(out.Rows, StepEndRow{Step: out.Steps, Label: k, Rank: ps[i].Rank, EndNs: e.end, WallNs: e.wall, BehindNs: e.end - lo, Last: i == last})
			out.Ranks[i].BehindMeanNs += float64(e.end - lo)
		}
		if last >= 0 {
			lastN[last]++
		}
		hi := max(next, es[0].end)
		for _, e := range es {
			hi = max(hi, e.end)
		}
		skews = append(skews, float64(hi-lo))
		margins = append(margins, float64(hi-next))
		blocks = append(blocks, blockOf[k])
		out.SkewMaxNs = max(out.SkewMaxNs, hi-lo)
		out.Steps++
	}
	if out.Steps == 0 {
		return nil
	}
	for i := range out.Ranks {
		out.Ranks[i].LastSteps = lastN[i]
		out.Ranks[i].BehindMeanNs /= float64(out.Steps)
	}
	sum := stats.Summarize(skews)
	out.SkewMeanNs, out.SkewMedianNs, out.Method = sum.Mean, sum.Median, stats.MethodNone
	top := 0
	for i := range lastN {
		if lastN[i] > lastN[top] {
			top = i
		}
	}
	if 2*lastN[top] > out.Steps {
		r := ps[top].Rank
		out.Straggler, out.StragglerLast = &r, lastN[top]
		var mine []float64
		for j, row := 0, 0; j < len(out.Rows); j += len(ps) {
			if out.Rows[j+top].Last {
				mine = append(mine, margins[row])
			}
			row++
		}
		m := stats.Summarize(mine).Median
		out.MarginMedianNs = &m
		out.Sentence = fmt.Sprintf("rank %d finishes last in %d of %d %s, a median %s after the next rank; the ends of a step spread by a median %s (mean %s, max %s)",
			r, lastN[top], out.Steps, plural.Of(out.Steps, "step", "steps"), fmtDur(m), fmtDur(sum.Median), fmtDur(sum.Mean), fmtDur(float64(out.SkewMaxNs)))
	} else {
		out.Sentence = fmt.Sprintf("no straggler: no rank finishes last in more than half of the %d %s; ranks finish each step within %s of each other (median %s)",
			out.Steps, plural.Of(out.Steps, "step", "steps"), fmtDur(float64(out.SkewMaxNs)), fmtDur(sum.Median))
	}
	if !o.NoStats {
		d.stepEndCI(out, skews, blocks, o)
	}
	return out
}

// stepEndCI sets the CI of the mean step-end skew: the matched steps'
// skews resampled in blocks of consecutive steps (the steps' blocks).
func (d *Doc) stepEndCI(out *StepEndSkew, skews []float64, blocks []string, o *Options) {
	var units []stats.Unit
	for _, r := range blockRuns(blocks) {
		lo, hi := r[0], r[1]
		units = append(units, stats.Unit{ID: "job " + blocks[lo], Arm: "job", Profile: "job", Start: int64(lo), Steps: [][]float64{skews[lo:hi]}})
	}
	res, err := stats.Analyze("step ends", []string{"end_skew_ns"}, units,
		o.statsOptions("", []int{}, false))
	if err != nil {
		d.Warnings = append(d.Warnings, Warning{Code: "straggler_ci", Message: "step-end skew CI not computed: " + err.Error()})
		return
	}
	for _, a := range res.Arms {
		out.Method = a.Method
		for _, m := range a.Metrics {
			out.SkewCI = m.MeanCI
		}
	}
}

// blockRuns are the runs [lo, hi) of equal consecutive blocks: the units
// a series of matched steps is resampled in, so that consecutive steps stay
// together.
func blockRuns(blocks []string) [][2]int {
	var out [][2]int
	for lo := 0; lo < len(blocks); {
		hi := lo
		for hi < len(blocks) && blocks[hi] == blocks[lo] {
			hi++
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}

// fmtDur is ns for a sentence: µs below 10 ms, else ms.
func fmtDur(ns float64) string {
	if math.Abs(ns) < 10e6 {
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.2f ms", ns/1e6)
}
