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
	// matched collectives whose ranks ran different operations
	WarnCollectivesMismatched = "collectives_mismatched"
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
	// their mean walls (the same on every row of the phase); null when
	// every rank's wall is 0 (no ratio exists, and 0 would read "balanced").
	Imbalance *float64 `json:"imbalance_max_over_mean"`
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
