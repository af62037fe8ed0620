package phases

import (
	"cmp"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/nsys"
)

// Hotspots are the CPU samples (`nsys profile --sample=cpu`) attributed to
// phases: a sample belongs to every step and phase instance open on its
// thread at its timestamp, an other thread's row to that thread's samples
// during its span (the (unannotated) row takes none). Per phase, functions
// count self samples (the sample's innermost frame) and inclusive samples
// (anywhere in its backtrace, once per sample).
type Hotspots struct {
	// PeriodNs is the median interval between consecutive samples of one
	// thread: the time one sample stands for (an estimate: a thread off
	// CPU is not sampled).
	PeriodNs int64 `json:"period_ns"`
	Samples  int64 `json:"samples"` // rows of COMPOSITE_EVENTS read
	// Phases are the phases with samples, in PhaseOrder.
	Phases []PhaseHotspots `json:"phases"`
}

// PhaseHotspots are one phase's CPU samples and its functions, by self
// samples then inclusive samples.
type PhaseHotspots struct {
	Phase     string            `json:"phase"`
	Samples   int64             `json:"samples"`
	Functions []FunctionSamples `json:"functions"`
}

// FunctionSamples is one function's samples in a phase.
type FunctionSamples struct {
	Function  string `json:"function"`
	Module    string `json:"module"`
	Python    bool   `json:"python"` // a Python frame (its module is a .py file)
	Self      int64  `json:"self_samples"`
	Inclusive int64  `json:"inclusive_samples"`
}

// BySelf orders functions by self samples, then inclusive samples (most
// first), then name and module.
func BySelf(a, b FunctionSamples) int {
	return cmp.Or(cmp.Compare(b.Self, a.Self), cmp.Compare(b.Inclusive, a.Inclusive), strings.Compare(a.Function, b.Function), strings.Compare(a.Module, b.Module))
}

// ByInclusive orders functions by inclusive samples, then self samples
// (most first), then name and module.
func ByInclusive(a, b FunctionSamples) int {
	return cmp.Or(cmp.Compare(b.Inclusive, a.Inclusive), cmp.Compare(b.Self, a.Self), strings.Compare(a.Function, b.Function), strings.Compare(a.Module, b.Module))
}

// MinPhaseSamples is the fewest CPU samples a phase needs for its
// functions' ranking to mean something; fewer are reported with a warning.
const MinPhaseSamples = 20

// threadInstances are one thread's instances, per depth sorted by start.
type threadInstances map[int][]int32

type fnKey struct{ sym, mod int64 }

// measureHotspots fills res.Hotspots from COMPOSITE_EVENTS and
// SAMPLING_CALLCHAINS (nothing when CPU sampling was off).
func measureHotspots(f *nsys.File, res *Result) error {
	if !f.HasTable(nsys.TableCompositeEvents) || !f.HasTable(nsys.TableSamplingCallchains) {
		return nil
	}
	st := res.InstanceStore()
	phaseIdx := map[string]int32{}
	for _, p := range res.PhaseOrder {
		phaseIdx[p] = int32(len(phaseIdx))
	}
	byThread := instancesByThread(st)
	h := &Hotspots{}
	phasesOf, counts, err := samplePhases(f, st, byThread, phaseIdx, h)
	if err != nil {
		return err
	}
	self, incl, err := frameCounts(f, phasesOf, len(phaseIdx))
	if err != nil {
		return err
	}
	strs, err := f.Strings()
	if err != nil {
		return err
	}
	var few []string
	for _, ph := range res.PhaseOrder {
		p := phaseIdx[ph]
		if counts[p] == 0 {
			continue
		}
		if counts[p] < MinPhaseSamples {
			few = append(few, ph)
		}
		ps := PhaseHotspots{Phase: ph, Samples: counts[p]}
		for k, n := range incl[p] {
			mod := ""
			if k.mod >= 0 {
				mod = strs.Name(k.mod)
			}
			ps.Functions = append(ps.Functions, FunctionSamples{Function: strs.Name(k.sym), Module: mod, Python: strings.HasSuffix(mod, ".py"), Self: self[p][k], Inclusive: n})
		}
		slices.SortFunc(ps.Functions, BySelf)
		h.Phases = append(h.Phases, ps)
	}
	res.Hotspots = h
	if len(few) > 0 {
		res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnCPUSamples, f.Path, "fewer than %d CPU samples in %s: their top functions rest on too few samples (sample longer or at a higher rate)", MinPhaseSamples, quoteList(few)))
	}
	return nil
}

// instancesByThread is each thread's annotated instances per depth, in
// start order. An other thread's row is on that thread (the autograd
// thread's samples during the step are its); the (unannotated) row spans
// its step on the step's thread and takes none.
func instancesByThread(st *Store) map[[2]int64]threadInstances {
	byThread := map[[2]int64]threadInstances{}
	for i := range st.Len() {
		if st.Phase(i) == Unannotated {
			continue
		}
		k := [2]int64{st.Pid(i), st.Tid(i)}
		ti := byThread[k]
		if ti == nil {
			ti = threadInstances{}
			byThread[k] = ti
		}
		ti[st.Depth(i)] = append(ti[st.Depth(i)], int32(i))
	}
	for _, ti := range byThread {
		for _, xs := range ti {
			slices.SortFunc(xs, func(a, b int32) int { return cmp.Compare(st.Start(int(a)), st.Start(int(b))) })
		}
	}
	return byThread
}

// samplePhases reads the CPU samples: each one's phases (by sample id) and
// each phase's sample count; it sets h's sample count and period.
func samplePhases(f *nsys.File, st *Store, byThread map[[2]int64]threadInstances, phaseIdx map[string]int32, h *Hotspots) (map[int64][]int32, []int64, error) {
	phasesOf := map[int64][]int32{} // sample id → phase indexes
	counts := make([]int64, len(phaseIdx))
	lastAt := map[int64]int64{}
	var gaps []int64
	for s, err := range f.CPUSamples() {
		if err != nil {
			return nil, nil, err
		}
		h.Samples++
		if prev, ok := lastAt[s.GlobalTid]; ok && s.Start > prev && len(gaps) < 1<<16 {
			gaps = append(gaps, s.Start-prev)
		}
		lastAt[s.GlobalTid] = s.Start
		ti := byThread[[2]int64{nsys.Pid(s.GlobalTid), nsys.Tid(s.GlobalTid)}]
		var phs []int32
		for _, xs := range ti {
			j, _ := slices.BinarySearchFunc(xs, s.Start, func(i int32, t int64) int { return cmp.Compare(st.Start(int(i)), t+1) })
			// the last instance starting at or before t
			for k := j - 1; k >= 0 && k >= j-4; k-- {
				i := int(xs[k])
				if st.Start(i) <= s.Start && s.Start < st.End(i) {
					if p, ok := phaseIdx[st.Phase(i)]; ok && !slices.Contains(phs, p) {
						phs = append(phs, p)
					}
					break
				}
			}
		}
		if len(phs) > 0 {
			phasesOf[s.ID] = phs
			for _, p := range phs {
				counts[p]++
			}
		}
	}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		h.PeriodNs = gaps[len(gaps)/2]
	}
	return phasesOf, counts, nil
}

// frameCounts is, per phase, each function's self and inclusive samples.
// A sample's frames are consecutive rows (the table's key is id,
// stackDepth): a function counts once per sample in inclusive.
func frameCounts(f *nsys.File, phasesOf map[int64][]int32, phases int) (self, incl []map[fnKey]int64, err error) {
	self = make([]map[fnKey]int64, phases)
	incl = make([]map[fnKey]int64, phases)
	for p := range self {
		self[p], incl[p] = map[fnKey]int64{}, map[fnKey]int64{}
	}
	cur, seen := int64(-1), map[fnKey]bool{}
	for fr, err := range f.SampleFrames() {
		if err != nil {
			return nil, nil, err
		}
		phs := phasesOf[fr.ID]
		if len(phs) == 0 {
			continue
		}
		if fr.ID != cur {
			cur = fr.ID
			clear(seen)
		}
		k := fnKey{fr.Symbol, fr.Module}
		for _, p := range phs {
			if fr.Depth == 0 {
				self[p][k]++
			}
			if !seen[k] {
				incl[p][k]++
			}
		}
		seen[k] = true
	}
	return self, incl, nil
}

// measureSamples attributes what sampling recorded (GPU metrics, CPU
// samples) to the instances; it skips all work when neither was recorded.
func measureSamples(f *nsys.File, res *Result, use []GPUUse) error {
	if err := measureGPUMetrics(f, res, use); err != nil {
		return err
	}
	return measureHotspots(f, res)
}

// sampledProcessRanges is one "whole process" range per process with CPU
// samples, from its first to its last sample, on its most sampled thread.
func sampledProcessRanges(f *nsys.File) ([]*threadRanges, error) {
	ext, err := f.SampleExtents()
	if err != nil {
		return nil, err
	}
	return wholeProcessRanges(ext), nil
}
