package report

import (
	"fmt"
	"io"
	"slices"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// writeRanks is the ranks section's body: its context lines, then the
// rank, rank × phase and per-rank comparison tables. The default text fits
// textWidth: the ranks table splits into its headline columns and the
// rest, any other table that would not fit into tables that repeat its
// key columns; --wide and Markdown print each table whole.
func writeRanks(w io.Writer, doc *analysis.Doc, f Format, opt Options) error {
	rs, md := doc.Ranks, f == Markdown
	for _, l := range rankLines(rs) {
		if md {
			fmt.Fprintf(w, "- %s\n", escapeMarkdownText(l))
		} else {
			fmt.Fprintln(w, wrap("  "+l, textWidth, "      "))
		}
	}
	if md {
		fmt.Fprintln(w)
	}
	wall := timeScale{"µs", 1e3} // the --wide breakdown's unit
	if !opt.Wide {
		wall = breakdownScale(doc)
	}
	u := unitsFor(rs, wall)
	fit := !opt.Wide && !md
	tables := []*export.Table{ranksTable(rs, u)}
	if fit {
		tables = fitRanks(tables[0], rankHeadline(rs, u))
	}
	more := func(t *export.Table, keys ...string) {
		if fit {
			tables = append(tables, splitToFit(t, keys, textWidth)...)
		} else {
			tables = append(tables, t)
		}
	}
	if len(rs.Phases) > 0 {
		more(rankPhasesTable(rs, u), "phase", "arm", "rank")
		if len(rs.Comparisons) > 0 {
			more(rankComparisonsTable(rs, u), "phase", "rank", "arm")
		}
	}
	for i, t := range tables {
		if i > 0 && !md { // a Markdown table already ends with a blank line
			fmt.Fprintln(w)
		}
		if err := writeTable(w, t, f); err != nil {
			return err
		}
	}
	return nil
}

// fitRanks is the ranks table in tables of textWidth: whole where it fits,
// else its headline columns first, then the others, each with the rank.
func fitRanks(t *export.Table, headline []string) []*export.Table {
	if len(splitToFit(t, nil, textWidth)) == 1 {
		return []*export.Table{t}
	}
	rest := []string{"rank"}
	for i := range t.NumColumns() {
		if n := t.Column(i).Name; !slices.Contains(headline, n) {
			rest = append(rest, n)
		}
	}
	head := selectColumns(t, headline...)
	if head.NumColumns() < 2 || len(rest) < 2 {
		return splitToFit(t, []string{"rank"}, textWidth)
	}
	return append(splitToFit(head, []string{"rank"}, textWidth), splitToFit(selectColumns(t, rest...), []string{"rank"}, textWidth)...)
}

// rankLines are the ranks section's context: where the rank ids came
// from, what an arrival is, the clock, how steps are matched.
func rankLines(s *analysis.RanksSection) []string {
	out := []string{
		fmt.Sprintf("%d ranks; rank ids from %s", len(s.Ranks), s.Source),
		"arrival: " + s.Collectives,
		"clock: " + s.Clock + hostNote(s),
	}
	if hasNCCL(s) {
		out = append(out, "nccl ms: Σ NCCL kernel durations; exposed: the part not overlapped by the rank's own compute kernels on its GPU; overlap % (of nccl) = 1 − exposed / nccl; nccl n: NCCL kernels")
	}
	if s.Matching != "" {
		out = append(out, fmt.Sprintf("stragglers: %d matched %s (%s); last %% = share of them in which the rank arrived last; late = mean per %s of Σ (its arrival − the first rank's); wait = the same of Σ (the last rank's arrival − its own), its wait inside the collectives; after last = the same of Σ (its end of the collective − the last rank's arrival), the collective's own time apart from that wait; CIs over blocks of consecutive %ss (%.0f%%, B = %d, seed %d)",
			s.Settings.Steps, plural.Of(s.Settings.Steps, s.Settings.Unit, s.Settings.Unit+"s"), s.Matching, s.Settings.Unit, s.Settings.Unit, s.Settings.Confidence*100, s.Settings.Resamples, s.Settings.Seed))
	}
	if n := s.Settings.InitCollectives; n > 0 {
		out = append(out, fmt.Sprintf("initialisation and warm-up: %d %s outside the counted steps %s left out of the steady state above; init late ms = each rank's Σ lateness over them",
			n, plural.Of(n, "collective", "collectives"), plural.Of(n, "is", "are")))
	}
	if e := s.StepEnds; e != nil {
		ci := ""
		if e.SkewCI != nil {
			ci = fmt.Sprintf("; mean skew %.1f µs, %.0f%% CI [%.1f, %.1f] µs over blocks of consecutive steps (%s)", e.SkewMeanNs/1e3, s.Settings.Confidence*100, e.SkewCI[0]/1e3, e.SkewCI[1]/1e3, e.Method)
		}
		out = append(out, fmt.Sprintf("step ends (%d matched %s, on the common timeline): %s%s; %s", e.Steps, plural.Of(e.Steps, "step", "steps"), e.Sentence, ci, e.Note))
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

// communicates reports whether any rank has traced collectives: without,
// the rank view has no arrival columns.
func communicates(s *analysis.RanksSection) bool {
	for _, r := range s.Ranks {
		if r.Collectives > 0 {
			return true
		}
	}
	return false
}

// hasNCCL reports whether any rank ran NCCL kernels: without (MPI calls
// only, or no communication), the rank view has no NCCL columns.
func hasNCCL(s *analysis.RanksSection) bool {
	for _, r := range s.Ranks {
		if r.NCCLKernels > 0 {
			return true
		}
	}
	return false
}

// rankUnits are the units of the rank tables: walls in the unit of the
// output's breakdown (one quantity, one unit), skews (lateness, wait, time
// after the last arrival, behind the first rank) in the unit their
// largest value reads best in.
type rankUnits struct{ wall, skew timeScale }

// unitsFor are the rank tables' units beside a breakdown in wall's unit.
func unitsFor(s *analysis.RanksSection, wall timeScale) rankUnits {
	var top float64
	opt := func(v *float64) {
		if v != nil {
			top = max(top, abs(*v))
		}
	}
	for _, r := range s.Ranks {
		opt(r.LatenessMeanNs)
		opt(r.LatenessMedianNs)
		opt(r.WaitMeanNs)
		opt(r.AfterLastMeanNs)
	}
	if e := s.StepEnds; e != nil {
		for _, r := range e.Ranks {
			top = max(top, r.BehindMeanNs)
		}
	}
	return rankUnits{wall: wall, skew: scaleFor(top)}
}

// value is ns in the scale's unit: to 0.1 µs in µs, to 1 µs (three
// decimals) in ms and s, where one decimal would hide the ranks'
// differences.
func (ts timeScale) value(ns float64) export.Value {
	return export.Float(ts.round(ns / ts.ns))
}

func (ts timeScale) round(v float64) float64 {
	if ts.ns == 1e3 {
		return round1(v)
	}
	return float64(int64(v*1000+copysignHalf(v))) / 1000
}

// opt is ts.value, null when not measured.
func (ts timeScale) opt(ns *float64) export.Value {
	if ns == nil {
		return export.Null()
	}
	return ts.value(*ns)
}

// ci is a CI in the scale's unit, null when there is none.
func (ts timeScale) ci(c *[2]float64) export.Value {
	if c == nil {
		return export.Null()
	}
	if ts.ns == 1e3 {
		return rankCI(c, 1/ts.ns, "%.1f")
	}
	return rankCI(c, 1/ts.ns, "%.3f")
}

// rankHeadline are the ranks table's columns in the default text: NCCL
// time, its exposed part and overlap, and who arrives last, how late and
// how long the others wait; the rest follows in a second table.
func rankHeadline(s *analysis.RanksSection, u rankUnits) []string {
	per := u.skew.unit + "/" + s.Settings.Unit
	return []string{"rank", "nccl n", "nccl ms", "exposed ms", "overlap %", "last %", "late " + per, "late CI", "wait " + per}
}

// ranksTable is one row per rank: its NCCL time, exposed time, overlap
// share and how often it arrives last.
func ranksTable(s *analysis.RanksSection, u rankUnits) *export.Table {
	cols := []export.Column{
		{Name: "rank", Type: export.TypeInt64},
		{Name: "pid", Type: export.TypeInt64},
	}
	if s.MultiHost { // one host: named in the clock line
		cols = append(cols, export.Column{Name: "host", Type: export.TypeString})
	}
	comm, nccl := communicates(s), hasNCCL(s)
	if nccl {
		cols = append(cols,
			export.Column{Name: "nccl n", Type: export.TypeInt64},
			export.Column{Name: "nccl ms", Type: export.TypeFloat64},
			export.Column{Name: "exposed ms", Type: export.TypeFloat64},
			export.Column{Name: "overlap %", Type: export.TypeFloat64, Nullable: true})
	}
	per := u.skew.unit + "/" + s.Settings.Unit
	if comm {
		cols = append(cols,
			export.Column{Name: "last %", Type: export.TypeFloat64, Nullable: true},
			export.Column{Name: "last CI", Type: export.TypeString, Nullable: true},
			export.Column{Name: "late " + per, Type: export.TypeFloat64, Nullable: true},
			export.Column{Name: "late CI", Type: export.TypeString, Nullable: true},
			export.Column{Name: "late median " + u.skew.unit, Type: export.TypeFloat64, Nullable: true},
			export.Column{Name: "wait " + per, Type: export.TypeFloat64, Nullable: true},
			export.Column{Name: "after last " + per, Type: export.TypeFloat64, Nullable: true},
		)
	}
	if s.Settings.InitCollectives > 0 {
		cols = append(cols, export.Column{Name: "init late ms", Type: export.TypeFloat64})
	}
	if s.StepEnds != nil {
		cols = append(cols,
			export.Column{Name: "ends last", Type: export.TypeInt64},
			export.Column{Name: "behind " + u.skew.unit + "/step", Type: export.TypeFloat64})
	}
	t := export.NewTable("ranks", "per rank, over the whole export; ends last = matched steps it finished last, behind = mean of its step end − the first rank's", cols...)
	for i, r := range s.Ranks {
		vals := []export.Value{export.Int(int64(r.Rank)), export.Int(r.Pid)}
		if s.MultiHost {
			vals = append(vals, export.Str(clip(r.Host, 16)))
		}
		if nccl {
			vals = append(vals, export.Int(r.NCCLKernels),
				export.Float(round1(float64(r.NCCLNs)/1e5)/10), export.Float(round1(float64(r.NCCLExposedNs)/1e5)/10), pct(r.OverlapShare))
		}
		if comm {
			vals = append(vals, pct(r.StragglerShare), rankCI(r.StragglerShareCI, 100, "%.0f"), u.skew.opt(r.LatenessMeanNs), u.skew.ci(r.LatenessCI),
				u.skew.opt(r.LatenessMedianNs), u.skew.opt(r.WaitMeanNs), u.skew.opt(r.AfterLastMeanNs))
		}
		if s.Settings.InitCollectives > 0 {
			vals = append(vals, export.Float(round1(float64(r.InitLatenessNs)/1e5)/10))
		}
		if e := s.StepEnds; e != nil {
			vals = append(vals, export.Int(int64(e.Ranks[i].LastSteps)), u.skew.value(e.Ranks[i].BehindMeanNs))
		}
		_ = t.AppendRow(vals...)
	}
	return t
}

// rankPhasesTable is each phase on each rank: mean wall, NCCL per
// instance, and the phase's imbalance across ranks.
func rankPhasesTable(s *analysis.RanksSection, u rankUnits) *export.Table {
	arms, other := false, false
	for _, r := range s.Phases {
		arms = arms || r.Arm != ""
		other = other || r.NCCLOtherThreadNsMean != 0
	}
	w := u.wall.unit
	cols := []export.Column{{Name: "phase", Type: export.TypeString}}
	if arms {
		cols = append(cols, export.Column{Name: "arm", Type: export.TypeString})
	}
	cols = append(cols,
		export.Column{Name: "rank", Type: export.TypeInt64},
		export.Column{Name: "n", Type: export.TypeInt64},
		export.Column{Name: "wall " + w, Type: export.TypeFloat64},
		export.Column{Name: "max/mean", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "score", Type: export.TypeFloat64, Nullable: true},
		export.Column{Name: "gpu busy " + w, Type: export.TypeFloat64, Nullable: true},
	)
	nccl := hasNCCL(s)
	if nccl {
		cols = append(cols,
			export.Column{Name: "nccl " + w, Type: export.TypeFloat64},
			export.Column{Name: "exposed " + w, Type: export.TypeFloat64},
			export.Column{Name: "overlap % of nccl", Type: export.TypeFloat64, Nullable: true})
	}
	if other {
		cols = append(cols, export.Column{Name: "other-thread nccl " + w, Type: export.TypeFloat64})
	}
	t := export.NewTable("rank_phases", "per phase, arm and rank, kept instances; "+w+" per instance; max/mean = the slowest rank's mean wall / the mean of the ranks' mean walls; score = the fastest rank's mean wall / this rank's", cols...)
	for _, r := range s.Phases {
		vals := []export.Value{export.Str(clip(r.Phase, 24))}
		if arms {
			vals = append(vals, export.Str(clip(r.Arm, 12)))
		}
		vals = append(vals, export.Int(int64(r.Rank)), export.Int(int64(r.N)), u.wall.value(r.WallMeanNs),
			score(r.Imbalance), score(r.RelativeScore), u.wall.opt(r.GPUBusyMeanNs))
		if nccl {
			vals = append(vals, u.wall.value(r.NCCLNsMean), u.wall.value(r.NCCLExposedNsMean), pct(r.OverlapShare))
		}
		if other {
			vals = append(vals, u.wall.value(r.NCCLOtherThreadNsMean))
		}
		_ = t.AppendRow(vals...)
	}
	return t
}

// score is a ratio (relative score, imbalance) to three decimals, null
// when absent.
func score(v *float64) export.Value {
	if v == nil {
		return export.Null()
	}
	return export.Float(float64(int64(*v*1000+0.5)) / 1000)
}

// ranksTitle heads the section with what it holds: communication and
// stragglers where collectives were traced, else each rank's phases and
// the skew at the steps' ends.
func ranksTitle(s *analysis.RanksSection) string {
	var what string
	switch {
	case communicates(s):
		what = "communication and stragglers"
	case s.StepEnds != nil:
		what = "phases per rank and skew at the step ends (no communication traced)"
	default:
		what = "phases per rank (no communication traced)"
	}
	return fmt.Sprintf("Ranks (%d): %s", len(s.Ranks), what)
}

func hostNote(s *analysis.RanksSection) string {
	if s.MultiHost || len(s.Hosts) != 1 || s.Hosts[0] == "" {
		return ""
	}
	return "; host " + s.Hosts[0]
}

// rankComparisonsTable is each rank's mean wall per phase, arm against the
// baseline.
func rankComparisonsTable(s *analysis.RanksSection, u rankUnits) *export.Table {
	base := "baseline"
	if len(s.Comparisons) > 0 {
		base = clip(s.Comparisons[0].Baseline, 12)
	}
	t := export.NewTable("rank_comparisons", "per rank: mean wall of each phase, arm against the baseline (ratio = arm / baseline; CIs over the rank's blocks)",
		export.Column{Name: "phase", Type: export.TypeString},
		export.Column{Name: "rank", Type: export.TypeInt64},
		export.Column{Name: "arm", Type: export.TypeString},
		export.Column{Name: base + " " + u.wall.unit, Type: export.TypeFloat64},
		export.Column{Name: "arm " + u.wall.unit, Type: export.TypeFloat64},
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
		_ = t.AppendRow(export.Str(clip(c.Phase, 24)), export.Int(int64(c.Rank)), export.Str(clip(c.Arm, 12)), u.wall.value(c.BaseMeanNs),
			u.wall.value(c.ArmMeanNs), ratio, rankCI(c.RatioCI, 1, "%.3f"), export.Str(change))
	}
	return t
}
