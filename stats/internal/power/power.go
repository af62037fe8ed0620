// Package power computes the power table of check --history
// (docs/statistics.md §11) by simulation with the generator of
// stats/internal/dgp: for 5, 10 and 20 history runs and a few run-to-run
// CVs, the smallest regression that the gate detects in 80% of
// experiments. `go test ./stats/internal/power -run TestPowerTable -update`
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
	base := dgp.CIRuns()
	maxN := slices.Max(HistoryRuns)
	var out []Cell
	for ci, cv := range CVs {
		p := base.WithRunCV(cv)
		rng := rand.New(rand.NewPCG(Seed, uint64(ci)))
		pool := make([]float64, Experiments*(maxN+1))
		buf := make([]float64, p.L)
		for i := range pool {
			p.RunInto(rng, 1, buf)
			v, _, _ := stats.RunStatistic(buf, stats.StatMean)
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
	fmt.Fprintf(&b, "\nFalse alarms with no change at --max-regression 0 (%d experiments a cell; the method's bound is %s):", Experiments, pct((1-Confidence)/2))
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
