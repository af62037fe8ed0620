package report

import (
	"fmt"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
)

// rankLines are the ranks section's context: where the rank ids came
// from, what an arrival is, the clock, how steps are matched.
func rankLines(s *analysis.RanksSection) []string {
	out := []string{
		fmt.Sprintf("%d ranks; rank ids from %s", len(s.Ranks), s.Source),
		"arrival: " + s.Collectives,
		"clock: " + s.Clock + hostNote(s),
		"nccl ms: Σ NCCL kernel durations; exposed: the part not overlapped by the rank's own compute kernels on its GPU; overlap % (of nccl) = 1 − exposed / nccl; nccl n: NCCL kernels",
	}
	if s.Matching != "" {
		out = append(out, fmt.Sprintf("stragglers: %d matched %ss (%s); last %% = share of them in which the rank arrived last; late = mean per %s of Σ (its arrival − the first rank's); wait = the same of Σ (the last rank's arrival − its own), its wait inside the collectives; CIs over blocks of consecutive %ss (%.0f%%, B = %d, seed %d)",
			s.Settings.Steps, s.Settings.Unit, s.Matching, s.Settings.Unit, s.Settings.Unit, s.Settings.Confidence*100, s.Settings.Resamples, s.Settings.Seed))
	}
	if n := s.Settings.InitCollectives; n > 0 {
		out = append(out, fmt.Sprintf("initialisation and warm-up: %d collectives outside the counted steps are left out of the steady state above; init late ms = each rank's Σ lateness over them", n))
	}
	if e := s.StepEnds; e != nil {
		ci := ""
		if e.SkewCI != nil {
			ci = fmt.Sprintf("; mean skew %.1f µs, %.0f%% CI [%.1f, %.1f] µs over blocks of consecutive steps (%s)", e.SkewMeanNs/1e3, s.Settings.Confidence*100, e.SkewCI[0]/1e3, e.SkewCI[1]/1e3, e.Method)
		}
		out = append(out, fmt.Sprintf("step ends (%d matched steps, on the common timeline): %s%s; %s", e.Steps, e.Sentence, ci, e.Note))
	}
	return out
}

func pct(p *float64) export.Value {
	if p == nil {
		return export.Null()
	}
	return export.Float(round1(*p * 100))
}

func rankCI(c *[2]float64, scale float64, format string) export.Value {
	if c == nil {
		return export.Null()
	}
	return export.Str(fmt.Sprintf("["+format+", "+format+"]", c[0]*scale, c[1]*scale))
}

// ranksTable is one row per rank: its NCCL time, exposed time, overlap
// share and how often it arrives last.
func ranksTable(s *analysis.RanksSection) *export.Table {
	cols := []export.Column{
		{Name: "rank", Type: export.TypeInt64},
		{Name: "pid", Type: export.TypeInt64},
	}
	if s.MultiHost { // one host: named in the clock line
		cols = append(cols, export.Column{Name: "host", Type: export.TypeString})
	}
	cols = append(cols,
		export.Column{Name: "nccl n", Type: export.TypeInt64},
		export.Column{Name: "nccl ms", Type: export.TypeFloat64},
		export.Column{Name: "exposed ms", Type: export.TypeFloat64},
		export.Column{Name: "overlap %", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "last %", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "last CI", Type: export.TypeString, Nullable: true},
		export.Column{Name: "late µs/" + s.Settings.Unit, Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "late CI", Type: export.TypeString, Nullable: true},
		export.Column{Name: "late median µs", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "wait µs/" + s.Settings.Unit, Type: export.TypeFloat64, Nullable: true},
	)
	if s.Settings.InitCollectives > 0 {
		cols = append(cols, export.Column{Name: "init late ms", Type: export.TypeFloat64})
	}
	if s.StepEnds != nil {
		cols = append(cols,
			export.Column{Name: "ends last", Type: export.TypeInt64},
			export.Column{Name: "behind µs/step", Type: export.TypeFloat64})
	}
	t := export.NewTable("ranks", "per rank, over the whole export; ends last = matched steps it finished last, behind = mean of its step end − the first rank's", cols...)
	for i, r := range s.Ranks {
		late, wait := export.Null(), export.Null()
		if r.LatenessMeanNs != nil {
			late = export.Float(round1(*r.LatenessMeanNs / 1e3))
		}
		if r.WaitMeanNs != nil {
			wait = export.Float(round1(*r.WaitMeanNs / 1e3))
		}
		vals := []export.Value{export.Int(int64(r.Rank)), export.Int(r.Pid)}
		if s.MultiHost {
			vals = append(vals, export.Str(clip(r.Host, 16)))
		}
		vals = append(vals, export.Int(r.NCCLKernels),
			export.Float(round1(float64(r.NCCLNs)/1e5)/10), export.Float(round1(float64(r.NCCLExposedNs)/1e5)/10), pct(r.OverlapShare),
			pct(r.StragglerShare), rankCI(r.StragglerShareCI, 100, "%.0f"), late, rankCI(r.LatenessCI, 1e-3, "%.1f"), optMicros(r.LatenessMedianNs), wait)
		if s.Settings.InitCollectives > 0 {
			vals = append(vals, export.Float(round1(float64(r.InitLatenessNs)/1e5)/10))
		}
		if e := s.StepEnds; e != nil {
			vals = append(vals, export.Int(int64(e.Ranks[i].LastSteps)), export.Float(round1(e.Ranks[i].BehindMeanNs/1e3)))
		}
		_ = t.AppendRow(vals...)
	}
	return t
}

// rankPhasesTable is each phase on each rank: mean wall, NCCL per
// instance, and the phase's imbalance across ranks.
func rankPhasesTable(s *analysis.RanksSection) *export.Table {
	arms, other := false, false
	for _, r := range s.Phases {
		arms = arms || r.Arm != ""
		other = other || r.NCCLOtherThreadNsMean != 0
	}
	cols := []export.Column{{Name: "phase", Type: export.TypeString}}
	if arms {
		cols = append(cols, export.Column{Name: "arm", Type: export.TypeString})
	}
	cols = append(cols,
		export.Column{Name: "rank", Type: export.TypeInt64},
		export.Column{Name: "n", Type: export.TypeInt64},
		export.Column{Name: "wall µs", Type: export.TypeFloat64},
		export.Column{Name: "max/mean", Type: export.TypeFloat64},
		export.Column{Name: "score", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "gpu busy µs", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "nccl µs", Type: export.TypeFloat64},
		export.Column{Name: "exposed µs", Type: export.TypeFloat64},
		export.Column{Name: "overlap % of nccl", Type: export.TypeFloat64, Nullable: true},
	)
	if other {
		cols = append(cols, export.Column{Name: "other-thread nccl µs", Type: export.TypeFloat64})
	}
	t := export.NewTable("rank_phases", "per phase, arm and rank, kept instances; µs per instance; max/mean = the slowest rank's mean wall / the mean of the ranks' mean walls; score = the fastest rank's mean wall / this rank's", cols...)
	for _, r := range s.Phases {
		vals := []export.Value{export.Str(clip(r.Phase, 24))}
		if arms {
			vals = append(vals, export.Str(clip(r.Arm, 12)))
		}
		vals = append(vals, export.Int(int64(r.Rank)), export.Int(int64(r.N)), export.Float(round1(r.WallMeanNs/1e3)),
			export.Float(float64(int64(r.Imbalance*1000+0.5))/1000), score(r.RelativeScore), optMicros(r.GPUBusyMeanNs), export.Float(round1(r.NCCLNsMean/1e3)), export.Float(round1(r.NCCLExposedNsMean/1e3)), pct(r.OverlapShare))
		if other {
			vals = append(vals, export.Float(round1(r.NCCLOtherThreadNsMean/1e3)))
		}
		_ = t.AppendRow(vals...)
	}
	return t
}

// score is a relative score to three decimals, null when absent.
func score(v *float64) export.Value {
	if v == nil {
		return export.Null()
	}
	return export.Float(float64(int64(*v*1000+0.5)) / 1000)
}

// optMicros is ns in µs to one decimal, null when not measured.
func optMicros(ns *float64) export.Value {
	if ns == nil {
		return export.Null()
	}
	return export.Float(round1(*ns / 1e3))
}

// ranksTitle heads the section.
func ranksTitle(s *analysis.RanksSection) string {
	return fmt.Sprintf("Ranks (%d): communication and stragglers", len(s.Ranks))
}

func hostNote(s *analysis.RanksSection) string {
	if s.MultiHost || len(s.Hosts) != 1 || s.Hosts[0] == "" {
		return ""
	}
	return "; host " + s.Hosts[0]
}

// rankComparisonsTable is each rank's mean wall per phase, arm against the
// baseline.
func rankComparisonsTable(s *analysis.RanksSection) *export.Table {
	base := "baseline"
	if len(s.Comparisons) > 0 {
		base = clip(s.Comparisons[0].Baseline, 12)
	}
	t := export.NewTable("rank_comparisons", "per rank: mean wall of each phase, arm against the baseline (ratio = arm / baseline; CIs over the rank's blocks)",
		export.Column{Name: "phase", Type: export.TypeString},
		export.Column{Name: "rank", Type: export.TypeInt64},
		export.Column{Name: "arm", Type: export.TypeString},
		export.Column{Name: base + " µs", Type: export.TypeFloat64},
		export.Column{Name: "arm µs", Type: export.TypeFloat64},
		export.Column{Name: "ratio", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "ratio CI", Type: export.TypeString, Nullable: true},
		export.Column{Name: "change", Type: export.TypeString},
	)
	for _, c := range s.Comparisons {
		ratio := export.Null()
		if c.Ratio != nil {
			ratio = export.Float(float64(int64(*c.Ratio*1000+0.5)) / 1000)
		}
		change := verdictText(c.Verdict)
		_ = t.AppendRow(export.Str(clip(c.Phase, 24)), export.Int(int64(c.Rank)), export.Str(clip(c.Arm, 12)), export.Float(round1(c.BaseMeanNs/1e3)),
			export.Float(round1(c.ArmMeanNs/1e3)), ratio, rankCI(c.RatioCI, 1, "%.3f"), export.Str(change))
	}
	return t
}
