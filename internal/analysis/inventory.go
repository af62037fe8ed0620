package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

// Kinds of host interactions and allocations. docs/inventory.md states the
// rule behind each.
const (
	KindScalarRead   = "scalar_read"   // small D2H copy the host waits for, nothing launched after it in the phase
	KindDynamicShape = "dynamic_shape" // small D2H copy the host waits for, then more GPU work: the value sizes it
	KindPageableH2D  = "pageable_h2d"  // H2D copy from pageable host memory (staged; the host waits)
	KindSyncCopy     = "sync_copy"     // any other copy or memset the host waits for
	KindD2H          = "d2h"           // a D2H copy the host does not wait for (pinned, async)
	KindStreamSync   = "stream_sync"   // cudaStreamSynchronize not completing a copy
	KindDeviceSync   = "device_sync"   // cudaDeviceSynchronize / cuCtxSynchronize
	KindEventSync    = "event_sync"    // cudaEventSynchronize
	KindAlloc        = "alloc"         // device, pinned or pool allocation
	KindFree         = "free"          // free (cudaFree blocks: it synchronizes the device)
)

// Cadences: how often an interaction occurs among the steps of its arm.
const (
	CadenceHot      = "hot"      // in at least half of the steps
	CadenceInterval = "interval" // periodic: at least 2 steps, evenly spaced
	CadenceCold     = "cold"     // rare or once
)

// Suggested dispositions.
const (
	DispCounter    = "device-resident counter"
	DispFixedShape = "fixed-shape pack"
	DispInterval   = "interval publication"
	DispOutside    = "move outside capture"
	DispPrealloc   = "preallocate"
	DispEager      = "keep eager"
)

// ScalarReadMaxBytes is the largest D2H copy counted as a scalar read: one
// element of any dtype (complex128 is 16 bytes), or a few packed together.
const ScalarReadMaxBytes = 16

// Interaction is one blocking host interaction or allocation: one API call,
// or a copy together with the synchronize that completes it.
type Interaction struct {
	Instance   int32 // the owning step or phase instance (index into Result.Instances)
	Kind       string
	API        string // "cudaMemcpyAsync+cudaStreamSynchronize" for a copy and its sync
	Blocking   bool   // the host waited for the device
	Ns         int64  // host time of its calls, clipped to the instance
	Bytes      int64  // bytes copied or set; meaningful when HasBytes
	HasBytes   bool
	ToPageable bool  // a D2H copy into pageable host memory (.cpu(), .tolist())
	Callchain  int64 // backtrace of its first call; 0 none
	// The host time of its calls that waited, split by what the process's
	// GPUs ran meanwhile (phases.CallRecord.OwnGPUNs …).
	WaitOwnGPUNs, WaitOtherGPUNs, WaitNoGPUNs int64
}

// Interactions classifies the recorded calls of res (phases.Options.Calls)
// step by step. The rules are in docs/inventory.md.
func Interactions(res *phases.Result) []Interaction {
	calls := res.Calls
	var out []Interaction
	st := res.InstanceStore()
	stepOf := stepIndex(st)
	for lo := 0; lo < len(calls); {
		hi := lo + 1
		for hi < len(calls) && stepOf[calls[hi].Instance] == stepOf[calls[lo].Instance] {
			hi++
		}
		out = appendStepInteractions(out, res, calls[lo:hi])
		lo = hi
	}
	return out
}

// stepIndex maps each instance to the index of its step instance (phases
// follow their step in Result.Instances).
func stepIndex(xs *phases.Store) []int32 {
	out := make([]int32, xs.Len())
	cur := int32(-1)
	for i := range out {
		if xs.IsStep(i) {
			cur = int32(i)
		}
		out[i] = cur
	}
	return out
}

func isSyncAPI(c phases.CallRecord) bool {
	switch c.Sync() {
	case phases.SyncStream, phases.SyncDevice, phases.SyncEvent, phases.SyncContext:
		return true
	}
	return false
}

// significant: a call that does GPU work, waits, allocates or frees. Calls
// that do none of these (cudaStreamIsCapturing, cuKernelGetName, …) do not
// separate a copy from its sync or a read from the work it sizes.
func significant(c phases.CallRecord) bool {
	return c.Is(phases.CallGPUWork) || c.Sync() != phases.SyncNone || c.Is(phases.CallAlloc) || c.Is(phases.CallFree)
}

// nextSignificant returns the index of the first significant call in
// run[from:] that starts before end, or -1.
func nextSignificant(run []phases.CallRecord, from int, end int64) int {
	for k := from; k < len(run) && run[k].Start < end; k++ {
		if significant(run[k]) {
			return k
		}
	}
	return -1
}

func appendStepInteractions(out []Interaction, res *phases.Result, run []phases.CallRecord) []Interaction {
	used := make([]bool, len(run))
	api := func(c phases.CallRecord) string { return res.CallAPIs[c.API] }
	for i, c := range run {
		if used[i] {
			continue
		}
		// Look-ahead stays inside the owning instance (and its descendants).
		end := res.InstanceStore().End(int(c.Instance))
		it := Interaction{Instance: c.Instance, API: api(c), Ns: c.Dur, Callchain: c.Callchain,
			WaitOwnGPUNs: c.OwnGPUNs, WaitOtherGPUNs: c.OtherGPUNs, WaitNoGPUNs: c.NoGPUNs}
		switch {
		case c.Is(phases.CallCopy):
			it.Bytes, it.HasBytes = c.Bytes, true
			it.Blocking = c.Sync() != phases.SyncNone
			last := i
			if j := nextSignificant(run, i+1, end); j >= 0 && isSyncAPI(run[j]) {
				used[j] = true
				it.Blocking = true
				it.Ns += run[j].Dur
				it.WaitOwnGPUNs += run[j].OwnGPUNs
				it.WaitOtherGPUNs += run[j].OtherGPUNs
				it.WaitNoGPUNs += run[j].NoGPUNs
				it.API += "+" + api(run[j])
				if it.Callchain == 0 {
					it.Callchain = run[j].Callchain
				}
				last = j
			}
			switch {
			case c.CopyKind == nsys.CopyDtoH && !it.Blocking:
				it.Kind = KindD2H
			case c.CopyKind == nsys.CopyDtoH && c.Bytes <= ScalarReadMaxBytes:
				it.ToPageable = c.Is(phases.CallPageable)
				it.Kind = KindScalarRead
				if k := nextSignificant(run, last+1, end); k >= 0 && (run[k].Is(phases.CallGPUWork) || run[k].Is(phases.CallAlloc)) {
					it.Kind = KindDynamicShape
				}
			case c.CopyKind == nsys.CopyHtoD && c.Is(phases.CallPageable):
				it.Kind, it.Blocking = KindPageableH2D, true
			case it.Blocking:
				it.Kind = KindSyncCopy
			default:
				continue // an async copy the host does not wait for
			}
		case isSyncAPI(c):
			it.Blocking = true
			switch c.Sync() {
			case phases.SyncStream:
				it.Kind = KindStreamSync
			case phases.SyncEvent:
				it.Kind = KindEventSync
			default:
				it.Kind = KindDeviceSync
			}
		case c.Is(phases.CallAlloc):
			it.Kind = KindAlloc
		case c.Is(phases.CallFree):
			it.Kind, it.Blocking = KindFree, c.Sync() == phases.SyncFree
		case c.Sync() == phases.SyncMemset:
			it.Kind, it.Blocking = KindSyncCopy, true
			it.Bytes, it.HasBytes = c.Bytes, true
		default:
			continue
		}
		out = append(out, it)
	}
	return out
}

// InventoryItem is one arm × phase × kind × API of the inventory.
type InventoryItem struct {
	Arm         string   `json:"arm"`
	Phase       string   `json:"phase"` // phase name; the step's name for calls outside every phase
	Kind        string   `json:"kind"`
	API         string   `json:"api"`
	Blocking    bool     `json:"blocking"`
	Calls       int64    `json:"calls"`    // occurrences (a copy and its sync count once)
	PerStep     float64  `json:"per_step"` // calls per step instance of the arm
	TotalNs     int64    `json:"total_ns"`
	MeanNs      float64  `json:"mean_ns"`
	Bytes       *int64   `json:"bytes"` // copies and memsets only; null otherwise
	Cadence     string   `json:"cadence"`
	Disposition string   `json:"disposition"`
	Owner       string   `json:"owner"`        // NVTX path, e.g. collector_step/events
	Frame       string   `json:"frame"`        // top user frame of the backtraces, or "none recorded"
	NsPerStep   float64  `json:"ns_per_step"`  // total_ns / steps of the arm: the ranking key
	StepsWith   int      `json:"steps_with"`   // steps in which it occurred
	Period      *float64 `json:"period_steps"` // interval cadence: steps between occurrences
	// The part of total_ns during which the host waited, split by what the
	// process's GPUs ran meanwhile: its own work, only other processes'
	// work, or no recorded work (time-slicing between processes without
	// MPS, launch latency). The three sum to the waiting time.
	WaitOwnGPUNs   int64 `json:"wait_own_gpu_ns"`
	WaitOtherGPUNs int64 `json:"wait_other_gpu_ns"`
	WaitNoGPUNs    int64 `json:"wait_no_gpu_ns"`
}

// Inventory is the result of `nsysphase inventory`.
type Inventory struct {
	Inputs     []string        `json:"inputs"`
	Step       string          `json:"step"`
	Arms       []string        `json:"arms"`
	StepsByArm map[string]int  `json:"steps_by_arm"`
	SkipSteps  int             `json:"skip_steps"`
	Backtraces bool            `json:"backtraces"` // some export held CUDA backtraces
	Items      []InventoryItem `json:"items"`
	Mismatches []string        `json:"mismatches"`
	phaseRank  map[string]int
}

// CensusSkipSteps is the warm-up rule of `nsysphase inventory`, its one
// default other than DefaultOptions': every step counts (a census, not a
// timing); warm-up ranges are left out all the same.
const CensusSkipSteps = 0

// BuildInventory aggregates the interactions of every file. Steps flagged
// warm-up (o.SkipSteps, --skip-steps) are left out.
func BuildInventory(files []*FileResult, frames Frames, o Options) *Inventory {
	return buildInventory(files, frames, &o, false)
}

// buildInventory is BuildInventory; with census it also counts the steps
// flagged warm-up (a capture boundary must hold in every step).
func buildInventory(files []*FileResult, frames Frames, o *Options, census bool) *Inventory {
	relabelArms(files)
	inv := &Inventory{StepsByArm: map[string]int{}, SkipSteps: o.SkipSteps, Items: []InventoryItem{}, Mismatches: Mismatches(files)}
	starts := UnitStarts(files)
	all := phases.NewStore()
	inv.phaseRank = map[string]int{}
	for _, fr := range files {
		inv.Inputs = append(inv.Inputs, fr.Path)
		r := fr.Result
		if inv.Step == "" {
			inv.Step = r.StepName
		}
		for _, p := range r.PhaseOrder {
			if _, ok := inv.phaseRank[p]; !ok {
				inv.phaseRank[p] = len(inv.phaseRank)
			}
		}
		all.AppendStore(r.InstanceStore())
		if _, ok := frames[fr.Path]; ok {
			inv.Backtraces = true
		}
	}
	inv.Arms = armsInOrder(all, starts)
	type key struct{ arm, phase, kind, api string }
	type acc struct {
		item   InventoryItem
		occ    map[phases.UnitID]map[int]bool // unit → steps with it
		frames map[string]int64
		pages  int64
	}
	accs := map[key]*acc{}
	var order []key
	for _, fr := range files {
		r := fr.Result
		st := r.InstanceStore()
		for i := range st.Len() {
			if st.IsStep(i) && (census || !st.Warmup(i)) {
				inv.StepsByArm[st.Arm(i)]++
			}
		}
		for _, it := range Interactions(r) {
			x := st.At(int(it.Instance))
			if x.Warmup && !census {
				continue
			}
			k := key{x.Arm, x.Phase, it.Kind, it.API}
			a := accs[k]
			if a == nil {
				a = &acc{item: InventoryItem{Arm: x.Arm, Phase: x.Phase, Kind: it.Kind, API: it.API, Owner: ownerPath(r.StepName, x)}, occ: map[phases.UnitID]map[int]bool{}, frames: map[string]int64{}}
				accs[k] = a
				order = append(order, k)
			}
			a.item.Calls++
			a.item.TotalNs += it.Ns
			a.item.WaitOwnGPUNs += it.WaitOwnGPUNs
			a.item.WaitOtherGPUNs += it.WaitOtherGPUNs
			a.item.WaitNoGPUNs += it.WaitNoGPUNs
			a.item.Blocking = a.item.Blocking || it.Blocking
			if it.HasBytes {
				if a.item.Bytes == nil {
					a.item.Bytes = new(int64)
				}
				*a.item.Bytes += it.Bytes
			}
			if it.ToPageable {
				a.pages++
			}
			if a.occ[x.Unit] == nil {
				a.occ[x.Unit] = map[int]bool{}
			}
			a.occ[x.Unit][x.Step] = true
			a.frames[frames.Frame(fr.Path, it.Callchain)]++
		}
	}
	for _, k := range order {
		a := accs[k]
		it := &a.item
		n := inv.StepsByArm[it.Arm]
		it.MeanNs = float64(it.TotalNs) / float64(it.Calls)
		if n > 0 {
			it.PerStep = float64(it.Calls) / float64(n)
			it.NsPerStep = float64(it.TotalNs) / float64(n)
		}
		for _, steps := range a.occ {
			it.StepsWith += len(steps)
		}
		it.Cadence, it.Period = cadence(a.occ, n)
		it.Disposition = disposition(it.Kind, it.Cadence, a.pages*2 > it.Calls)
		it.Frame = topFrame(a.frames)
		inv.Items = append(inv.Items, *it)
	}
	armRank := map[string]int{}
	for i, a := range inv.Arms {
		armRank[a] = i
	}
	slices.SortStableFunc(inv.Items, func(a, b InventoryItem) int {
		return cmp.Or(cmp.Compare(b.NsPerStep, a.NsPerStep), cmp.Compare(armRank[a.Arm], armRank[b.Arm]),
			cmp.Compare(inv.phaseRank[a.Phase], inv.phaseRank[b.Phase]), strings.Compare(a.Kind, b.Kind), strings.Compare(a.API, b.API))
	})
	return inv
}

// ownerPath is the NVTX path of an instance: "<step>/<phase>", or the step.
func ownerPath(step string, x phases.Instance) string {
	if x.IsStep {
		return step
	}
	return step + "/" + x.Phase
}

// cadence classifies the occurrences (unit → steps) among n steps.
func cadence[U comparable](occ map[U]map[int]bool, n int) (string, *float64) {
	k := 0
	for _, s := range occ {
		k += len(s)
	}
	if n > 0 && 2*k >= n {
		return CadenceHot, nil
	}
	if k < 2 {
		return CadenceCold, nil
	}
	// Evenly spaced: every gap inside a unit is the same (±1 step), or,
	// with at most one occurrence per unit, at the same step of each unit.
	gap, regular := -1, true
	pos := map[int]bool{}
	for _, s := range occ {
		steps := slices.Sorted(maps.Keys(s))
		pos[steps[0]] = true
		for i := 1; i < len(steps); i++ {
			g := steps[i] - steps[i-1]
			switch {
			case gap < 0:
				gap = g
			case g < gap-1 || g > gap+1:
				regular = false
			}
		}
	}
	period := float64(n) / float64(k)
	switch {
	case gap >= 2 && regular:
		return CadenceInterval, &period
	case gap < 0 && len(pos) == 1 && len(occ) >= 2:
		return CadenceInterval, &period
	}
	return CadenceCold, nil
}

// disposition suggests what to do with an interaction (docs/inventory.md).
func disposition(kind, cadence string, toPageable bool) string {
	if cadence == CadenceCold {
		return DispEager
	}
	hot := cadence == CadenceHot
	switch kind {
	case KindScalarRead:
		switch {
		case !hot:
			return DispEager
		case toPageable:
			return DispInterval
		}
		return DispCounter
	case KindDynamicShape:
		return DispFixedShape
	case KindPageableH2D, KindAlloc, KindFree:
		return DispPrealloc
	case KindD2H:
		if hot {
			return DispInterval
		}
		return DispEager
	case KindSyncCopy:
		return DispOutside
	}
	return DispOutside // stream, device and event syncs
}

// topFrame is the most frequent frame; ties go to the smaller string.
func topFrame(counts map[string]int64) string {
	best, n := NoFrame, int64(0)
	others := 0
	for f, c := range counts {
		if f == NoFrame {
			continue
		}
		others++
		if c > n || (c == n && f < best) {
			best, n = f, c
		}
	}
	if others > 1 {
		return fmt.Sprintf("%s (+%d %s)", best, others-1, plural.Of(others-1, "other", "others"))
	}
	return best
}

// Table is the inventory as one table (json: {"items": [...]}).
func (inv *Inventory) Table() *export.Table {
	t := export.NewTable("items", "blocking host interactions and allocations per arm × phase × kind × API, ranked by host time per step (for blocking ones, the wait they cause), with the wait split by what the process's GPUs ran",
		export.Column{Name: "arm", Type: export.TypeString},
		export.Column{Name: "phase", Type: export.TypeString},
		export.Column{Name: "kind", Type: export.TypeString},
		export.Column{Name: "api", Type: export.TypeString},
		export.Column{Name: "blocking", Type: export.TypeBool, Doc: "the host waited for the device"},
		export.Column{Name: "calls", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "occurrences; a copy and the sync completing it count once"},
		export.Column{Name: "per_step", Type: export.TypeFloat64, Unit: export.UnitCount, Doc: "calls per step instance of the arm"},
		export.Column{Name: "total_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "host time of the calls"},
		export.Column{Name: "mean_ns", Type: export.TypeFloat64, Unit: export.UnitNanoseconds},
		export.Column{Name: "bytes", Type: export.TypeInt64, Unit: export.UnitBytes, Nullable: true, Doc: "bytes copied or set; null for other kinds"},
		export.Column{Name: "cadence", Type: export.TypeString, Doc: "hot (≥ half the steps), interval (evenly spaced) or cold"},
		export.Column{Name: "disposition", Type: export.TypeString, Doc: "suggested fix (docs/inventory.md)"},
		export.Column{Name: "owner", Type: export.TypeString, Doc: "NVTX path of the phase"},
		export.Column{Name: "frame", Type: export.TypeString, Doc: "top user frame of the CUDA backtraces, or none recorded"},
		export.Column{Name: "ns_per_step", Type: export.TypeFloat64, Unit: export.UnitNanoseconds, Doc: "total_ns per step instance of the arm (the ranking: for a blocking item, the wait it causes)"},
		export.Column{Name: "wait_own_gpu_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "of total_ns, host time waiting while the process's own GPU work ran"},
		export.Column{Name: "wait_other_gpu_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "of total_ns, host time waiting while only other processes' work ran on its GPUs"},
		export.Column{Name: "wait_no_gpu_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "of total_ns, host time waiting while its GPUs ran no recorded work"},
	)
	for _, it := range inv.Items {
		b := export.Null()
		if it.Bytes != nil {
			b = export.Int(*it.Bytes)
		}
		_ = t.AppendRow(export.Str(it.Arm), export.Str(it.Phase), export.Str(it.Kind), export.Str(it.API), export.Bool(it.Blocking),
			export.Int(it.Calls), export.Float(it.PerStep), export.Int(it.TotalNs), export.Float(it.MeanNs), b,
			export.Str(it.Cadence), export.Str(it.Disposition), export.Str(it.Owner), export.Str(it.Frame), export.Float(it.NsPerStep),
			export.Int(it.WaitOwnGPUNs), export.Int(it.WaitOtherGPUNs), export.Int(it.WaitNoGPUNs))
	}
	return t
}
