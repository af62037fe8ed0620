package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// Warning codes of the ranks section.
const (
	WarnRanksUnaligned   = "ranks_unaligned"   // per-rank exports without session start times: no stragglers
	WarnRanksMultiHost   = "ranks_multi_host"  // ranks from different hosts: session clocks not corrected
	WarnCollectiveCounts = "collective_counts" // ranks ran different numbers of collectives in a step
	WarnRanksNotOneJob   = "ranks_not_one_job" // exports claim the same rank, or their timelines do not overlap: no rank view
	WarnRanksOneRun      = "ranks_one_run"     // ranks of one run pooled in one unit per block, not one unit per rank
)

// RanksSection is the document's `ranks` section: present when the inputs
// hold two or more ranks of one job (docs/guide.md, "Ranks").
type RanksSection struct {
	// Source says where the rank ids came from; Collectives what a rank's
	// arrival at a collective is; Clock how ranks share a timeline.
	Source      string   `json:"rank_source"`
	Collectives string   `json:"collectives"`
	Clock       string   `json:"clock"`
	Hosts       []string `json:"hosts"`
	MultiHost   bool     `json:"multi_host"`
	// Matching says how steps (or collectives) of different ranks are paired.
	Matching string          `json:"matching"`
	Ranks    []RankRow       `json:"ranks"`
	Phases   []RankPhaseRow  `json:"phases"`
	Steps    []StragglerStep `json:"straggler_steps"`
	// Comparisons are each rank's mean phase wall against the baseline arm,
	// with CIs over its blocks (empty with one arm or --no-stats).
	Comparisons []RankComparison  `json:"comparisons"`
	Settings    StragglerSettings `json:"straggler_settings"`
	// StepEnds is skew at the steps' ends on the common timeline: with or
	// without traced communication; nil when the ranks share no step or
	// cannot be put on one timeline.
	StepEnds *StepEndSkew `json:"step_ends"`
}

// StepEndSkew is when each rank finishes each matched step, on the
// common wall-clock timeline, and who finishes last.
type StepEndSkew struct {
	Matching string `json:"matching"`
	Steps    int    `json:"steps"` // steps matched on every rank (warm-up left out)
	// Skew of a step = the last rank's end − the first rank's end; its mean
	// over steps with a CI over blocks of consecutive steps, and the median.
	SkewMeanNs   float64     `json:"skew_mean_ns"`
	SkewMedianNs float64     `json:"skew_median_ns"`
	SkewMaxNs    int64       `json:"skew_max_ns"`
	SkewCI       *[2]float64 `json:"skew_mean_ci"`
	Method       string      `json:"method"`
	// Straggler is the rank that finishes last in more than half of the
	// steps (a step whose last ends tie has no last rank); null when none
	// does. MarginMedianNs is, over the steps it
	// finishes last, the median of its end − the next rank's end.
	Straggler      *int     `json:"straggler_rank"`
	StragglerLast  int      `json:"straggler_last_steps"`
	MarginMedianNs *float64 `json:"straggler_margin_median_ns"`
	// Sentence says it in words.
	Sentence string        `json:"sentence"`
	Ranks    []StepEndRank `json:"ranks"`
	Rows     []StepEndRow  `json:"rows"`
	Note     string        `json:"note"` // ranks are not replicates
}

// StepEndRank is one rank over the matched steps.
type StepEndRank struct {
	Rank         int     `json:"rank"`
	LastSteps    int     `json:"last_steps"`           // steps it finished last
	BehindMeanNs float64 `json:"behind_first_mean_ns"` // mean of its end − the first rank's end
}

// StepEndRow is one matched step on one rank.
type StepEndRow struct {
	Step     int    `json:"step"`
	Label    string `json:"label"`
	Rank     int    `json:"rank"`
	EndNs    int64  `json:"end_ns"` // on the common clock (ns since the earliest session start, or the export's clock)
	WallNs   int64  `json:"step_wall_ns"`
	BehindNs int64  `json:"behind_first_ns"`
	Last     bool   `json:"last"`
}

// StragglerSettings records how the straggler CIs were computed.
type StragglerSettings struct {
	Unit  string `json:"unit"`  // what one straggler sample is (a step, or a collective)
	Steps int    `json:"steps"` // samples matched across every rank
	// InitCollectives are the collectives outside the counted steps
	// (initialisation, warm-up steps) matched on every rank: their
	// lateness is reported apart (RankRow.InitLatenessNs).
	InitCollectives int     `json:"init_collectives"`
	Confidence      float64 `json:"confidence"`
	Resamples       int     `json:"resamples"`
	Seed            uint64  `json:"seed"`
}

// RankRow is one rank: its communication over the whole export and how
// often it arrives last.
type RankRow struct {
	Rank       int     `json:"rank"`
	File       string  `json:"file"`
	Pid        int64   `json:"pid"`
	Process    string  `json:"process"`
	Host       string  `json:"host"`
	RankSource string  `json:"rank_source"`
	Devices    []int64 `json:"cuda_devices"`
	Kernels    int64   `json:"kernels"`
	KernelNs   int64   `json:"kernel_ns"`
	// NCCL kernel time: Σ durations of the kernels whose name starts with
	// "nccl"; exposed: the part of it not overlapped by the rank's own
	// compute (non-NCCL) kernels on the same device.
	NCCLKernels   int64 `json:"nccl_kernels"`
	NCCLNs        int64 `json:"nccl_ns"`
	NCCLExposedNs int64 `json:"nccl_exposed_ns"`
	// OverlapShare = (nccl_ns − nccl_exposed_ns) / nccl_ns; null without
	// NCCL kernels.
	OverlapShare *float64 `json:"nccl_overlap_share_of_nccl_ns"`
	Collectives  int      `json:"collectives"`
	// Straggler statistics over the matched steps (or collectives):
	// StragglerShare = steps in which the rank arrived last / matched
	// steps; LatenessMeanNs = mean per step of Σ over the step's
	// collectives of (the rank's arrival − the earliest rank's arrival).
	StragglerSteps   int         `json:"straggler_steps"`
	StragglerShare   *float64    `json:"straggler_share_of_steps"`
	StragglerShareCI *[2]float64 `json:"straggler_share_ci"`
	LatenessMeanNs   *float64    `json:"lateness_mean_ns"`
	LatenessMedianNs *float64    `json:"lateness_median_ns"`
	// InitLatenessNs is Σ lateness at the collectives outside the counted
	// steps (initialisation, warm-up steps), kept out of the steady state.
	InitLatenessNs int64 `json:"init_lateness_ns"`
	// WaitMeanNs is the mean per step of the rank's wait inside the
	// collectives for the last rank (StragglerStep.WaitNs).
	WaitMeanNs *float64 `json:"wait_mean_ns"`
	// AfterLastMeanNs is the mean per step of Σ over the step's collectives
	// of (the rank's end of the collective − the last rank's arrival): the
	// time in the collective after every rank arrived, apart from the wait
	// before it (a collective that ends before the last arrival counts 0).
	AfterLastMeanNs *float64           `json:"after_last_arrival_mean_ns"`
	LatenessCI      *[2]float64        `json:"lateness_mean_ci"`
	Method          string             `json:"method"`
	Diagnostics     *stats.Diagnostics `json:"lateness_diagnostics,omitempty"`
}

// RankPhaseRow is one phase on one rank (kept instances only).
type RankPhaseRow struct {
	Phase      string  `json:"phase"`
	Arm        string  `json:"arm"`
	Rank       int     `json:"rank"`
	N          int     `json:"n"`
	WallMeanNs float64 `json:"wall_mean_ns"`
	// Imbalance = the largest rank's mean wall / the mean over ranks of
	// their mean walls (the same on every row of the phase).
	Imbalance float64 `json:"imbalance_max_over_mean"`
	// RelativeScore = the fastest rank's mean wall / this rank's (1 for the
	// fastest, lower for slower ranks); null when the wall is 0.
	RelativeScore *float64 `json:"relative_score"`
	// NCCL kernels launched from inside the phase's instances (their host
	// call on the instance's thread inside it), per instance.
	// GPUBusyMeanNs is the mean of the instances' gpu_busy_ns; null where
	// it is not measured (the (unannotated) row: GPU time does not split).
	GPUBusyMeanNs     *float64 `json:"gpu_busy_mean_ns"`
	NCCLNsMean        float64  `json:"nccl_ns_mean"`
	NCCLExposedNsMean float64  `json:"nccl_exposed_ns_mean"`
	OverlapShare      *float64 `json:"nccl_overlap_share_of_nccl_ns"`
	// NCCLOtherThreadNsMean is NCCL kernel time launched during the
	// instance by other threads of the process (PyTorch's autograd thread
	// launches DDP's gradient allreduces), per instance: beside the
	// instance's own, never mixed in.
	NCCLOtherThreadNsMean float64 `json:"nccl_other_thread_ns_mean"`
}

// RankComparison is one arm against the baseline on one rank: mean wall
// of a phase's kept instances, ratio = arm / baseline.
type RankComparison struct {
	Phase      string  `json:"phase"`
	Rank       int     `json:"rank"`
	Baseline   string  `json:"baseline"`
	Arm        string  `json:"arm"`
	BaseMeanNs float64 `json:"baseline_mean_ns"`
	ArmMeanNs  float64 `json:"arm_mean_ns"`
	stats.RatioEstimate
	Verdict stats.Verdict `json:"verdict"` // as in comparisons; VerdictNone without a between-block CI
	Method  string        `json:"method"`
	NUnits  int           `json:"n_units"`
}

// StragglerStep is one matched step (or collective) on one rank.
type StragglerStep struct {
	Step        int    `json:"step"`  // index among matched steps, from 0
	Label       string `json:"label"` // the step's key: ProfilerStep#N, or arm/block/step
	Rank        int    `json:"rank"`
	Collectives int    `json:"collectives"` // collectives matched in the step
	ArrivalNs   int64  `json:"first_arrival_ns"`
	// StepWallNs is the rank's wall of the step (its step range); null when
	// collectives are matched alone.
	StepWallNs *int64 `json:"step_wall_ns"`
	LatenessNs int64  `json:"lateness_ns"`
	Straggler  bool   `json:"straggler"`
	SkewNs     int64  `json:"step_skew_ns"` // Σ over the step's collectives of (last − first arrival)
	// WaitNs is Σ over the step's collectives of (the last rank's arrival −
	// this rank's): the time the rank waits inside them for the straggler.
	WaitNs int64 `json:"wait_ns"`
}

// minStragglerSteps is the fewest matched steps that stragglers are
// counted over; with fewer, each collective counts alone.
const minStragglerSteps = 10

type rankRef struct {
	file string
	pid  int64
}

// buildRanks sets d.Ranks, the ranks section, and each instance's rank when
// the inputs hold two or more ranks; it leaves them unset otherwise.
func (d *Doc) buildRanks(files []*FileResult, o *Options) {
	ps := d.rankProcesses(files)
	if len(ps) < 2 {
		return
	}
	if why := notOneJob(files, ps); why != "" {
		d.Warnings = append(d.Warnings, Warning{Code: WarnRanksNotOneJob, Message: why})
		return
	}
	phases.AssignRanks(ps)
	s := &RanksSection{}
	rankOf := map[rankRef]int{}
	hosts := map[string]bool{}
	nFiles := map[string]bool{}
	kinds := map[string]bool{}
	sources := map[string]bool{}
	for _, p := range ps {
		rankOf[rankRef{p.File, p.Pid}] = p.Rank
		hosts[p.Host] = true
		nFiles[p.File] = true
		kinds[p.Kind] = true
		sources[p.RankSource] = true
	}
	d.setInstanceRanks(rankOf, len(ps))
	aligned, clock := d.describeRanks(s, ps, hosts, nFiles, kinds, sources)
	byRank := d.rankInstances()
	for i := range ps {
		p := &ps[i]
		row := RankRow{Rank: p.Rank, File: p.File, Pid: p.Pid, Process: p.Name, Host: p.Host, RankSource: p.RankSource, Devices: p.Devices,
			Kernels: p.Kernels, KernelNs: p.KernelNs, NCCLKernels: p.NCCLKernels, NCCLNs: p.NCCLNs, NCCLExposedNs: p.NCCLExposedNs, Collectives: len(p.Collectives)}
		if row.Devices == nil {
			row.Devices = []int64{}
		}
		row.OverlapShare = share(p.NCCLNs-p.NCCLExposedNs, p.NCCLNs)
		s.Ranks = append(s.Ranks, row)
	}
	arms := d.Arms
	if len(arms) == 0 {
		arms = []string{""}
	}
	cache := &rankCache{}
	s.Phases = rankPhases(ps, byRank, d.Phases, arms, cache)
	s.Settings.Confidence, s.Settings.Resamples, s.Settings.Seed = d.Settings.Confidence, d.Settings.Resamples, d.Settings.Seed
	if aligned {
		s.StepEnds = d.stepEnds(ps, byRank, clock, o)
		if kinds["nccl"] || kinds["mpi"] {
			d.stragglers(s, ps, byRank, clock, o)
		}
	}
	s.Comparisons = d.rankComparisons(ps, byRank, o, cache)
	if s.Phases == nil {
		s.Phases = []RankPhaseRow{}
	}
	if s.Steps == nil {
		s.Steps = []StragglerStep{}
	}
	d.Ranks = s
}

// setInstanceRanks sets the rank of every instance of a rank process
// (rankOf), and joins each rank's units to the first rank's (d.rankUnits);
// n is the number of ranks.
func (d *Doc) setInstanceRanks(rankOf map[rankRef]int, n int) {
	st := d.instances
	type jobUnit struct {
		arm   string
		block int
	}
	first := map[jobUnit]phases.UnitID{}
	// Instances come in runs of one process and of one block: the rank is
	// looked up when the process changes, the unit joined when the block does.
	var ref rankRef
	r, ok, prevBlk := 0, false, -1
	for i := range st.Len() {
		if f, pid := st.File(i), st.Pid(i); i == 0 || f != ref.file || pid != ref.pid {
			ref = rankRef{f, pid}
			r, ok = rankOf[ref]
		}
		if !ok {
			continue
		}
		st.SetRank(i, r)
		b := st.BlockOf(i)
		if b == prevBlk {
			continue
		}
		prevBlk = b
		// Ranks of one run are not replicates: each rank's block (or
		// process unit) joins the first rank's, so an arm's CIs are over
		// its blocks of this run, never over its ranks.
		u := st.Unit(i)
		k := jobUnit{u.Arm, u.Block}
		if f, ok := first[k]; !ok {
			first[k] = u
		} else if f != u {
			if d.rankUnits == nil {
				d.rankUnits = map[phases.UnitID]phases.UnitID{}
			}
			d.rankUnits[u] = f
		}
	}
	if len(d.rankUnits) > 0 {
		d.Warnings = append(d.Warnings, Warning{Code: WarnRanksOneRun, Message: fmt.Sprintf("the %d ranks are one run: each arm's statistics pool the ranks' steps in one unit per block, never one unit per rank (ranks are not replicates; record more runs for a between-run CI)", n)})
	}
}

// rankInstances are the steps and phases of each rank, warm-up ones
// included (step keys count them, and each use leaves them out): the
// document's own instances, so every rank row is phase_instances grouped
// by rank (segmentation flags each process's first --skip-steps steps).
func (d *Doc) rankInstances() map[int][]rankInst {
	st := d.instances
	count := map[int]int{}
	for i := range st.Len() {
		if r, ok := st.Rank(i); ok {
			count[r]++
		}
	}
	byRank := make(map[int][]rankInst, len(count))
	for r, n := range count {
		byRank[r] = make([]rankInst, 0, n)
	}
	// Field by field from the store (no full instance decoded per row),
	// a rank's run of instances appended to its slice held here.
	var cur []rankInst
	curRank := -1
	for i := range st.Len() {
		r, ok := st.Rank(i)
		if !ok {
			continue
		}
		if r != curRank {
			if curRank >= 0 {
				byRank[curRank] = cur
			}
			cur, curRank = byRank[r], r
		}
		cur = append(cur, slimAt(st, i))
	}
	if curRank >= 0 {
		byRank[curRank] = cur
	}
	return byRank
}

// rankProcesses are the rank processes of every export, with the ranks
// their manifests give. Every export's rank processes travel in its
// dataset even when it holds one rank (one export per rank, one job per
// export): --from over the jobs' datasets then finds the ranks together.
func (d *Doc) rankProcesses(files []*FileResult) []phases.RankProcess {
	for _, fr := range files {
		if len(fr.Ranks) > 0 {
			if d.rankInputs == nil {
				d.rankInputs = map[string][]phases.RankProcess{}
			}
			d.rankInputs[fr.Path] = fr.Ranks
		}
	}
	var ps []phases.RankProcess
	for _, fr := range files {
		byPid := manifestRanks(fr.Manifest)
		for _, p := range fr.Ranks {
			if r, ok := byPid[p.Pid]; ok {
				p.ManifestRank = r
			}
			ps = append(ps, p)
		}
	}
	return ps
}

// describeRanks fills the section's context (sources, hosts, collectives,
// clock) from what the rank processes ps hold, and warns where their
// clocks do not compare. It returns whether the ranks share one timeline
// and the arrival clock: raw ns within one export, else Unix ns from the
// session start.
func (d *Doc) describeRanks(s *RanksSection, ps []phases.RankProcess, hosts, nFiles, kinds, sources map[string]bool) (aligned bool, clock func(*phases.RankProcess, int64) int64) {
	s.Source = strings.Join(slices.Sorted(maps.Keys(sources)), "; ")
	s.Hosts = slices.Sorted(maps.Keys(hosts))
	s.MultiHost = len(hosts) > 1
	switch {
	case !kinds["nccl"] && !kinds["mpi"]:
		s.Collectives = "none traced (no NCCL kernels, no MPI trace): ranks are compared by their steps"
	case kinds["nccl"] && kinds["mpi"]:
		s.Collectives = "NCCL kernels (GPU start) where a rank ran them, else traced MPI collective calls (host start)"
	case kinds["nccl"]:
		s.Collectives = "NCCL kernels: a rank arrives when its kernel starts on its GPU"
	default:
		s.Collectives = "traced MPI collective calls: a rank arrives when its call starts on the host"
	}
	aligned = true
	if len(nFiles) == 1 {
		s.Clock = "one export: every rank on its clock"
	} else {
		s.Clock = "one export per rank: each export's session start (TARGET_INFO_SESSION_START_TIME) puts its events on one wall-clock timeline"
		for _, p := range ps {
			if p.SessionStartUTC == 0 {
				aligned = false
			}
		}
		if !aligned {
			s.Clock = "one export per rank, and some lack a session start: ranks cannot be put on one timeline"
			d.Warnings = append(d.Warnings, Warning{Code: WarnRanksUnaligned, Message: "per-rank exports without a session start time: arrivals cannot be compared, no stragglers"})
		}
	}
	if s.MultiHost {
		s.Clock += "; ranks ran on different hosts (" + strings.Join(s.Hosts, ", ") + "), whose clock offsets are not corrected: arrival differences include them"
		d.Warnings = append(d.Warnings, Warning{Code: WarnRanksMultiHost, Message: fmt.Sprintf("ranks ran on %d hosts (%s): arrival times compare session clocks of different hosts, offsets not corrected", len(hosts), strings.Join(s.Hosts, ", "))})
	}
	// Arrival clock: raw ns within one export, else Unix ns from the session start.
	base := int64(math.MaxInt64)
	if len(nFiles) > 1 {
		for _, p := range ps {
			base = min(base, p.SessionStartUTC)
		}
	}
	clock = func(p *phases.RankProcess, t int64) int64 {
		if len(nFiles) > 1 {
			return p.SessionStartUTC - base + t
		}
		return t
	}
	return aligned, clock
}

// notOneJob says why the rank processes ps of files are not ranks of one
// job, or "" when they may be: two exports claim the same rank from the
// environment, or an export's timeline (its session start plus its steps'
// span) does not overlap the others'. Two runs of one program compared as
// arms are such inputs: they get no rank view across them.
func notOneJob(files []*FileResult, ps []phases.RankProcess) string {
	byFile := map[string]*FileResult{}
	for _, fr := range files {
		byFile[fr.Path] = fr
	}
	seen := map[int]string{}
	for _, p := range ps {
		if p.EnvRank < 0 {
			continue
		}
		if f, ok := seen[p.EnvRank]; ok && f != p.File {
			return fmt.Sprintf("%s and %s both record rank %d (%s): they are not ranks of one job, so no rank view is built across them; analyse each job's exports together, or compare the runs as arms", f, p.File, p.EnvRank, p.EnvVar)
		}
		seen[p.EnvRank] = p.File
	}
	type span struct {
		file       string
		start, end int64
	}
	var spans []span
	done := map[string]bool{}
	for _, p := range ps {
		fr := byFile[p.File]
		if done[p.File] || fr == nil || p.SessionStartUTC == 0 || fr.Result == nil {
			continue
		}
		done[p.File] = true
		st := fr.Result.InstanceStore()
		if st.Len() == 0 {
			continue
		}
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for i := range st.Len() {
			lo, hi = min(lo, st.Start(i)), max(hi, st.End(i))
		}
		spans = append(spans, span{p.File, p.SessionStartUTC + lo, p.SessionStartUTC + hi})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	for i := 1; i < len(spans); i++ {
		prev := spans[i-1]
		for j := range i {
			if spans[j].end > prev.end {
				prev = spans[j]
			}
		}
		if spans[i].start > prev.end {
			return fmt.Sprintf("%s starts %s after %s ends (session start TARGET_INFO_SESSION_START_TIME plus the steps' span): their timelines do not overlap, so they are not ranks of one job and no rank view is built across them; analyse each job's exports together, or compare the runs as arms",
				spans[i].file, fmtGap(spans[i].start-prev.end), prev.file)
		}
	}
	return ""
}

// fmtGap is a duration for a sentence: "3600.0 s", "12.5 ms".
func fmtGap(ns int64) string {
	if ns >= 1e9 {
		return fmt.Sprintf("%.1f s", float64(ns)/1e9)
	}
	return fmt.Sprintf("%.1f ms", float64(ns)/1e6)
}

func share(num, den int64) *float64 {
	if den <= 0 {
		return nil
	}
	v := float64(num) / float64(den)
	return &v
}

// rankCache is what the rank rows compute once per rank: its depth-1
// spans, and its instances by phase (one pass over a rank's instances, not
// one per phase and arm: a thousand ranks have a million).
type rankCache struct {
	spans   map[int]threadSpans
	byPhase map[int]map[string][]int32
}

// phase is the indices in xs, rank's instances, of phase ph's, ascending.
func (c *rankCache) phase(rank int, xs []rankInst, ph string) []int32 {
	if c.byPhase == nil {
		c.byPhase = map[int]map[string][]int32{}
	}
	m, ok := c.byPhase[rank]
	if !ok {
		m = map[string][]int32{}
		for j := range xs {
			m[xs[j].Phase] = append(m[xs[j].Phase], int32(j))
		}
		c.byPhase[rank] = m
	}
	return m[ph]
}

// rankPhases is each phase's mean wall and NCCL time per rank, and its
// imbalance across ranks.
func rankPhases(ps []phases.RankProcess, byRank map[int][]rankInst, order, arms []string, c *rankCache) []RankPhaseRow {
	var out []RankPhaseRow
	for _, ph := range order {
		for _, arm := range arms {
			out = append(out, rankPhaseArm(ps, byRank, ph, arm, c)...)
		}
	}
	return out
}

// rankPhaseArm is rankPhases for one phase of one arm.
func rankPhaseArm(ps []phases.RankProcess, byRank map[int][]rankInst, ph, arm string, c *rankCache) []RankPhaseRow {
	if c.spans == nil {
		c.spans = map[int]threadSpans{}
	}
	var rows []RankPhaseRow
	for i := range ps {
		p := &ps[i]
		xs := byRank[p.Rank]
		var n, busyN int
		var wall, busy, nccl, expos, other int64
		var own []int // indices of the phase's instances
		for _, j32 := range c.phase(p.Rank, xs, ph) {
			// A row with no wall of its own (another thread without
			// ranges) is no timed instance: it never counts here.
			if j := int(j32); xs[j].Arm == arm && !xs[j].Warmup && !xs[j].WallNull {
				n++
				// the instance's wall metric, not its span: the
				// (unannotated) row spans the step but its wall is the
				// step's time outside every phase
				wall += xs[j].Wall
				if !xs[j].BusyNull {
					busyN++
					busy += xs[j].Busy
				}
				own = append(own, j)
			}
		}
		if n == 0 {
			continue
		}
		phaseSpans, ok := c.spans[p.Rank]
		if !ok {
			phaseSpans = depthOneSpans(xs)
			c.spans[p.Rank] = phaseSpans
		}
		// NCCL kernels whose launching call lies in one of the phase's
		// instances on the instance's thread (both ends included); for
		// the (unannotated) row, outside every phase of the step.
		for _, c := range p.Collectives {
			if c.CallStart < 0 || p.Kind != "nccl" {
				continue
			}
			otherThread := false
			for _, j := range own {
				x := &xs[j]
				if x.Start <= c.CallStart && c.CallStart <= x.End {
					if x.Tid == c.Tid && (x.Phase != phases.Unannotated || !phaseSpans.holds(c.Tid, c.CallStart)) {
						nccl += c.End - c.Start
						expos += c.ExposedNs
						otherThread = false
						break
					}
					otherThread = x.Tid != c.Tid
				}
			}
			if otherThread {
				other += c.End - c.Start
			}
		}
		row := RankPhaseRow{Phase: ph, Arm: arm, Rank: p.Rank, N: n, WallMeanNs: float64(wall) / float64(n),
			NCCLNsMean: float64(nccl) / float64(n), NCCLExposedNsMean: float64(expos) / float64(n), OverlapShare: share(nccl-expos, nccl),
			NCCLOtherThreadNsMean: float64(other) / float64(n)}
		if busyN == n {
			b := float64(busy) / float64(n)
			row.GPUBusyMeanNs = &b
		}
		rows = append(rows, row)
	}
	hi, sum, fastest := 0.0, 0.0, math.Inf(1)
	for _, r := range rows {
		hi = max(hi, r.WallMeanNs)
		sum += r.WallMeanNs
		fastest = min(fastest, r.WallMeanNs)
	}
	for i := range rows {
		if sum > 0 {
			rows[i].Imbalance = hi / (sum / float64(len(rows)))
		}
		if rows[i].WallMeanNs > 0 {
			v := fastest / rows[i].WallMeanNs
			rows[i].RelativeScore = &v
		}
	}
	return rows
}

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
		out.Sentence = fmt.Sprintf("rank %d finishes last in %d of %d steps, a median %s after the next rank; the ends of a step spread by a median %s (mean %s, max %s)",
			r, lastN[top], out.Steps, fmtDur(m), fmtDur(sum.Median), fmtDur(sum.Mean), fmtDur(float64(out.SkewMaxNs)))
	} else {
		out.Sentence = fmt.Sprintf("no straggler: no rank finishes last in more than half of the %d steps; ranks finish each step within %s of each other (median %s)",
			out.Steps, fmtDur(float64(out.SkewMaxNs)), fmtDur(sum.Median))
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

// rankStepKeys identify steps across ranks: the numbered family's label
// when the step has one, else arm, block and the step's index among the
// process's steps of that block (Instance.Step counts the steps of every
// process of the block).
func rankStepKeys(steps []rankInst) []string {
	out := make([]string, len(steps))
	idx := map[string]int{}
	for i := range steps {
		x := &steps[i]
		if x.StepLabel != "" {
			out[i] = x.StepLabel
			continue
		}
		b := fmt.Sprintf("%s block %d", orDash(x.Arm), x.Block)
		out[i] = fmt.Sprintf("%s step %d", b, idx[b])
		idx[b]++
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// collGroup is one rank's collectives under one key: a step's, or one
// collective alone.
type collGroup struct {
	order int
	block string // the step's block (unit) label, which the CIs resample
	wall  int64  // the step's wall; -1 for a collective alone
	arr   []int64
	end   []int64 // each collective's end, beside its arrival
	init  bool    // outside the counted steps (initialisation, warm-up)
}

// collectiveGroups places each rank's collectives in groups: by step
// (bySteps), or each collective alone (matched by order); those of
// initialisation and warm-up are matched by order among themselves. keys
// are in first-seen order; matched counts the keys outside them that every
// rank holds.
func collectiveGroups(ps []phases.RankProcess, byRank map[int][]rankInst, clock func(*phases.RankProcess, int64) int64, haveSteps, bySteps bool) (per []map[string]*collGroup, keys []string, matched int) {
	per = make([]map[string]*collGroup, len(ps))
	seen := map[string]bool{}
	add := func(i int, k string, g *collGroup) *collGroup {
		if per[i][k] == nil {
			per[i][k] = g
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		return per[i][k]
	}
	for i := range ps {
		p := &ps[i]
		per[i] = map[string]*collGroup{}
		var steps []rankInst
		var skeys []string
		if haveSteps {
			steps = stepsOf(byRank[p.Rank])
			skeys = rankStepKeys(steps)
		}
		n, m := 0, 0
		for _, c := range p.Collectives {
			t := c.CallStart
			if t < 0 {
				t = c.Start
			}
			block, init := "run", false
			if haveSteps {
				// the step of the process that holds the launching call
				j, _ := slices.BinarySearchFunc(steps, t, func(x rankInst, t int64) int { return cmp.Compare(x.Start, t+1) })
				inStep := j > 0 && t <= steps[j-1].End
				init = !inStep || steps[j-1].Warmup
				switch {
				case init && bySteps:
					// initialisation or warm-up: outside the counted
					// steps, matched by order among themselves and
					// reported apart from the steady state
					g := add(i, fmt.Sprintf("init collective %d", m), &collGroup{order: m, block: "init", wall: -1, init: true})
					g.arr, g.end = append(g.arr, clock(p, c.Start)), append(g.end, clock(p, c.End))
					m++
					continue
				case bySteps:
					g := add(i, skeys[j-1], &collGroup{order: j - 1, block: steps[j-1].Unit.String(), wall: steps[j-1].End - steps[j-1].Start})
					g.arr, g.end = append(g.arr, clock(p, c.Start)), append(g.end, clock(p, c.End))
					continue
				case init:
					block = "init"
				}
			}
			// Matched by order, every collective keeps its place in the
			// rank's sequence, initialisation or not: a first collective
			// whose call lies just outside one rank's first step (or was
			// not traced) must not shift that rank's sequence against the
			// others'. A collective that is initialisation in any rank is
			// initialisation for all (anyInit).
			g := add(i, fmt.Sprintf("collective %d", n), &collGroup{order: n, block: block, wall: -1, init: init})
			g.arr, g.end = append(g.arr, clock(p, c.Start)), append(g.end, clock(p, c.End))
			n++
		}
	}
	for _, k := range keys {
		gs := make([]*collGroup, len(per))
		all := true
		for i := range per {
			gs[i] = per[i][k]
			all = all && gs[i] != nil
		}
		if all && !anyInit(gs) {
			matched++
		}
	}
	return per, keys, matched
}

// anyInit reports whether any rank's group of a key is initialisation.
func anyInit(gs []*collGroup) bool {
	return slices.ContainsFunc(gs, func(g *collGroup) bool { return g != nil && g.init })
}

// stragglerSeries are what the matched steps give, per rank: the series
// the CIs resample and the sums the means divide.
type stragglerSeries struct {
	lateness, strag     [][]float64 // per rank and matched step: lateness (ns), 1 when it was last
	blocks              []string    // per matched step: its block, the unit the CIs resample
	waitSum, afterSum   []int64     // per rank, over the matched steps
	initLate            []int64     // per rank, over the initialisation collectives
	initN, uneven, step int         // initialisation collectives, steps with uneven counts, matched steps
}

// stragglers matches the ranks' steps (or, without steps, their
// collectives by order), finds who arrives last, and summarizes per rank
// with the block bootstrap over consecutive steps.
func (d *Doc) stragglers(s *RanksSection, ps []phases.RankProcess, byRank map[int][]rankInst, clock func(*phases.RankProcess, int64) int64, o *Options) {
	haveSteps := true
	for i := range ps {
		if len(stepsOf(byRank[ps[i].Rank])) == 0 {
			haveSteps = false
		}
	}
	per, keys, matched := collectiveGroups(ps, byRank, clock, haveSteps, haveSteps)
	if haveSteps && matched >= minStragglerSteps {
		s.Matching = "steps matched by step number (numbered families) or by arm, block and step index; within a step, collectives matched by order"
		s.Settings.Unit = "step"
	} else {
		per, keys, _ = collectiveGroups(ps, byRank, clock, haveSteps, false)
		s.Matching = fmt.Sprintf("collectives matched by order (%d matched steps hold collectives, fewer than %d)", matched, minStragglerSteps)
		if !haveSteps {
			s.Matching = "collectives matched by order (not every rank has steps)"
		}
		s.Settings.Unit = "collective"
	}
	ser := &stragglerSeries{lateness: make([][]float64, len(ps)), strag: make([][]float64, len(ps)),
		waitSum: make([]int64, len(ps)), afterSum: make([]int64, len(ps)), initLate: make([]int64, len(ps))}
	for _, k := range keys {
		gs := make([]*collGroup, len(ps))
		n := math.MaxInt
		for i := range ps {
			gs[i] = per[i][k]
			if gs[i] == nil {
				n = 0
				break
			}
			n = min(n, len(gs[i].arr))
		}
		if n == 0 {
			continue
		}
		if anyInit(gs) {
			ser.addInit(gs, n)
			continue
		}
		s.addStragglerStep(ser, ps, gs, k, n)
	}
	s.Settings.Steps = ser.step
	s.Settings.InitCollectives = ser.initN
	for i := range ps {
		s.Ranks[i].InitLatenessNs = ser.initLate[i]
	}
	s.Settings.Confidence, s.Settings.Resamples, s.Settings.Seed = d.Settings.Confidence, d.Settings.Resamples, d.Settings.Seed
	if ser.uneven > 0 {
		d.Warnings = append(d.Warnings, Warning{Code: WarnCollectiveCounts, Message: fmt.Sprintf("in %d of %d matched steps the ranks ran different numbers of collectives: the first ones of each rank were matched", ser.uneven, ser.step)})
	}
	if ser.step == 0 {
		return
	}
	for i := range ps {
		n := 0
		for _, v := range ser.strag[i] {
			n += int(v)
		}
		s.Ranks[i].StragglerSteps = n
		s.Ranks[i].StragglerShare = share(int64(n), int64(ser.step))
		sum := stats.Summarize(ser.lateness[i])
		m, med := sum.Mean, sum.Median
		s.Ranks[i].LatenessMeanNs, s.Ranks[i].LatenessMedianNs = &m, &med
		w := float64(ser.waitSum[i]) / float64(ser.step)
		s.Ranks[i].WaitMeanNs = &w
		a := float64(ser.afterSum[i]) / float64(ser.step)
		s.Ranks[i].AfterLastMeanNs = &a
		s.Ranks[i].Method = stats.MethodNone
	}
	if o.NoStats {
		return
	}
	d.stragglerCIs(s, ps, ser, o)
}

// addInit adds n initialisation collectives of every rank (gs): each
// rank's arrival after the first.
func (ser *stragglerSeries) addInit(gs []*collGroup, n int) {
	for c := range n {
		lo := int64(math.MaxInt64)
		for i := range gs {
			lo = min(lo, gs[i].arr[c])
		}
		for i := range gs {
			ser.initLate[i] += gs[i].arr[c] - lo
		}
	}
	ser.initN += n
}

// addStragglerStep adds the matched step k (the first n collectives of
// every rank, gs): per rank its lateness after the first arrival, its wait
// for the last and its time after the last arrived, and who was last.
func (s *RanksSection) addStragglerStep(ser *stragglerSeries, ps []phases.RankProcess, gs []*collGroup, k string, n int) {
	for i := range gs {
		if len(gs[i].arr) != n {
			ser.uneven++
			break
		}
	}
	late, wait := make([]int64, len(ps)), make([]int64, len(ps))
	var skew int64
	for c := range n {
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for i := range gs {
			lo, hi = min(lo, gs[i].arr[c]), max(hi, gs[i].arr[c])
		}
		skew += hi - lo
		for i := range gs {
			late[i] += gs[i].arr[c] - lo
			wait[i] += hi - gs[i].arr[c]
			// the time in the collective once the last rank arrived:
			// the transfer itself, apart from the wait before it
			ser.afterSum[i] += max(0, gs[i].end[c]-hi)
		}
	}
	last := 0
	for i := range late {
		if late[i] > late[last] {
			last = i
		}
	}
	for i := range ps {
		var wall *int64
		if gs[i].wall >= 0 {
			wall = &gs[i].wall
		}
		s.Steps = append(s.Steps, StragglerStep{Step: ser.step, Label: k, Rank: ps[i].Rank, Collectives: n, ArrivalNs: gs[i].arr[0], StepWallNs: wall,
			LatenessNs: late[i], Straggler: i == last, SkewNs: skew, WaitNs: wait[i]})
		ser.waitSum[i] += wait[i]
		ser.lateness[i] = append(ser.lateness[i], float64(late[i]))
		if i == 0 {
			ser.blocks = append(ser.blocks, gs[0].block)
		}
		ser.strag[i] = append(ser.strag[i], float64(b2i(i == last)))
	}
	ser.step++
}

// stragglerCIs are the per-rank CIs of lateness and of the straggler
// share: each rank is an "arm" whose units are the blocks of its steps
// (arm blocks, else the run): consecutive steps stay together, so their
// autocorrelation is kept (docs/statistics.md §3–4; one block gives the
// within-run batch CI of §4c).
func (d *Doc) stragglerCIs(s *RanksSection, ps []phases.RankProcess, ser *stragglerSeries, o *Options) {
	blocks := ser.blocks
	var units []stats.Unit
	for i := range ps {
		arm := fmt.Sprintf("rank %d", ps[i].Rank)
		for _, r := range blockRuns(blocks) {
			lo, hi := r[0], r[1]
			units = append(units, stats.Unit{ID: arm + " " + blocks[lo], Arm: arm, Profile: ps[i].File, Start: int64(lo),
				Steps: [][]float64{ser.lateness[i][lo:hi], ser.strag[i][lo:hi]}})
		}
	}
	res, err := stats.Analyze("stragglers", []string{"lateness_ns", "straggler"}, units,
		o.statsOptions("", []int{0}, false))
	if err != nil {
		d.Warnings = append(d.Warnings, Warning{Code: "straggler_ci", Message: "straggler CIs not computed: " + err.Error()})
		return
	}
	for _, a := range res.Arms {
		for i := range ps {
			if a.Arm != fmt.Sprintf("rank %d", ps[i].Rank) {
				continue
			}
			row := &s.Ranks[i]
			row.Method = a.Method
			for _, m := range a.Metrics {
				switch m.Metric {
				case "lateness_ns":
					row.LatenessCI, row.Diagnostics = m.MeanCI, m.Diagnostics
				case "straggler":
					if c := m.MeanCI; c != nil { // a share: the log-scale CI may pass 1
						row.StragglerShareCI = &[2]float64{max(0, c[0]), min(1, c[1])}
					}
				}
			}
		}
	}
}

// rankInst is what the rank view reads of an instance (a sixth of
// phases.Instance: a thousand ranks' instances are held at once).
type rankInst struct {
	File, Phase, Arm, StepLabel string
	Unit                        phases.UnitID
	Tid, Start, End             int64
	Wall, Busy                  int64 // wall_ns, gpu_busy_ns
	Block, Depth                int
	IsStep, Warmup, OtherThread bool
	BusyNull                    bool // gpu_busy_ns not measured
	WallNull                    bool // no wall of its own (another thread without ranges)
}

// slimAt is instance i of st as the rank view reads it.
func slimAt(st *phases.Store, i int) rankInst {
	null := st.Null(i)
	return rankInst{File: st.File(i), Phase: st.Phase(i), Arm: st.Arm(i), StepLabel: st.StepLabel(i), Unit: st.Unit(i), Tid: st.Tid(i),
		Start: st.Start(i), End: st.End(i), Wall: st.Metric(i, phases.Wall), Busy: st.Metric(i, phases.GPUBusy), Block: st.Block(i), Depth: st.Depth(i),
		IsStep: st.IsStep(i), Warmup: st.Warmup(i), OtherThread: st.OtherThread(i),
		BusyNull: null&(1<<uint(phases.GPUBusy)) != 0, WallNull: null&(1<<uint(phases.Wall)) != 0}
}

// threadSpans are, per thread, the spans of a rank's depth-1 phases on
// the step's own thread ((unannotated) and other threads' rows left out),
// in start order, each with the largest end up to it.
type threadSpans map[int64][][3]int64

func depthOneSpans(xs []rankInst) threadSpans {
	out := threadSpans{}
	for i := range xs {
		x := &xs[i]
		if x.Depth == 1 && !x.OtherThread && x.Phase != phases.Unannotated {
			out[x.Tid] = append(out[x.Tid], [3]int64{x.Start, x.End})
		}
	}
	for _, ss := range out {
		slices.SortFunc(ss, func(a, b [3]int64) int { return cmp.Compare(a[0], b[0]) })
		hi := int64(math.MinInt64)
		for k := range ss {
			hi = max(hi, ss[k][1])
			ss[k][2] = hi
		}
	}
	return out
}

// holds reports whether t lies in one of tid's spans (both ends
// included): some span starting at or before t ends at or after it.
func (ts threadSpans) holds(tid, t int64) bool {
	ss := ts[tid]
	j, _ := slices.BinarySearchFunc(ss, t, func(s [3]int64, t int64) int { return cmp.Compare(s[0], t+1) })
	return j > 0 && ss[j-1][2] >= t
}

// stepsOf is the step instances of xs in start order.
func stepsOf(xs []rankInst) []rankInst {
	var out []rankInst
	for _, x := range xs {
		if x.IsStep {
			out = append(out, x)
		}
	}
	slices.SortStableFunc(out, func(a, b rankInst) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

// rankComparisons compares the arms on each rank: per phase, the mean wall
// of the rank's kept instances, with the same statistics as the arms'
// comparisons (units = the rank's blocks, never single steps).
func (d *Doc) rankComparisons(ps []phases.RankProcess, byRank map[int][]rankInst, o *Options, c *rankCache) []RankComparison {
	out := []RankComparison{}
	if o.NoStats || len(d.Arms) < 2 {
		return out
	}
	for _, ph := range d.Phases {
		for i := range ps {
			var units []stats.Unit
			at := map[phases.UnitID]int{}
			xs := byRank[ps[i].Rank]
			for _, j := range c.phase(ps[i].Rank, xs, ph) {
				x := &xs[j]
				if x.Warmup || x.WallNull {
					continue
				}
				k, ok := at[x.Unit]
				if !ok {
					k = len(units)
					at[x.Unit] = k
					units = append(units, stats.Unit{ID: x.Unit.String(), Arm: x.Arm, Profile: x.File, Start: d.unitStart[x.Unit], Steps: [][]float64{nil}})
				}
				units[k].Steps[0] = append(units[k].Steps[0], float64(x.Wall))
			}
			base := d.Baseline
			if !slices.ContainsFunc(units, func(u stats.Unit) bool { return u.Arm == base }) || len(units) == 0 {
				continue
			}
			res, err := stats.Analyze(fmt.Sprintf("%s rank %d", ph, ps[i].Rank), []string{phases.Wall.Name()}, units,
				o.statsOptions(base, []int{}, false))
			if err != nil {
				continue
			}
			for _, c := range res.Comparisons {
				if c.Stat != stats.StatMean {
					continue
				}
				out = append(out, RankComparison{Phase: ph, Rank: ps[i].Rank, Baseline: c.Baseline, Arm: c.Arm, BaseMeanNs: c.BaselineValue, ArmMeanNs: c.ArmValue,
					RatioEstimate: c.RatioEstimate, Verdict: c.Verdict, Method: c.Method, NUnits: c.NUnits})
			}
		}
	}
	return out
}

// manifestRanks reads the run manifest's ranks list, each entry with its
// "rank" and "pid" (entries without both are ignored): pid → rank.
func manifestRanks(m map[string]any) map[int64]int {
	list, _ := m["ranks"].([]any)
	out := map[int64]int{}
	for _, e := range list {
		em, _ := e.(map[string]any)
		r, okR := em["rank"].(float64)
		p, okP := em["pid"].(float64)
		if okR && okP && r >= 0 && r == math.Trunc(r) && p == math.Trunc(p) {
			out[int64(p)] = int(r)
		}
	}
	return out
}
