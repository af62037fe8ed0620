package stats

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nsysphase/nsysphase/stats/internal/dgp"
)

// The measurement behind the interval of a mean at K = 3…20 rounds
// (docs/statistics.md §3.4 and §10): candidate intervals of the ratio of
// means, all from one set of experiments.

// ratioParts is one experiment's ratio of means on the log scale: the
// point, the jackknife's delete-one-round values and the sorted bootstrap
// replicates (K ≥ 8, the engine's stream and B).
type ratioParts struct {
	theta float64
	dels  []float64
	reps  []float64
}

func ratioOfMeansParts(blocks []dgp.Block, seed uint64) ratioParts {
	cfg := testConfig([]string{"wall"}, Options{Resamples: coverageB, Seed: seed, Baseline: "A"})
	sorted, err := validateUnits([]string{"wall"}, dgpUnits(blocks), cfg)
	if err != nil {
		panic(err)
	}
	order, byArm, err := armOrder("cov", sorted, "A")
	if err != nil {
		panic(err)
	}
	a0 := newArmData(order[0], byArm[order[0]], 1, cfg.primary, cfg.tune)
	a1 := newArmData(order[1], byArm[order[1]], 1, cfg.primary, cfg.tune)
	pl := buildComparison(a0, a1, cfg.primary, false).base
	f := meanStat(pl.sides, 0)
	h := func(c []int32) float64 { return math.Log(f(1, c)) - math.Log(f(0, c)) }
	r := ratioParts{theta: h(pl.sides[0].ones)}
	for g := range pl.sides[0].groups {
		c := slices.Clone(pl.sides[0].ones)
		c[g] = 0
		r.dels = append(r.dels, h(c))
	}
	if pl.n >= 8 {
		pl.draw(cfg.seed, "cov\x00wall\x00cmp\x00A\x00B", cfg.b, cfg.confidence)
		ra, rb := pl.meanReplicates(0, 0), pl.meanReplicates(1, 0)
		for i := range ra {
			r.reps = append(r.reps, math.Log(rb[i])-math.Log(ra[i]))
		}
		slices.Sort(r.reps)
		pl.release()
	}
	return r
}

// intervalCandidates are the intervals compared, by name; the last is the
// engine's (expandedTInterval).
var intervalCandidates = []struct {
	name string
	ci   func(r ratioParts) [2]float64
}{
	{"before: jackknife-t (hull with the bootstrap at K ≥ 8)", func(r ratioParts) [2]float64 {
		return withBoot(r, tCandidate(r, 1))
	}},
	{"Hall's skew correction (both sides moved)", func(r ratioParts) [2]float64 {
		return withBoot(r, hallCandidate(r, true))
	}},
	{"lengthened on the side of the skew only", func(r ratioParts) [2]float64 {
		return withBoot(r, hallCandidate(r, false))
	}},
	{"chosen: jackknife-t × √(K/(K−1))", func(r ratioParts) [2]float64 {
		se, _ := jackknifeSE(r.dels)
		return withBoot(r, expandedTInterval(r.theta, se, len(r.dels), 0.95))
	}},
}

// hallCandidate moves the t interval's ends by Hall's (1992) Edgeworth term
// for the quantiles of a studentized statistic, γ̂/6·(2t²+1)·se with γ̂ the
// jackknife skewness of θ̂ (six times BCa's acceleration), at most t/2·se
// (both) or t·se; without both the side away from the skew stays put.
func hallCandidate(r ratioParts, both bool) [2]float64 {
	se, _ := jackknifeSE(r.dels)
	n := float64(len(r.dels))
	m := meanOf(r.dels)
	var s2, s3 float64
	for _, d := range r.dels {
		v := (n - 1) / n * (m - d)
		s2 += v * v
		s3 += v * v * v
	}
	var gamma float64
	if s2 > 0 {
		gamma = s3 / math.Pow(s2, 1.5)
	}
	t := studentT(n-1, 0.975)
	if both {
		adj := math.Max(-t/2, math.Min(t/2, gamma/6*(2*t*t+1)))
		return [2]float64{r.theta - se*(t-adj), r.theta + se*(t+adj)}
	}
	adj := math.Max(-t, math.Min(t, gamma/6*(2*t*t+1)))
	return [2]float64{r.theta - se*(t+math.Max(0, -adj)), r.theta + se*(t+math.Max(0, adj))}
}

func tCandidate(r ratioParts, mult float64) [2]float64 {
	se, _ := jackknifeSE(r.dels)
	t := mult * studentT(float64(len(r.dels)-1), 0.975)
	return [2]float64{r.theta - t*se, r.theta + t*se}
}

// withBoot is the hull of jack and the expanded percentile interval at K ≥ 8.
func withBoot(r ratioParts, jack [2]float64) [2]float64 {
	if r.reps == nil {
		return jack
	}
	j := percentileRank(len(r.reps), expandedAlpha(len(r.dels), 0.95))
	return [2]float64{math.Min(jack[0], r.reps[j-1]), math.Max(jack[1], r.reps[len(r.reps)-j])}
}

// TestRatioIntervalChoice (NSYSPHASE_COVERAGE=1, about 4 minutes on 2
// cores) compares the candidates on D1, D2 and D4 at K = 3…20, 4000
// experiments each (seed 20260303, B = 999), and holds the chosen one to
// ≥ 0.94 − 2 SE coverage and ≤ 2.5% + 3 SE lower ends above the truth at
// every K on D1 and D2. D4 is reported only: its means are carried by
// spikes rarer than one a block, which an arm's few blocks may not hold
// (docs/statistics.md §3.4).
func TestRatioIntervalChoice(t *testing.T) {
	skipUnlessFullCoverage(t)
	const runs, seed = 4000, 20260303
	se, lowSE := math.Sqrt(0.05*0.95/runs), math.Sqrt(0.025*0.975/runs)
	for _, design := range []struct {
		name    string
		p       dgp.Params
		checked bool
	}{{"D1", dgp.D1(), true}, {"D2", dgp.D2(), true}, {"D4", dgp.D4(), false}} {
		var b strings.Builder
		b.WriteString("| K |")
		for _, c := range intervalCandidates {
			fmt.Fprintf(&b, " %s |", c.name)
		}
		b.WriteString("\n|---:|" + strings.Repeat("---:|", len(intervalCandidates)) + "\n")
		for k := 3; k <= 20; k++ {
			p := design.p
			p.K = k
			truth := math.Log(p.Mean(1) / p.Mean(0))
			parts := make([]ratioParts, runs)
			var next atomic.Int64
			var wg sync.WaitGroup
			for range runtime.GOMAXPROCS(0) {
				wg.Go(func() {
					for {
						i := int(next.Add(1) - 1)
						if i >= runs {
							return
						}
						parts[i] = ratioOfMeansParts(dgp.Generate(p, seed, uint64(i)), uint64(i)+1)
					}
				})
			}
			wg.Wait()
			fmt.Fprintf(&b, "| %d |", k)
			var width0 float64
			for ci, c := range intervalCandidates {
				var hit, above int
				var width float64
				for _, r := range parts {
					iv := c.ci(r)
					width += iv[1] - iv[0]
					switch {
					case iv[0] > truth:
						above++
					case iv[1] >= truth:
						hit++
					}
				}
				if ci == 0 {
					width0 = width
				}
				cov, ab := float64(hit)/runs, float64(above)/runs
				fmt.Fprintf(&b, " %.1f / %.1f / %.2f |", 100*cov, 100*ab, width/width0)
				if ci == len(intervalCandidates)-1 && design.checked {
					if cov < 0.94-2*se {
						t.Errorf("%s K=%d: chosen interval covers %.3f", design.name, k, cov)
					}
					if ab > 0.025+3*lowSE {
						t.Errorf("%s K=%d: chosen interval's lower end above the truth in %.3f", design.name, k, ab)
					}
				}
			}
			b.WriteString("\n")
		}
		t.Logf("%s: coverage %% / lower end above the truth %% / width relative to the first (%d experiments a K, B = %d, seed %d):\n%s", design.name, runs, coverageB, seed, b.String())
	}
}
