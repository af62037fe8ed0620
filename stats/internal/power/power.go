// Package power computes the power table of check --history
// (docs/statistics.md §11) by simulation with the generator of
// stats/internal/dgp: for 5, 10 and 20 history runs and a few run-to-run
// CVs of the gate's default statistic (the run's median), the smallest
// regression that the gate detects in 80% of experiments; and the table
// that chose that default (mean, median and trimmed means on runs with
// rare slow steps). `go test ./stats/internal/power -run TestPowerTable -update`
// rewrites the table in docs/statistics.md; the test (not -short) checks
// that the page holds what the code computes.
package power

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/stats"
	"github.com/nsysphase/nsysphase/stats/internal/dgp"
)

// Settings of the table.
var (
	HistoryRuns = []int{5, 10, 20}
	CVs         = []float64{0.02, 0.05, 0.10}
	Limits      = []float64{0, 0.05}
)

const (
	// Experiments per cell.
	Experiments = 1000
	// Seed of the table's PCG stream (seed2 is the CV's index).
	Seed = 20261203
	// Power is the detection rate the table states.
	Power      = 0.8
	Confidence = 0.95
	// Stat is the per-run statistic of the power table: check --history's
	// default.
	Stat = stats.StatMedian
)

// Cell is one run-to-run CV's results.
type Cell struct {
	CV       float64 // target
	Measured float64 // SD of the log run means over the pool
	// MinRegression[n][limit]: smallest regression detected in Power of the
	// experiments; FalseAlarm[n]: share of alarms at no change, limit 0.
	MinRegression map[int]map[float64]float64
	FalseAlarm    map[int]float64
}

// Compute simulates every cell. Each experiment's runs are drawn once: a
// regression r multiplies the candidate's steps by 1 + r, which multiplies
// its mean by 1 + r exactly, so an experiment detects r exactly when r
// exceeds its threshold exp(log(1+limit) + t·s·√(1+1/n) − (c − ȳ)) − 1,
// and the smallest r detected in 80% of experiments is the 80th
// percentile of the thresholds (common random numbers across r).
func Compute() []Cell {
	base := dgp.SlowStepRuns()
	maxN := slices.Max(HistoryRuns)
	var out []Cell
	for ci, cv := range CVs {
		p := base.WithMedianRunCV(cv)
		rng := rand.New(rand.NewPCG(Seed, uint64(ci)))
		pool := make([]float64, Experiments*(maxN+1))
		buf := make([]float64, p.L)
		for i := range pool {
			p.RunInto(rng, 1, buf)
			v, _, _ := stats.RunStatistic(buf, Stat)
			pool[i] = math.Log(v)
		}
		c := Cell{CV: cv, Measured: sd(pool), MinRegression: map[int]map[float64]float64{}, FalseAlarm: map[int]float64{}}
		for _, n := range HistoryRuns {
			c.MinRegression[n] = map[float64]float64{}
			t := stats.TQuantile(float64(n-1), 1-(1-Confidence)/2)
			for _, lim := range Limits {
				th := make([]float64, Experiments)
				alarms := 0
				for j := range Experiments {
					e := pool[j*(maxN+1) : (j+1)*(maxN+1)]
					hist, cand := e[:n], e[maxN]
					ybar := mean(hist)
					th[j] = math.Exp(math.Log1p(lim)+t*sd(hist)*math.Sqrt(1+1/float64(n))-(cand-ybar)) - 1
					if th[j] < 0 {
						alarms++
					}
				}
				slices.Sort(th)
				c.MinRegression[n][lim] = stats.Quantile(Power, th)
				if lim == 0 {
					c.FalseAlarm[n] = float64(alarms) / Experiments
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// StatChoice is one per-run statistic's behaviour in the history gate on
// dgp.SlowStepRuns, with ChoiceRuns history runs.
type StatChoice struct {
	Name       string
	CV         float64 // SD of the log statistic over the pool of runs
	FalseAlarm [2]float64
	Detected   float64 // share of +25% candidates failing at --max-regression 5%
}

const (
	// ChoiceRuns is the history of the statistic table.
	ChoiceRuns = 10
	// ChoiceRegression is the regression it tries to catch.
	ChoiceRegression = 0.25
)

// ChoiceLimits are the --max-regression values of its false alarms; the
// regression is gated at the second.
var ChoiceLimits = [2]float64{0, 0.05}

// choiceStats are the candidates: name and the run's number.
var choiceStats = []struct {
	name string
	of   func([]float64) float64
}{
	{"mean", func(x []float64) float64 { v, _, _ := stats.RunStatistic(x, stats.StatMean); return v }},
	{"median", func(x []float64) float64 { v, _, _ := stats.RunStatistic(x, stats.StatMedian); return v }},
	{"5% trimmed mean", func(x []float64) float64 { return trimmedMean(x, 0.05) }},
	{"20% trimmed mean", func(x []float64) float64 { return trimmedMean(x, 0.20) }},
}

// ChooseStat simulates the history gate on dgp.SlowStepRuns for each
// candidate statistic: Experiments null candidates and as many +25% ones,
// each against ChoiceRuns fresh history runs (seed2 = 100 + the
// statistic's index, so every statistic sees its own draws).
func ChooseStat() []StatChoice {
	p := dgp.SlowStepRuns()
	buf := make([]float64, p.L)
	var out []StatChoice
	for si, st := range choiceStats {
		rng := rand.New(rand.NewPCG(Seed, uint64(100+si)))
		c := StatChoice{Name: st.name}
		var all []float64
		t := stats.TQuantile(ChoiceRuns-1, 1-(1-Confidence)/2)
		for e := range 2 * Experiments {
			hist := make([]float64, ChoiceRuns)
			for i := range hist {
				p.RunInto(rng, 1, buf)
				hist[i] = math.Log(st.of(buf))
			}
			all = append(all, hist...)
			f := 1.0
			if e >= Experiments {
				f = 1 + ChoiceRegression
			}
			p.RunInto(rng, f, buf)
			lo := math.Log(st.of(buf)) - mean(hist) - t*sd(hist)*math.Sqrt(1+1.0/ChoiceRuns)
			if e < Experiments {
				for k, lim := range ChoiceLimits {
					if lo > math.Log1p(lim) {
						c.FalseAlarm[k] += 1.0 / Experiments
					}
				}
			} else if lo > math.Log1p(ChoiceLimits[1]) {
				c.Detected += 1.0 / Experiments
			}
		}
		c.CV = sd(all)
		out = append(out, c)
	}
	return out
}

// ChoiceMarkdown is the statistic table docs/statistics.md shows.
func ChoiceMarkdown(cs []StatChoice) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| per-run statistic | run-to-run CV | false alarms, limit %s | false alarms, limit %s | +%s caught at limit %s |\n|---|---:|---:|---:|---:|\n",
		pct(ChoiceLimits[0]), pct(ChoiceLimits[1]), pct(ChoiceRegression), pct(ChoiceLimits[1]))
	for _, c := range cs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.Name, pct(c.CV), pct(c.FalseAlarm[0]), pct(c.FalseAlarm[1]), pct(c.Detected))
	}
	return b.String()
}

// trimmedMean is the mean of x without its lowest and highest frac of
// values (⌊frac·n⌋ each side).
func trimmedMean(x []float64, frac float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	k := int(frac * float64(len(s)))
	return mean(s[k : len(s)-k])
}

// Markdown is the table docs/statistics.md shows.
func Markdown(cells []Cell) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| history runs | --max-regression |")
	for _, c := range cells {
		fmt.Fprintf(&b, " CV %s (measured %s) |", pct(c.CV), pct(c.Measured))
	}
	b.WriteString("\n|---:|---:|")
	for range cells {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, n := range HistoryRuns {
		for _, lim := range Limits {
			fmt.Fprintf(&b, "| %d | %s |", n, pct(lim))
			for _, c := range cells {
				fmt.Fprintf(&b, " +%s |", pct(c.MinRegression[n][lim]))
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\nFalse alarms with no change at --max-regression 0 (%d experiments a cell; the method's nominal rate is %s):", Experiments, pct((1-Confidence)/2))
	for _, n := range HistoryRuns {
		fmt.Fprintf(&b, " n = %d:", n)
		for i, c := range cells {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s", pct(c.FalseAlarm[n]))
		}
		b.WriteString(";")
	}
	s := strings.TrimSuffix(b.String(), ";")
	return s + " (CVs in column order).\n"
}

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func sd(xs []float64) float64 {
	m := mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
