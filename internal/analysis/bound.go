package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// What capture does to each phase of the region, per arm.
const (
	CaptureRemovable = "removable"        // launches GPU work, no blocker: its host time goes
	CaptureNoLaunch  = "launches_nothing" // no kernel or graph launch, device-to-device copy or memset: its host work stays
	CaptureBlocked   = "blocked"          // launches GPU work but holds a blocker: stays until it is fixed
)

// ReplayConstantNs is the host time of one cudaGraphLaunch assumed when the
// inputs hold none to measure: 20 µs, below every per-launch mean measured
// on the bundled graph exports (27.1 µs in eager_graph_small, 72.8 µs in
// interleaved_graph: H200, CUDA 13, nsys 2025.3), so the bound it enters
// stays an upper bound on the saving.
const ReplayConstantNs int64 = 20_000

// Replay sources.
const (
	ReplayMeasured = "measured" // the mean of the inputs' own cudaGraphLaunch calls
	ReplayConstant = "constant" // ReplayConstantNs: the inputs launch no graph
)

// BoundDefinition says exactly what the bounded saving is.
const BoundDefinition = "removable_ns per kept step = max(0, min(host_ns, step wall_ns − gpu_floor_ns) − replay_ns), 0 in a step without removable host time. " +
	"host_ns = launch_ns + cpu_other_ns + memcpy_api_ns + other_api_ns of the region's phases that enqueue GPU work a graph records (kernel or graph launches, device-to-device copies, memsets, on their thread or another thread of the process) and hold no capture blocker: " +
	"kernel launches, Python/framework dispatch, copy and memset enqueues and the other API calls a graph replay no longer makes. " +
	"gpu_floor_ns = max(step gpu_busy_ns, step wall_ns − gpu_idle_ns − other_process_gpu_ns): the process's own GPU time during the step, which a captured step still waits for. " +
	"replay_ns = graphs per step (runs of consecutive removable phases) × the host time of one cudaGraphLaunch (the mean of the inputs' own calls, else a 20 µs constant). " +
	"Phases that launch nothing keep their host time (no_launch_host_ns); blocked phases keep theirs until the blocker is fixed (blocked_host_ns, removable_if_fixed_ns)"

// boundMetrics are the per-step series of the bounded saving, in stats
// metric order; one host_ns series per region phase follows them.
var boundMetrics = []string{"removable_ns", "host_ns", "launch_ns", "cpu_other_ns", "memcpy_api_ns", "other_api_ns",
	"gpu_floor_ns", "ceiling_ns", "no_launch_host_ns", "blocked_host_ns", "removable_if_fixed_ns", "step_wall_ns"}

const (
	bRemovable = iota
	bHost
	bLaunch
	bCPUOther
	bMemcpy
	bOtherAPI
	bFloor
	bCeiling
	bNoLaunch
	bBlocked
	bIfFixed
	bWall
	bPhases // first per-phase series
)

// ReplayCost is the host time a captured step spends launching its graphs.
type ReplayCost struct {
	Source          string `json:"source"`            // measured or constant
	PerLaunchNs     int64  `json:"per_launch_ns"`     // one cudaGraphLaunch: mean host time (integer ns), or the constant
	Calls           int    `json:"calls"`             // cudaGraphLaunch calls measured inside the inputs' steps; 0 for the constant
	MedianNs        *int64 `json:"median_ns"`         // of those calls; null for the constant
	MinNs           *int64 `json:"min_ns"`            // null for the constant
	MaxNs           *int64 `json:"max_ns"`            // null for the constant
	LaunchesPerStep int    `json:"launches_per_step"` // graphs per step: runs of consecutive removable phases in step order
	PerStepNs       int64  `json:"per_step_ns"`       // launches_per_step × per_launch_ns
	IfFixedLaunches int    `json:"if_fixed_launches_per_step"`
}

// CapturePhase is what capture does to one phase of the region in one arm.
type CapturePhase struct {
	Phase           string   `json:"phase"`
	Status          string   `json:"status"`            // removable, launches_nothing or blocked
	LaunchesPerStep float64  `json:"launches_per_step"` // kernel and graph launches, device-to-device copies and memsets on its thread (what capture records) + GPU ops launched by other threads, per kept step
	HostNs          Estimate `json:"host_ns"`           // launch + cpu_other + memcpy_api + other_api per kept step (0 in a step without the phase)
	Blockers        []string `json:"blockers"`          // kinds of its blockers in this arm
}

// CaptureBound is the bounded saving of one arm: what capturing the region
// removes per step, with its parts.
type CaptureBound struct {
	RemovableNs        Estimate       `json:"removable_ns"`
	RemovableShare     Share          `json:"removable_share_of_step_wall"` // Σ removable_ns / Σ step wall_ns over the kept steps
	HostNs             Estimate       `json:"host_ns"`
	LaunchNs           Estimate       `json:"launch_ns"`
	CPUOtherNs         Estimate       `json:"cpu_other_ns"`
	MemcpyAPINs        Estimate       `json:"memcpy_api_ns"`
	OtherAPINs         Estimate       `json:"other_api_ns"`
	GPUFloorNs         Estimate       `json:"gpu_floor_ns"`
	CeilingNs          Estimate       `json:"ceiling_ns"` // step wall − gpu floor − replay
	NoLaunchHostNs     Estimate       `json:"no_launch_host_ns"`
	BlockedHostNs      Estimate       `json:"blocked_host_ns"`
	RemovableIfFixedNs Estimate       `json:"removable_if_fixed_ns"` // the bound with the blocked phases' host time counted, fewer graphs per step if they join runs
	StepWallNs         Estimate       `json:"step_wall_ns"`
	Replay             ReplayCost     `json:"replay"`
	Steps              int            `json:"steps"`         // kept steps behind the estimates
	Units              int            `json:"units"`         // blocks or profiles they come from
	CeilingSteps       int            `json:"ceiling_steps"` // kept steps in which the ceiling, not host_ns − replay, set removable_ns
	Phases             []CapturePhase `json:"phases"`
}

// measureReplay is the host time of the inputs' own cudaGraphLaunch calls
// (every one recorded inside a step, any arm), or the constant without any.
func measureReplay(files []*FileResult) ReplayCost {
	var durs []int64
	for _, fr := range files {
		for _, c := range fr.Result.Calls {
			if c.Is(phases.CallGraph) {
				durs = append(durs, c.Dur)
			}
		}
	}
	if len(durs) == 0 {
		return ReplayCost{Source: ReplayConstant, PerLaunchNs: ReplayConstantNs}
	}
	slices.Sort(durs)
	var sum int64
	for _, d := range durs {
		sum += d
	}
	med := durs[len(durs)/2]
	if len(durs)%2 == 0 {
		med = (durs[len(durs)/2-1] + durs[len(durs)/2]) / 2
	}
	lo, hi := durs[0], durs[len(durs)-1]
	return ReplayCost{Source: ReplayMeasured, PerLaunchNs: sum / int64(len(durs)), Calls: len(durs), MedianNs: &med, MinNs: &lo, MaxNs: &hi}
}

// graphRuns counts the runs of consecutive phases for which capture(phase)
// holds, over the arm's phases in step order: one graph launch each.
func graphRuns(order []string, capture func(string) bool) int {
	runs, in := 0, false
	for _, p := range order {
		c := capture(p)
		if c && !in {
			runs++
		}
		in = c
	}
	return runs
}

// captureKey names one phase of one arm.
type captureKey struct{ arm, phase string }

// captureClasses is what capture does to each region phase of each arm:
// its launches over the kept steps, its blockers and whether it is present.
type captureClasses struct {
	launches map[captureKey]int64
	present  map[captureKey]bool
	blockers map[captureKey][]string
}

// status is what capture does to phase p of arm.
func (c *captureClasses) status(arm, p string) string {
	switch k := (captureKey{arm, p}); {
	case c.launches[k] == 0:
		return CaptureNoLaunch
	case len(c.blockers[k]) > 0:
		return CaptureBlocked
	}
	return CaptureRemovable
}

// classifyCapture counts, per arm and region phase, the launches over the
// kept steps and the kinds of blockers.
func (b *Boundary) classifyCapture(plan *UnitPlan, counted func(string) bool) *captureClasses {
	c := &captureClasses{launches: map[captureKey]int64{}, present: map[captureKey]bool{}, blockers: map[captureKey][]string{}}
	var x phases.Instance
	for i := range plan.xs.Len() {
		if plan.unit[i] < 0 || plan.xs.IsStep(i) || b.Arms[plan.xs.Arm(i)] == nil {
			continue
		}
		plan.xs.Get(i, &x)
		c.present[captureKey{x.Arm, x.Phase}] = true
		if counted(x.Phase) {
			// Device-side copies and memsets count as kernels do: capture
			// records them as graph nodes between static buffers. A copy
			// from or to the host moves new data each step and stays
			// outside the graph (the data phase's batch copy).
			m := &x.M
			c.launches[captureKey{x.Arm, x.Phase}] += m[phases.Launches] + m[phases.D2DCount] + m[phases.P2PCount] + m[phases.MemsetCount] + m[phases.OtherThreadOps]
		}
	}
	for _, bl := range b.Blockers {
		for _, p := range b.Phases {
			if counted(p) && (bl.Phase == p || strings.HasPrefix(bl.Phase, p+"/")) {
				k := captureKey{bl.Arm, p}
				if !slices.Contains(c.blockers[k], bl.Kind) {
					c.blockers[k] = append(c.blockers[k], bl.Kind)
				}
			}
		}
	}
	return c
}

// newCaptureBounds gives each arm its CaptureBound: the replay cost of its
// graphs per step and its region phases with their status.
func (b *Boundary) newCaptureBounds(replay ReplayCost, cls *captureClasses, order, regionPhases []string, counted func(string) bool) {
	for _, a := range b.ArmOrder {
		cb := &CaptureBound{Replay: replay, Phases: []CapturePhase{}}
		b.Arms[a].Bound = cb
		// The arm's phases in step order: the top-level ones and the region's.
		var seq []string
		for _, p := range order {
			if cls.present[captureKey{a, p}] && (!strings.Contains(p, "/") || counted(p)) {
				seq = append(seq, p)
			}
		}
		cb.Replay.LaunchesPerStep = graphRuns(seq, func(p string) bool { return counted(p) && cls.status(a, p) == CaptureRemovable })
		cb.Replay.IfFixedLaunches = graphRuns(seq, func(p string) bool { return counted(p) && cls.status(a, p) != CaptureNoLaunch })
		cb.Replay.PerStepNs = int64(cb.Replay.LaunchesPerStep) * replay.PerLaunchNs
		for _, p := range regionPhases {
			if k := (captureKey{a, p}); cls.present[k] {
				cb.Phases = append(cb.Phases, CapturePhase{Phase: p, Status: cls.status(a, p), Blockers: append([]string{}, cls.blockers[k]...)})
			}
		}
	}
}

// boundSums are, per unit, metric and kept step, the int64 sums over the
// step and its region phases (nil for a unit outside the arms).
func (b *Boundary) boundSums(plan *UnitPlan, cls *captureClasses, phaseIdx map[string]int, nMetrics int) [][][]int64 {
	sums := make([][][]int64, len(plan.ids))
	for u := range plan.ids {
		if b.Arms[plan.arms[u]] == nil {
			continue
		}
		sums[u] = make([][]int64, nMetrics)
		for m := range sums[u] {
			sums[u][m] = make([]int64, plan.kept[u])
		}
	}
	var xv phases.Instance
	for i := range plan.xs.Len() {
		u, t := plan.unit[i], plan.step[i]
		if u < 0 || sums[u] == nil {
			continue
		}
		plan.xs.Get(i, &xv)
		x, s := &xv, sums[u]
		if x.IsStep {
			s[bWall][t] = x.M[phases.Wall]
			s[bFloor][t] = max(x.M[phases.GPUBusy], x.M[phases.Wall]-x.M[phases.GPUIdle]-x.M[phases.OtherProcessGPU])
			continue
		}
		k, ok := phaseIdx[x.Phase]
		if !ok {
			continue
		}
		host := x.M[phases.Launch] + x.M[phases.CPUOther] + x.M[phases.MemcpyAPI] + x.M[phases.OtherAPI]
		s[bPhases+k][t] += host
		switch cls.status(x.Arm, x.Phase) {
		case CaptureRemovable:
			s[bHost][t] += host
			s[bLaunch][t] += x.M[phases.Launch]
			s[bCPUOther][t] += x.M[phases.CPUOther]
			s[bMemcpy][t] += x.M[phases.MemcpyAPI]
			s[bOtherAPI][t] += x.M[phases.OtherAPI]
		case CaptureNoLaunch:
			s[bNoLaunch][t] += host
		case CaptureBlocked:
			s[bBlocked][t] += host
		}
	}
	return sums
}

// boundUnits derives each kept step's ceiling, removable and if-fixed
// saving from the sums and groups the units' series by arm.
func (b *Boundary) boundUnits(plan *UnitPlan, sums [][][]int64, nMetrics int) map[string][]stats.Unit {
	byArm := map[string][]stats.Unit{}
	for u, s := range sums {
		if s == nil {
			continue
		}
		a := plan.arms[u]
		cb := b.Arms[a].Bound
		r, rf := cb.Replay.PerStepNs, int64(cb.Replay.IfFixedLaunches)*cb.Replay.PerLaunchNs
		series := make([][]float64, nMetrics)
		for t := range plan.kept[u] {
			room := s[bWall][t] - s[bFloor][t]
			s[bCeiling][t] = room - r
			if h := s[bHost][t]; h > 0 {
				s[bRemovable][t] = max(0, min(h, room)-r)
				if room < h {
					cb.CeilingSteps++
				}
			}
			if h := s[bHost][t] + s[bBlocked][t]; h > 0 {
				s[bIfFixed][t] = max(0, min(h, room)-rf)
			}
		}
		for m := range series {
			series[m] = make([]float64, plan.kept[u])
			for t, v := range s[m] {
				series[m][t] = float64(v)
			}
		}
		cb.Steps += plan.kept[u]
		cb.Units++
		byArm[a] = append(byArm[a], plan.statsUnit(u, series))
	}
	return byArm
}

// bound fills each arm's bounded saving (BoundaryArm.Bound).
func (b *Boundary) bound(region []string, order []string, o *Options) error {
	replay := measureReplay(b.files)
	plan := Units(allInstances(b.files), nil, b.unitStart)
	counted := func(p string) bool { return countsInRegion(p, region) }
	cls := b.classifyCapture(plan, counted)

	var regionPhases []string // counted region phases, step order
	for _, p := range b.Phases {
		if counted(p) {
			regionPhases = append(regionPhases, p)
		}
	}
	phaseIdx := map[string]int{}
	for k, p := range regionPhases {
		phaseIdx[p] = k
	}
	metrics := slices.Clone(boundMetrics)
	for _, p := range regionPhases {
		metrics = append(metrics, "host_ns["+p+"]")
	}

	b.newCaptureBounds(replay, cls, order, regionPhases, counted)
	sums := b.boundSums(plan, cls, phaseIdx, len(metrics))
	byArm := b.boundUnits(plan, sums, len(metrics))

	opt := o.statsOptions("", []int{bRemovable}, false)
	for _, a := range b.ArmOrder {
		if b.Arms[a].Bound.Steps == 0 {
			b.Arms[a].Bound = nil // no kept step: nothing measured (the warning says why)
			continue
		}
		if err := b.estimateBound(a, byArm[a], cls, phaseIdx, metrics, o.NoStats, opt); err != nil {
			return err
		}
	}
	return nil
}

// estimateBound fills arm a's estimates from its units' series: summaries
// with the statistics off, else stats.Analyze and the share of the step.
func (b *Boundary) estimateBound(a string, us []stats.Unit, cls *captureClasses, phaseIdx map[string]int, metrics []string, off bool, opt stats.Options) error {
	cb := b.Arms[a].Bound
	ests := []*Estimate{&cb.RemovableNs, &cb.HostNs, &cb.LaunchNs, &cb.CPUOtherNs, &cb.MemcpyAPINs, &cb.OtherAPINs,
		&cb.GPUFloorNs, &cb.CeilingNs, &cb.NoLaunchHostNs, &cb.BlockedHostNs, &cb.RemovableIfFixedNs, &cb.StepWallNs}
	for k := range cb.Phases {
		ests = append(ests, &cb.Phases[k].HostNs)
	}
	phaseOf := func(m int) int { // metric index of ests[m]
		if m < bPhases {
			return m
		}
		return bPhases + phaseIdx[cb.Phases[m-bPhases].Phase]
	}
	for k := range cb.Phases {
		cb.Phases[k].LaunchesPerStep = float64(cls.launches[captureKey{a, cb.Phases[k].Phase}]) / float64(cb.Steps)
	}
	if off {
		for m, e := range ests {
			*e = pointEstimate(us, phaseOf(m))
		}
		if sh, ok := pointShare(us, bRemovable, bWall); ok {
			cb.RemovableShare = sh
		}
		return nil
	}
	res, err := stats.Analyze("capture bound "+strings.Join(b.Phases, ","), metrics, us, opt)
	if err != nil {
		return fmt.Errorf("statistics of the bounded saving in arm %s: %w", a, err)
	}
	am := res.Arms[0].Metrics
	for m, e := range ests {
		x := am[phaseOf(m)]
		*e = Estimate{Mean: x.Mean, MeanCI: x.MeanCI, Median: x.Median, MedianCI: x.MedianCI, N: x.N, Method: x.Method}
	}
	for _, w := range res.Warnings {
		if w.Metric == boundMetrics[bRemovable] { // the rest repeat the boundary's own warnings
			w.Values = nil
			b.Warnings = append(b.Warnings, w)
		}
	}
	sh, err := shareOfStep(a, us, bRemovable, bWall, opt)
	if err != nil {
		return err
	}
	cb.RemovableShare = sh
	return nil
}
