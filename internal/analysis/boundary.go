package analysis

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// Blocker kinds that are not host interactions.
const (
	KindBranch    = "data_dependent_branch" // op count or API mix varies across a phase's instances
	KindRegionGap = "region_gap"            // a phase outside the region runs between two inside it
)

// SavingDefinition says exactly what saving_ns is.
const SavingDefinition = "saving_ns = launch_ns + cpu_other_ns of the region's phase instances, summed per step: " +
	"the host time a CUDA graph replay could remove (kernel-launch calls and the Python/framework dispatch between them). " +
	"The estimate before the bound (bound.removable_ns, BoundDefinition): phases that launch nothing or hold a blocker count, and neither the GPU floor nor the replay's own cudaGraphLaunch is subtracted"

// boundaryMetrics are the per-step series of a region, in stats metric order.
var boundaryMetrics = []string{"saving_ns", "launch_ns", "cpu_other_ns", "region_wall_ns", "step_wall_ns"}

// Estimate is one per-step quantity of an arm with its CIs.
type Estimate struct {
	Mean     float64     `json:"mean"`
	MeanCI   *[2]float64 `json:"mean_ci"`
	Median   float64     `json:"median"`
	MedianCI *[2]float64 `json:"median_ci"`
	N        int         `json:"n"` // steps with the value
	Method   string      `json:"method"`
}

// Share is a ratio of means (Σ part / Σ whole over the arm's steps) with
// its CI from a paired resampling of the units.
type Share struct {
	Value  float64     `json:"value"`
	CI     *[2]float64 `json:"ci"`
	Method string      `json:"method"`
	NUnits int         `json:"n_units"`
}

// BoundaryArm is the verdict and the possible saving of one arm.
type BoundaryArm struct {
	Capturable    bool     `json:"capturable"`
	PhasesPresent []string `json:"phases_present"`
	PhasesMissing []string `json:"phases_missing"`
	Blockers      int      `json:"blockers"`
	Steps         int      `json:"steps"` // kept steps behind the estimates
	Units         int      `json:"units"` // blocks or profiles
	SavingNs      Estimate `json:"saving_ns"`
	LaunchNs      Estimate `json:"launch_ns"`
	CPUOtherNs    Estimate `json:"cpu_other_ns"`
	RegionWallNs  Estimate `json:"region_wall_ns"`
	StepWallNs    Estimate `json:"step_wall_ns"`
	SavingShare   Share    `json:"saving_share_of_step_wall"`
	// Bound is what capture removes per step once the GPU floor, the
	// replay's own launches, phases that launch nothing and blocked phases
	// are accounted for (BoundDefinition); null without kept steps.
	Bound *CaptureBound `json:"bound"`
}

// Blocker is one thing inside the region that a CUDA graph cannot capture
// or that would make the captured graph wrong.
type Blocker struct {
	Arm         string  `json:"arm"`
	Phase       string  `json:"phase"`
	Kind        string  `json:"kind"`
	API         string  `json:"api"` // for a branch or a gap: what varies, or the phase in between
	PerStep     float64 `json:"per_step"`
	TotalNs     int64   `json:"total_ns"` // host time; for a branch, the wall of the instances off the common shape
	Calls       int64   `json:"calls"`
	Blocking    bool    `json:"blocking"`
	Cadence     string  `json:"cadence"`
	Disposition string  `json:"disposition"`
}

// Boundary is the result of `nsysphase boundary`.
type Boundary struct {
	Inputs      []string                `json:"inputs"`
	Step        string                  `json:"step"`
	Phases      []string                `json:"phases"` // the region, in step order
	Capturable  bool                    `json:"capturable"`
	Arms        map[string]*BoundaryArm `json:"arms"`
	ArmOrder    []string                `json:"arm_order"`
	ArmsWithout []string                `json:"arms_without_phases"`
	Blockers    []Blocker               `json:"blockers"`
	Inside      []string                `json:"inside"`
	Outside     []string                `json:"outside"`
	Saving      string                  `json:"saving_definition"`
	Settings    Settings                `json:"settings"`
	Mismatches  []string                `json:"mismatches"`
	Warnings    []Warning               `json:"warnings"`

	files     []*FileResult
	unitStart map[phases.UnitID]int64
}

// BuildBoundary checks the candidate capture region made of the phases
// region in every arm that has them. Blockers are counted over every step
// inside the arm blocks (a census); the saving over the kept steps (those
// after o.SkipSteps), with o's statistics settings.
func BuildBoundary(files []*FileResult, frames Frames, region []string, o Options) (*Boundary, error) {
	inv := buildInventory(files, frames, &o, true)
	b := &Boundary{Step: inv.Step, Inputs: inv.Inputs, Arms: map[string]*BoundaryArm{}, Blockers: []Blocker{}, Saving: SavingDefinition,
		Mismatches: inv.Mismatches, Warnings: []Warning{}, ArmsWithout: []string{}, files: files, unitStart: UnitStarts(files),
		Settings: o.settings()}
	if len(region) == 0 {
		return nil, &UsageError{Err: errors.New("--phases: name the region's phases, e.g. --phases action_apply,physics_step")}
	}
	// Phases in step order (first appearance); the step itself is not one.
	var order []string
	for _, fr := range files {
		for _, p := range fr.Result.PhaseOrder[1:] {
			if !slices.Contains(order, p) {
				order = append(order, p)
			}
		}
	}
	for _, p := range region {
		if p == b.Step {
			return nil, &UsageError{Err: fmt.Errorf("--phases: %q is the step; name its phases (%s)", p, strings.Join(order, ", "))}
		}
		if !slices.Contains(order, p) {
			return nil, &UsageError{Err: fmt.Errorf("--phases: no phase %q in the inputs (phases: %s)", p, strings.Join(order, ", "))}
		}
	}
	inRegion := func(name string) bool {
		for _, p := range region {
			if name == p || strings.HasPrefix(name, p+"/") {
				return true
			}
		}
		return false
	}
	for _, p := range order {
		if slices.Contains(region, p) {
			b.Phases = append(b.Phases, p)
		}
		if !strings.Contains(p, "/") {
			if inRegion(p) {
				b.Inside = append(b.Inside, p)
			} else {
				b.Outside = append(b.Outside, p)
			}
		}
	}
	if b.Outside == nil {
		b.Outside = []string{}
	}

	// Which arms have which phases.
	present := map[string]map[string]bool{}
	for _, fr := range files {
		st := fr.Result.InstanceStore()
		for i := range st.Len() {
			if ph := st.Phase(i); !st.IsStep(i) && slices.Contains(region, ph) {
				arm := st.Arm(i)
				if present[arm] == nil {
					present[arm] = map[string]bool{}
				}
				present[arm][ph] = true
			}
		}
	}
	for _, a := range inv.Arms {
		if len(present[a]) == 0 {
			b.ArmsWithout = append(b.ArmsWithout, a)
			continue
		}
		ba := &BoundaryArm{PhasesPresent: []string{}, PhasesMissing: []string{}}
		for _, p := range b.Phases {
			if present[a][p] {
				ba.PhasesPresent = append(ba.PhasesPresent, p)
			} else {
				ba.PhasesMissing = append(ba.PhasesMissing, p)
			}
		}
		b.Arms[a] = ba
		b.ArmOrder = append(b.ArmOrder, a)
	}
	if len(b.ArmOrder) == 0 {
		return nil, &UsageError{Err: fmt.Errorf("--phases %s: no arm has any of these phases", strings.Join(region, ","))}
	}

	for _, it := range inv.Items {
		if b.Arms[it.Arm] == nil || !inRegion(it.Phase) {
			continue
		}
		b.Blockers = append(b.Blockers, Blocker{Arm: it.Arm, Phase: it.Phase, Kind: it.Kind, API: it.API, PerStep: it.PerStep, TotalNs: it.TotalNs,
			Calls: it.Calls, Blocking: it.Blocking, Cadence: it.Cadence, Disposition: it.Disposition})
	}
	b.Blockers = append(b.Blockers, branches(files, inRegion, b.Arms, inv.StepsByArm)...)
	b.Blockers = append(b.Blockers, gaps(files, inRegion, b.Arms, inv.StepsByArm)...)
	for _, bl := range b.Blockers {
		b.Arms[bl.Arm].Blockers++
	}
	b.Capturable = true
	for _, a := range b.ArmOrder {
		ba := b.Arms[a]
		ba.Capturable = ba.Blockers == 0
		b.Capturable = b.Capturable && ba.Capturable
	}
	if err := b.estimate(region, &o); err != nil {
		return nil, err
	}
	if err := b.bound(region, order, &o); err != nil {
		return nil, err
	}
	return b, nil
}

// countsInRegion: a phase instance counts toward the region's sums when it is
// a region phase and no ancestor of it is (nested time is in the parent).
func countsInRegion(name string, region []string) bool {
	if !slices.Contains(region, name) {
		return false
	}
	for i := strings.LastIndex(name, "/"); i > 0; i = strings.LastIndex(name[:i], "/") {
		if slices.Contains(region, name[:i]) {
			return false
		}
	}
	return true
}

// branches finds data-dependent branches: region phases whose instances do
// not all have the same shape (GPU op count and mix of top-level API calls,
// nested phases included) within an arm. A graph replays one shape only.
func branches(files []*FileResult, inRegion func(string) bool, arms map[string]*BoundaryArm, steps map[string]int) []Blocker {
	type key struct{ arm, phase string }
	type inst struct {
		shape string
		ops   int64
		wall  int64
	}
	byKey := map[key][]inst{}
	var keys []key
	for _, fr := range files {
		r := fr.Result
		st := r.InstanceStore()
		stepOf := stepIndex(st)
		// API names of the top-level calls of each step, in time order.
		callsOf := map[int32][]phases.CallRecord{}
		for _, c := range r.Calls {
			s := stepOf[c.Instance]
			callsOf[s] = append(callsOf[s], c)
		}
		var x phases.Instance
		for i := range st.Len() {
			st.Get(i, &x)
			if x.IsStep || x.Depth != 1 || !inRegion(x.Phase) || arms[x.Arm] == nil {
				continue
			}
			counts := map[string]int{}
			for _, c := range callsOf[stepOf[i]] {
				if c.Start >= x.Start && c.Start < x.End {
					counts[r.CallAPIs[c.API]]++
				}
			}
			var parts []string
			for _, n := range slices.Sorted(maps.Keys(counts)) {
				parts = append(parts, fmt.Sprintf("%s×%d", n, counts[n]))
			}
			k := key{x.Arm, x.Phase}
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], inst{shape: fmt.Sprintf("ops=%d %s", x.M[phases.GPUOps], strings.Join(parts, " ")), ops: x.M[phases.GPUOps], wall: x.M[phases.Wall]})
		}
	}
	var out []Blocker
	for _, k := range keys {
		xs := byKey[k]
		count := map[string]int{}
		for _, x := range xs {
			count[x.shape]++
		}
		if len(count) < 2 {
			continue
		}
		mode, best := "", -1
		for s, n := range count {
			if n > best || (n == best && s < mode) {
				mode, best = s, n
			}
		}
		var off, wall int64
		ops := map[int64]bool{}
		for _, x := range xs {
			ops[x.ops] = true
			if x.shape != mode {
				off++
				wall += x.wall
			}
		}
		what := fmt.Sprintf("%d shapes over %d instances: API mix varies", len(count), len(xs))
		if len(ops) > 1 {
			vals := slices.Sorted(maps.Keys(ops))
			what = fmt.Sprintf("%d shapes over %d instances: gpu_ops %d–%d", len(count), len(xs), vals[0], vals[len(vals)-1])
		}
		per := 0.0
		if n := steps[k.arm]; n > 0 {
			per = float64(off) / float64(n)
		}
		out = append(out, Blocker{Arm: k.arm, Phase: k.phase, Kind: KindBranch, API: what, PerStep: per, TotalNs: wall, Calls: off,
			Cadence: cadenceOf(off, steps[k.arm]), Disposition: DispFixedShape})
	}
	return out
}

func cadenceOf(k int64, n int) string {
	switch {
	case n > 0 && 2*k >= int64(n):
		return CadenceHot
	case k <= 1:
		return CadenceCold
	}
	return CadenceInterval
}

// gaps finds outside phases that run between the first and the last region
// phase of a step: a capture from one to the other would take them in.
func gaps(files []*FileResult, inRegion func(string) bool, arms map[string]*BoundaryArm, steps map[string]int) []Blocker {
	type key struct{ arm, phase string }
	count := map[key]int64{}
	var keys []key
	for _, fr := range files {
		xs := fr.Result.InstanceStore()
		for i := 0; i < xs.Len(); {
			j := i + 1
			for j < xs.Len() && !xs.IsStep(j) {
				j++
			}
			if arms[xs.Arm(i)] != nil {
				var top []phases.Instance
				for k := i + 1; k < j; k++ {
					if xs.Depth(k) == 1 {
						top = append(top, xs.At(k))
					}
				}
				slices.SortStableFunc(top, func(a, b phases.Instance) int { return cmp.Compare(a.Start, b.Start) })
				first, last := -1, -1
				for k, x := range top {
					if inRegion(x.Phase) {
						if first < 0 {
							first = k
						}
						last = k
					}
				}
				for k := first + 1; first >= 0 && k < last; k++ {
					if !inRegion(top[k].Phase) {
						kk := key{xs.Arm(i), top[k].Phase}
						if _, ok := count[kk]; !ok {
							keys = append(keys, kk)
						}
						count[kk]++
					}
				}
			}
			i = j
		}
	}
	var out []Blocker
	for _, k := range keys {
		per := 0.0
		if n := steps[k.arm]; n > 0 {
			per = float64(count[k]) / float64(n)
		}
		out = append(out, Blocker{Arm: k.arm, Phase: k.phase, Kind: KindRegionGap, API: "outside phase " + k.phase + " runs inside the region", PerStep: per,
			Calls: count[k], Cadence: cadenceOf(count[k], steps[k.arm]), Disposition: "add it to --phases or reorder the step"})
	}
	return out
}

// estimate fills each arm's saving estimates and share of step wall.
func (b *Boundary) estimate(region []string, o *Options) error {
	byArm := Units(allInstances(b.files), nil, b.unitStart).RegionUnits(
		func(arm string) bool { return b.Arms[arm] != nil },
		func(phase string) bool { return countsInRegion(phase, region) })
	total := 0
	for _, a := range b.ArmOrder {
		total += len(byArm[a])
		ba := b.Arms[a]
		ba.Units = len(byArm[a])
		for _, u := range byArm[a] {
			ba.Steps += len(u.Steps[0])
		}
	}
	if total == 0 {
		b.Warnings = append(b.Warnings, Warning{Code: WarnNoKeptSteps, Message: "no step is left after --skip-steps: no saving estimate"})
		return nil
	}
	opt := o.statsOptions("", []int{0}, false)
	if o.NoStats {
		b.pointEstimates(byArm)
		return nil
	}
	// One analysis per arm: the boundary compares no arms.
	for _, a := range b.ArmOrder {
		if len(byArm[a]) == 0 {
			continue
		}
		res, err := stats.Analyze("boundary "+strings.Join(b.Phases, ","), boundaryMetrics, byArm[a], opt)
		if err != nil {
			return fmt.Errorf("statistics of the region in arm %s: %w", a, err)
		}
		ba := b.Arms[a]
		ests := []*Estimate{&ba.SavingNs, &ba.LaunchNs, &ba.CPUOtherNs, &ba.RegionWallNs, &ba.StepWallNs}
		for m, am := range res.Arms[0].Metrics {
			*ests[m] = Estimate{Mean: am.Mean, MeanCI: am.MeanCI, Median: am.Median, MedianCI: am.MedianCI, N: am.N, Method: am.Method}
		}
		for _, w := range res.Warnings {
			w.Values = nil // the document keeps the sentence and its scope
			b.Warnings = append(b.Warnings, w)
		}
	}
	for _, a := range b.ArmOrder {
		if len(byArm[a]) == 0 {
			continue
		}
		sh, err := shareOfStep(a, byArm[a], 0, 4, opt)
		if err != nil {
			return err
		}
		b.Arms[a].SavingShare = sh
	}
	return nil
}

// pointEstimates are the estimates without CIs (statistics off).
func (b *Boundary) pointEstimates(byArm map[string][]stats.Unit) {
	for a, us := range byArm {
		ba := b.Arms[a]
		ests := []*Estimate{&ba.SavingNs, &ba.LaunchNs, &ba.CPUOtherNs, &ba.RegionWallNs, &ba.StepWallNs}
		for m := range boundaryMetrics {
			*ests[m] = pointEstimate(us, m)
		}
		if sh, ok := pointShare(us, 0, 4); ok {
			ba.SavingShare = sh
		}
	}
}

// pointEstimate is metric m over the units' steps without a CI
// (statistics off).
func pointEstimate(us []stats.Unit, m int) Estimate {
	var xs []float64
	for _, u := range us {
		xs = append(xs, u.Steps[m]...)
	}
	s := stats.Summarize(xs)
	return Estimate{Mean: s.Mean, Median: s.Median, N: s.N, Method: stats.MethodNone}
}

// pointShare is Σ part / Σ whole over the units' steps without a CI
// (statistics off; an absent part counts 0), the part the series of metric
// partM, the whole that of wholeM; false without a whole.
func pointShare(us []stats.Unit, partM, wholeM int) (Share, bool) {
	var part, whole float64
	for _, u := range us {
		for t := range u.Steps[partM] {
			if v := u.Steps[partM][t]; !math.IsNaN(v) {
				part += v
			}
			whole += u.Steps[wholeM][t]
		}
	}
	if whole <= 0 {
		return Share{}, false
	}
	return Share{Value: part / whole, Method: stats.MethodNone, NUnits: len(us)}, true
}

// shareOfStep is Σ saving / Σ step wall over the arm's kept steps (a step
// without the region saves 0), with a CI; the saving is the series of metric
// partM of each unit, the step wall that of wholeM. stats compares arms only,
// so each unit enters twice, as a "saving" and a "step" replicate with the
// same start: consecutive in time, they pair, and one count vector resamples
// both — the ratio of the two means is the share, resampled by unit.
func shareOfStep(arm string, units []stats.Unit, partM, wholeM int, opt stats.Options) (Share, error) {
	const part, whole = "saving", "step"
	var us []stats.Unit
	for _, u := range units {
		saving := make([]float64, len(u.Steps[partM]))
		for t, v := range u.Steps[partM] {
			if !math.IsNaN(v) {
				saving[t] = v
			}
		}
		us = append(us,
			stats.Unit{ID: u.ID + "#" + part, Arm: part, Profile: u.Profile, Start: u.Start, Steps: [][]float64{saving}},
			stats.Unit{ID: u.ID + "#" + whole, Arm: whole, Profile: u.Profile, Start: u.Start, Steps: [][]float64{u.Steps[wholeM]}})
	}
	opt.Baseline = whole
	opt.QuantileMetrics = []int{}
	res, err := stats.Analyze("boundary share "+arm, []string{"ns"}, us, opt)
	if err != nil {
		return Share{}, fmt.Errorf("share of step wall of arm %s: %w", arm, err)
	}
	for _, c := range res.Comparisons {
		if c.Stat == stats.StatMean && c.Ratio != nil {
			return Share{Value: *c.Ratio, CI: c.RatioCI, Method: c.Method, NUnits: c.NUnits}, nil
		}
	}
	return Share{Method: stats.MethodNone, NUnits: len(units)}, nil
}
