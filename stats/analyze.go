package stats

import (
	"fmt"
	"math"
	"slices"

	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// Analyze computes, for one task (e.g. one phase), per-arm summaries of
// every metric and each arm's comparison with the baseline. key names the
// task; with the metric names and the arm names it selects the random
// streams, so equal inputs give byte-identical results.
func Analyze(key string, metrics []string, units []Unit, opt Options) (*Result, error) {
	cfg, err := resolveOptions(metrics, opt, minResamples)
	if err != nil {
		return nil, fmt.Errorf("analyze %q: %w", key, err)
	}
	return analyze(key, metrics, units, cfg)
}

var quantileStats = [...]struct {
	name string
	p    float64
}{{StatMedian, 0.5}, {StatP90, 0.9}, {StatP99, 0.99}}

func evalArmMetric(t *armTask, m int, name string, cfg *config) (ArmMetric, []Warning) {
	a, pl := t.a, t.ci
	am := ArmMetric{Metric: name, N: a.present[m], Present: float64(a.present[m]) / float64(a.steps()), Method: pl.method}
	var warns []Warning
	flag := func(code, msg string, vals map[string]float64) {
		if !slices.Contains(am.Flags, code) {
			am.Flags = append(am.Flags, code)
		}
		warns = append(warns, Warning{Code: code, Arm: a.name, Metric: name, Message: msg, Values: vals})
	}
	for i := range a.units {
		if a.unitCnt[m][i] > 0 {
			am.Units++
		}
	}
	if am.N == 0 {
		am.Method = MethodNone
		flag(WarnMetricAbsent, "no step of this arm has the metric", nil)
		return am, warns
	}
	am.Mean = a.mean(m)
	am.Median, am.P90, am.P99 = a.quant[m][0], a.quant[m][1], a.quant[m][2]
	am.TailSteps = a.tail[m]
	if am.TailSteps >= 1 && am.TailSteps <= 9 {
		flag(WarnTailLimitedMean, fmt.Sprintf("%d tail %s the mean: its CI may under-cover", am.TailSteps,
			plural.Of(am.TailSteps, "step (modified z > 10) carries", "steps (modified z > 10) carry")),
			map[string]float64{"tail_steps": float64(am.TailSteps)})
	}
	if cfg.primary[m] {
		d := armDiagnostics(a, m, cfg.confidence)
		am.Diagnostics = d
		if d.VIF >= 2 {
			flag(WarnAutocorrelation, fmt.Sprintf("steps are not independent: VIF %.3g, N_eff %.0f of %d; per-step i.i.d. CIs would be √VIF too narrow", d.VIF, d.NEff, am.N),
				map[string]float64{"rho1": d.Rho1, "tau": d.Tau, "vif": d.VIF, "n_eff": d.NEff})
		}
		if h := d.HeadEffect; h != nil && h.CI != nil && (h.CI[0] > 1 || h.CI[1] < 1) && math.Abs(h.Value-1) > 0.05 {
			flag(WarnHeadEffect, fmt.Sprintf("the first %d steps of each block average %.3g× the rest: trim more warm-up", headSteps, h.Value),
				map[string]float64{"ratio": h.Value, "lo": h.CI[0], "hi": h.CI[1]})
		}
		if d.Drift.significant() {
			flag(WarnDrift, fmt.Sprintf("unit means drift by %+.1f%% across the run (paired comparisons cancel additive drift)", 100*d.Drift.Change),
				map[string]float64{"slope_per_s": d.Drift.Slope, "change": d.Drift.Change})
		}
	}

	note := func(undefined int) {
		if undefined > 0 {
			flag(WarnUndefinedResamples, fmt.Sprintf("%d of %d resamples drew no present step; CIs use the rest", undefined, pl.b),
				map[string]float64{"undefined": float64(undefined), "b": float64(pl.b)})
		}
	}
	omit := func(reason string) { flag(WarnQuantileCIOmitted, reason, nil) }
	switch pl.method {
	case MethodBootstrap, MethodWithinRun:
		s := pl.sides[0]
		if s.present(m) == 0 {
			break
		}
		var und int
		if v, ok := s.constantMean(m); ok {
			// Every replicate is v: the interval of B equal values.
			if pl.b >= 2 {
				am.MeanCI = &[2]float64{v, v}
			}
		} else {
			am.MeanCI, und = pl.releasedInterval(pl.meanValues(0, m))
			note(und)
		}
		if pl.method == MethodBootstrap && am.MeanCI != nil && am.Mean > 0 {
			j := logScaleJackknife(pl, func(cs [][]int32) float64 { return s.mean(m, cs[0]) }, true, cfg.confidence)
			if j != nil && skewed(*am.MeanCI, *j) {
				flag(WarnSkewedOrTailLimited, "the jackknife-t and bootstrap mean CIs disagree by more than 25% of the width",
					map[string]float64{"boot_lo": am.MeanCI[0], "boot_hi": am.MeanCI[1], "jack_lo": j[0], "jack_hi": j[1]})
			}
			am.MeanCI = hullCI(am.MeanCI, j)
		}
		if !cfg.primary[m] {
			break
		}
		am.MedianCI, und = pl.releasedInterval(pl.quantileValues(0, m, 0.5))
		note(und)
		if !cfg.quantiles {
			break
		}
		for _, q := range quantileStats[1:] {
			ok, reason, approx := quantileRule(q.p, pl.n, pl.method, s.present(m))
			if !ok {
				omit(reason)
				continue
			}
			ci, und := pl.releasedInterval(pl.quantileValues(0, m, q.p))
			note(und)
			if q.p == 0.9 {
				am.P90CI = ci
			} else {
				am.P99CI = ci
			}
			if approx {
				flag(WarnApproximateQuantileCI, fmt.Sprintf("p%g CI rests on fewer than 50 steps beyond p", 100*q.p), nil)
			}
		}
	case MethodJackknife:
		s := pl.sides[0]
		am.MeanCI = logScaleJackknife(pl, func(cs [][]int32) float64 { return s.mean(m, cs[0]) }, true, cfg.confidence)
		if cfg.primary[m] {
			am.MedianCI = logScaleJackknife(pl, func(cs [][]int32) float64 { return s.quantile(m, 0.5, cs[0]) }, false, cfg.confidence)
			if cfg.quantiles {
				omit(fmt.Sprintf("p90/p99 CIs need ≥ 8 resampled units (the jackknife fails for extreme quantiles), have %d", pl.n))
			}
		}
	}
	return am, warns
}

// unitValues returns statistic f of each group of each side alone.
func unitValues(pl *plan, f statFunc) [][]float64 {
	out := make([][]float64, len(pl.sides))
	for i, s := range pl.sides {
		for g := range s.groups {
			c := make([]int32, s.groups+1)
			c[g] = 1
			out[i] = append(out[i], f(i, c))
		}
	}
	return out
}

// groupValues is the present values of metric m in the groups c counts,
// in a pooled buffer.
func (s *side) groupValues(m int, c []int32) []float64 {
	vals := getBuf(len(s.arm.vals[m]))[:0]
	for i, v := range s.arm.vals[m] {
		if !math.IsNaN(v) && int(s.stepGrp[i]) < s.groups && c[s.stepGrp[i]] > 0 {
			vals = append(vals, v)
		}
	}
	return vals
}
