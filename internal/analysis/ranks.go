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
}

// StragglerSettings records how the straggler CIs were computed.
type StragglerSettings struct {
	Unit       string  `json:"unit"`  // what one straggler sample is (a step, or a collective)
	Steps      int     `json:"steps"` // samples matched across every rank
	Confidence float64 `json:"confidence"`
	Resamples  int     `json:"resamples"`
	Seed       uint64  `json:"seed"`
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
	// WaitMeanNs is the mean per step of the rank's wait inside the
	// collectives for the last rank (StragglerStep.WaitNs).
	WaitMeanNs  *float64           `json:"wait_mean_ns"`
	LatenessCI  *[2]float64        `json:"lateness_mean_ci"`
	Method      string             `json:"method"`
	Diagnostics *stats.Diagnostics `json:"lateness_diagnostics,omitempty"`
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
	// NCCL kernels launched from inside the phase's instances (their host
	// call on the instance's thread inside it), per instance.
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
	Phase      string        `json:"phase"`
	Rank       int           `json:"rank"`
	Baseline   string        `json:"baseline"`
	Arm        string        `json:"arm"`
	BaseMeanNs float64       `json:"baseline_mean_ns"`
	ArmMeanNs  float64       `json:"arm_mean_ns"`
	Ratio      *float64      `json:"ratio"`
	RatioCI    *[2]float64   `json:"ratio_ci"`
	Verdict    stats.Verdict `json:"verdict"` // as in comparisons; VerdictNone without a between-block CI
	Method     string        `json:"method"`
	NUnits     int           `json:"n_units"`
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
func (d *Doc) buildRanks(files []*FileResult, sc StatsConfig) {
	// Every export's rank processes travel in its dataset even when it
	// holds one rank (one export per rank, one job per export): --from
	// over the jobs' datasets then finds the ranks together.
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
	if len(ps) < 2 {
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
	st := d.instances
	for i := range st.Len() {
		if r, ok := rankOf[rankRef{st.File(i), st.Pid(i)}]; ok {
			st.SetRank(i, r)
		}
	}
	s.Source = strings.Join(slices.Sorted(maps.Keys(sources)), "; ")
	s.Hosts = slices.Sorted(maps.Keys(hosts))
	s.MultiHost = len(hosts) > 1
	switch {
	case kinds["nccl"] && kinds["mpi"]:
		s.Collectives = "NCCL kernels (GPU start) where a rank ran them, else traced MPI collective calls (host start)"
	case kinds["nccl"]:
		s.Collectives = "NCCL kernels: a rank arrives when its kernel starts on its GPU"
	default:
		s.Collectives = "traced MPI collective calls: a rank arrives when its call starts on the host"
	}
	aligned := true
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
	clock := func(p *phases.RankProcess, t int64) int64 {
		if len(nFiles) > 1 {
			return p.SessionStartUTC - base + t
		}
		return t
	}
	// Steps and phases of each rank, warm-up ones included: step keys count
	// them, and each use leaves them out.
	byRank := map[int][]phases.Instance{}
	for _, fr := range files {
		st := fr.Result.InstanceStore()
		for i := range st.Len() {
			if r, ok := rankOf[rankRef{fr.Path, st.Pid(i)}]; ok {
				byRank[r] = append(byRank[r], st.At(i))
			}
		}
	}
	for r, xs := range byRank {
		byRank[r] = rankWarmup(xs, d.Settings.SkipSteps)
	}
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
	s.Phases = rankPhases(ps, byRank, d.Phases, arms)
	if aligned {
		d.stragglers(s, ps, byRank, clock, sc)
	}
	s.Comparisons = d.rankComparisons(ps, byRank, sc)
	if s.Phases == nil {
		s.Phases = []RankPhaseRow{}
	}
	if s.Steps == nil {
		s.Steps = []StragglerStep{}
	}
	d.Ranks = s
}

func share(num, den int64) *float64 {
	if den <= 0 {
		return nil
	}
	v := float64(num) / float64(den)
	return &v
}

// rankPhases is each phase's mean wall and NCCL time per rank, and its
// imbalance across ranks.
func rankPhases(ps []phases.RankProcess, byRank map[int][]phases.Instance, order, arms []string) []RankPhaseRow {
	var out []RankPhaseRow
	for _, ph := range order {
		for _, arm := range arms {
			out = append(out, rankPhaseArm(ps, byRank, ph, arm)...)
		}
	}
	return out
}

// rankPhaseArm is rankPhases for one phase of one arm.
func rankPhaseArm(ps []phases.RankProcess, byRank map[int][]phases.Instance, ph, arm string) []RankPhaseRow {
	var rows []RankPhaseRow
	for i := range ps {
		p := &ps[i]
		xs := byRank[p.Rank]
		var n int
		var wall, nccl, expos, other int64
		var own []int // indices of the phase's instances
		for j := range xs {
			if xs[j].Phase == ph && xs[j].Arm == arm && !xs[j].Warmup {
				n++
				wall += xs[j].End - xs[j].Start
				own = append(own, j)
			}
		}
		if n == 0 {
			continue
		}
		// NCCL kernels whose launching call lies in one of the phase's
		// instances on the instance's thread (both ends included).
		for _, c := range p.Collectives {
			if c.CallStart < 0 || p.Kind != "nccl" {
				continue
			}
			otherThread := false
			for _, j := range own {
				x := &xs[j]
				if x.Start <= c.CallStart && c.CallStart <= x.End {
					if x.Tid == c.Tid {
						nccl += c.End - c.Start
						expos += c.ExposedNs
						otherThread = false
						break
					}
					otherThread = true
				}
			}
			if otherThread {
				other += c.End - c.Start
			}
		}
		rows = append(rows, RankPhaseRow{Phase: ph, Arm: arm, Rank: p.Rank, N: n, WallMeanNs: float64(wall) / float64(n),
			NCCLNsMean: float64(nccl) / float64(n), NCCLExposedNsMean: float64(expos) / float64(n), OverlapShare: share(nccl-expos, nccl),
			NCCLOtherThreadNsMean: float64(other) / float64(n)})
	}
	hi, sum := 0.0, 0.0
	for _, r := range rows {
		hi = max(hi, r.WallMeanNs)
		sum += r.WallMeanNs
	}
	for i := range rows {
		if sum > 0 {
			rows[i].Imbalance = hi / (sum / float64(len(rows)))
		}
	}
	return rows
}

// rankStepKeys identify steps across ranks: the numbered family's label
// when the step has one, else arm, block and the step's index among the
// process's steps of that block (Instance.Step counts the steps of every
// process of the block).
func rankStepKeys(steps []phases.Instance) []string {
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

// stragglers matches the ranks' steps (or, without steps, their
// collectives by order), finds who arrives last, and summarizes per rank
// with the block bootstrap over consecutive steps.
func (d *Doc) stragglers(s *RanksSection, ps []phases.RankProcess, byRank map[int][]phases.Instance, clock func(*phases.RankProcess, int64) int64, sc StatsConfig) {
	// Each rank's collectives grouped by step key.
	type group struct {
		order int
		block string // the step's block (unit) label, which the CIs resample
		wall  int64  // the step's wall; -1 for a collective alone
		arr   []int64
	}
	haveSteps := true
	for i := range ps {
		if len(stepsOf(byRank[ps[i].Rank])) == 0 {
			haveSteps = false
		}
	}
	// groupBy places each rank's collectives in groups: by step, or each
	// collective alone (matched by order, warm-up steps' ones left out).
	groupBy := func(bySteps bool) (per []map[string]*group, keys []string, matched int) {
		per = make([]map[string]*group, len(ps))
		seen := map[string]bool{}
		add := func(i int, k string, g *group) *group {
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
			per[i] = map[string]*group{}
			var steps []phases.Instance
			var skeys []string
			if haveSteps {
				steps = stepsOf(byRank[p.Rank])
				skeys = rankStepKeys(steps)
			}
			n := 0
			for _, c := range p.Collectives {
				t := c.CallStart
				if t < 0 {
					t = c.Start
				}
				block := "run"
				if haveSteps {
					// the step of the process that holds the launching call
					j, _ := slices.BinarySearchFunc(steps, t, func(x phases.Instance, t int64) int { return cmp.Compare(x.Start, t+1) })
					inStep := j > 0 && t <= steps[j-1].End
					if inStep && steps[j-1].Warmup {
						continue
					}
					if bySteps {
						if !inStep {
							continue
						}
						g := add(i, skeys[j-1], &group{order: j - 1, block: steps[j-1].Unit.String(), wall: steps[j-1].End - steps[j-1].Start})
						g.arr = append(g.arr, clock(p, c.Start))
						continue
					}
				}
				g := add(i, fmt.Sprintf("collective %d", n), &group{order: n, block: block, wall: -1})
				g.arr = append(g.arr, clock(p, c.Start))
				n++
			}
		}
		for _, k := range keys {
			all := true
			for i := range per {
				all = all && per[i][k] != nil
			}
			if all {
				matched++
			}
		}
		return per, keys, matched
	}
	per, keys, matched := groupBy(haveSteps)
	if haveSteps && matched >= minStragglerSteps {
		s.Matching = "steps matched by step number (numbered families) or by arm, block and step index; within a step, collectives matched by order"
		s.Settings.Unit = "step"
	} else {
		per, keys, _ = groupBy(false)
		s.Matching = fmt.Sprintf("collectives matched by order (%d matched steps hold collectives, fewer than %d)", matched, minStragglerSteps)
		if !haveSteps {
			s.Matching = "collectives matched by order (not every rank has steps)"
		}
		s.Settings.Unit = "collective"
	}
	lateness := make([][]float64, len(ps))
	strag := make([][]float64, len(ps))
	var blocks []string // per matched step
	waitSum := make([]int64, len(ps))
	uneven := 0
	step := 0
	for _, k := range keys {
		gs := make([]*group, len(ps))
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
		for i := range gs {
			if len(gs[i].arr) != n {
				uneven++
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
			s.Steps = append(s.Steps, StragglerStep{Step: step, Label: k, Rank: ps[i].Rank, Collectives: n, ArrivalNs: gs[i].arr[0], StepWallNs: wall,
				LatenessNs: late[i], Straggler: i == last, SkewNs: skew, WaitNs: wait[i]})
			waitSum[i] += wait[i]
			lateness[i] = append(lateness[i], float64(late[i]))
			if i == 0 {
				blocks = append(blocks, gs[0].block)
			}
			strag[i] = append(strag[i], float64(b2i(i == last)))
		}
		step++
	}
	s.Settings.Steps = step
	s.Settings.Confidence, s.Settings.Resamples, s.Settings.Seed = d.Settings.Confidence, d.Settings.Resamples, d.Settings.Seed
	if uneven > 0 {
		d.Warnings = append(d.Warnings, Warning{Code: WarnCollectiveCounts, Message: fmt.Sprintf("in %d of %d matched steps the ranks ran different numbers of collectives: the first ones of each rank were matched", uneven, step)})
	}
	if step == 0 {
		return
	}
	for i := range ps {
		n := 0
		for _, v := range strag[i] {
			n += int(v)
		}
		s.Ranks[i].StragglerSteps = n
		s.Ranks[i].StragglerShare = share(int64(n), int64(step))
		m := stats.Summarize(lateness[i]).Mean
		s.Ranks[i].LatenessMeanNs = &m
		w := float64(waitSum[i]) / float64(step)
		s.Ranks[i].WaitMeanNs = &w
		s.Ranks[i].Method = stats.MethodNone
	}
	if sc.Off {
		return
	}
	// CIs: each rank is an "arm" whose units are the blocks of its steps
	// (arm blocks, else the run): consecutive steps stay together, so their
	// autocorrelation is kept (docs/statistics.md §3–4; one block gives
	// the within-run batch CI of §4c).
	var units []stats.Unit
	for i := range ps {
		arm := fmt.Sprintf("rank %d", ps[i].Rank)
		for lo := 0; lo < len(blocks); {
			hi := lo
			for hi < len(blocks) && blocks[hi] == blocks[lo] {
				hi++
			}
			units = append(units, stats.Unit{ID: arm + " " + blocks[lo], Arm: arm, Profile: ps[i].File, Start: int64(lo),
				Steps: [][]float64{lateness[i][lo:hi], strag[i][lo:hi]}})
			lo = hi
		}
	}
	res, err := stats.Analyze("stragglers", []string{"lateness_ns", "straggler"}, units,
		stats.Options{Confidence: sc.Confidence, Resamples: sc.Resamples, Seed: sc.Seed, QuantileMetrics: []int{0}})
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

// rankWarmup marks warm-up per rank: the first skip steps of each block
// of the rank's own steps (segmentation counts --skip-steps over every
// process of a block, so on one export of two ranks only the first
// process's first step was left out), and the phases inside them. xs are
// copies: the document's instances keep their flags.
func rankWarmup(xs []phases.Instance, skip int) []phases.Instance {
	idx := make([]int, 0, len(xs))
	for i := range xs {
		if xs[i].IsStep {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(xs[a].Start, xs[b].Start) })
	n, total := map[string]int{}, map[string]int{}
	key := func(x *phases.Instance) string { return fmt.Sprintf("%s\x00%d", x.Arm, x.Block) }
	for _, i := range idx {
		total[key(&xs[i])]++
	}
	for _, i := range idx {
		b := key(&xs[i])
		// a block of no more than skip steps keeps them all (a whole-process
		// pseudo-step, say), as nothing else would be left
		xs[i].Warmup = n[b] < skip && total[b] > skip
		n[b]++
	}
	for i := range xs {
		x := &xs[i]
		if x.IsStep {
			continue
		}
		// the step that contains the phase: the last step starting at or before it
		j, _ := slices.BinarySearchFunc(idx, x.Start, func(k int, t int64) int { return cmp.Compare(xs[k].Start, t+1) })
		x.Warmup = j == 0 || x.Start > xs[idx[j-1]].End || xs[idx[j-1]].Warmup
	}
	return xs
}

// stepsOf is the step instances of xs in start order.
func stepsOf(xs []phases.Instance) []phases.Instance {
	var out []phases.Instance
	for _, x := range xs {
		if x.IsStep {
			out = append(out, x)
		}
	}
	slices.SortStableFunc(out, func(a, b phases.Instance) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

// rankComparisons compares the arms on each rank: per phase, the mean wall
// of the rank's kept instances, with the same statistics as the arms'
// comparisons (units = the rank's blocks, never single steps).
func (d *Doc) rankComparisons(ps []phases.RankProcess, byRank map[int][]phases.Instance, sc StatsConfig) []RankComparison {
	out := []RankComparison{}
	if sc.Off || len(d.Arms) < 2 {
		return out
	}
	for _, ph := range d.Phases {
		for i := range ps {
			var units []stats.Unit
			at := map[phases.UnitID]int{}
			for _, x := range byRank[ps[i].Rank] {
				if x.Phase != ph || x.Warmup {
					continue
				}
				k, ok := at[x.Unit]
				if !ok {
					k = len(units)
					at[x.Unit] = k
					units = append(units, stats.Unit{ID: x.Unit.String(), Arm: x.Arm, Profile: x.File, Start: d.unitStart[x.Unit], Steps: [][]float64{nil}})
				}
				units[k].Steps[0] = append(units[k].Steps[0], float64(x.End-x.Start))
			}
			base := d.Baseline
			if !slices.ContainsFunc(units, func(u stats.Unit) bool { return u.Arm == base }) || len(units) == 0 {
				continue
			}
			res, err := stats.Analyze(fmt.Sprintf("%s rank %d", ph, ps[i].Rank), []string{phases.Wall.Name()}, units,
				stats.Options{Confidence: sc.Confidence, Resamples: sc.Resamples, Seed: sc.Seed, Baseline: base, QuantileMetrics: []int{}})
			if err != nil {
				continue
			}
			for _, c := range res.Comparisons {
				if c.Stat != stats.StatMean {
					continue
				}
				out = append(out, RankComparison{Phase: ph, Rank: ps[i].Rank, Baseline: c.Baseline, Arm: c.Arm, BaseMeanNs: c.BaselineValue, ArmMeanNs: c.ArmValue,
					Ratio: c.Ratio, RatioCI: c.RatioCI, Verdict: c.Verdict, Method: c.Method, NUnits: c.NUnits})
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
