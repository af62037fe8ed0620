package phases

import (
	"testing"

	"github.com/nsysphase/nsysphase/nsys"
)

// handAbsentMask is absentMask as it was written by hand before the
// metrics declared their sources: the oracle the derived mask must match.
func handAbsentMask(absent []string) uint64 {
	has := map[string]bool{}
	for _, t := range absent {
		has[t] = true
	}
	var m uint64
	set := func(ms ...Metric) {
		for _, x := range ms {
			m |= 1 << uint(x)
		}
	}
	gpu := []Metric{GPUBusy, Proj, GPUOps, QueueSum, QueueMax, Launches, OverlapOtherProcess, OtherProcessGPU, GPUIdle,
		SyncOwnGPU, SyncOtherGPU, SyncNoGPU, OtherThreadOps}
	if has[nsys.TableRuntime] {
		set(CPUOther, Launch, SyncAPI, MemcpyAPI, Alloc, OtherAPI, APICalls, Launches, GraphLaunches, HostSyncs, AllocCalls,
			OtherThreadSyncNs, OtherThreadSyncs)
		set(gpu...)
		has[nsys.TableKernel], has[nsys.TableMemcpy], has[nsys.TableMemset], has[nsys.TableGraphTrace] = true, true, true, true
	}
	if has[nsys.TableKernel] {
		set(KernelCount, KernelSum, OtherThreadKernelNs)
		set(gpu...)
	}
	if has[nsys.TableMemcpy] {
		set(H2DCount, H2DBytes, H2DNs, D2HCount, D2HBytes, D2HNs, D2DCount, D2DBytes, D2DNs, P2PCount, P2PBytes, P2PNs, PageableCopies, PinnedCopies)
	}
	if has[nsys.TableMemset] {
		set(MemsetCount, MemsetBytes, MemsetNs)
	}
	if has[nsys.TableGraphTrace] {
		set(GraphTraceNs)
	}
	return m
}

// TestAbsentMaskFromSources: the null mask derived from the declared
// sources equals the hand-written one for every subset of absent activity
// tables.
func TestAbsentMaskFromSources(t *testing.T) {
	tables := []string{nsys.TableRuntime, nsys.TableKernel, nsys.TableMemcpy, nsys.TableMemset, nsys.TableGraphTrace}
	for set := range 1 << len(tables) {
		var absent []string
		for i, tb := range tables {
			if set&(1<<i) != 0 {
				absent = append(absent, tb)
			}
		}
		if got, want := absentMask(absent), handAbsentMask(absent); got != want {
			t.Errorf("absent %v: mask %b, want %b", absent, got, want)
		}
	}
	if absentMask(nil) != 0 {
		t.Errorf("nothing absent: mask %b", absentMask(nil))
	}
}

// TestUnannotatedNullFromAdditive: the (unannotated) row's null mask is the
// non-additive metrics, the list rest.go held by hand before.
func TestUnannotatedNullFromAdditive(t *testing.T) {
	var want uint64
	for _, m := range []Metric{GPUBusy, Proj, QueueMax, OverlapOtherProcess, OtherProcessGPU, GPUIdle, SyncOwnGPU, SyncOtherGPU, SyncNoGPU} {
		want |= 1 << uint(m)
	}
	if got := unannotatedNull(); got != want {
		t.Errorf("unannotatedNull = %b, want %b", got, want)
	}
}

// TestTableColumns: the default and --wide breakdown columns come from the
// declarations, in their places.
func TestTableColumns(t *testing.T) {
	names := func(ms []Metric) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name())
		}
		return out
	}
	check := func(what string, got []Metric, want []Metric) {
		if g, w := names(got), names(want); len(g) != len(w) || len(g) == 0 {
			t.Errorf("%s columns %v, want %v", what, g, w)
		} else {
			for i := range g {
				if g[i] != w[i] {
					t.Errorf("%s columns %v, want %v", what, g, w)
					break
				}
			}
		}
	}
	check("default", DefaultColumns(), []Metric{Wall, CPUOther, Launch, SyncAPI, MemcpyAPI, Alloc, OtherAPI, GPUBusy})
	check("wide", WideColumns(), []Metric{Wall, CPUOther, Launch, SyncAPI, MemcpyAPI, Alloc, OtherAPI, GPUBusy, KernelSum, Launches, HostSyncs})
	for _, m := range DefaultColumns() {
		if m.Info().Short == "" {
			t.Errorf("%s is in the default table without a Short header", m.Name())
		}
	}
}

// TestDeclareChecks: a declaration without a name, a known unit or
// Measure, with a taken name, a default column without a header, or past
// MaxMetrics is refused; Declare panics once the metrics were counted.
func TestDeclareChecks(t *testing.T) {
	measure := func(*Instance, []Op) int64 { return 0 }
	ok := MetricInfo{Name: "x_count", Unit: UnitCount, Measure: measure}
	if err := checkDeclaration(ok, numBuiltin); err != nil {
		t.Errorf("a sound declaration refused: %v", err)
	}
	bad := map[string]MetricInfo{
		"no name":    {Unit: UnitCount, Measure: measure},
		"unit":       {Name: "x_count", Unit: "µs", Measure: measure},
		"no Measure": {Name: "x_count", Unit: UnitCount},
		"taken":      {Name: "wall_ns", Unit: UnitNs, Measure: measure},
		"no header":  {Name: "x_count", Unit: UnitCount, Measure: measure, Default: 9},
	}
	for what, d := range bad {
		if err := checkDeclaration(d, numBuiltin); err == nil {
			t.Errorf("%s: declaration accepted", what)
		}
	}
	if err := checkDeclaration(ok, MaxMetrics); err == nil {
		t.Error("a metric past MaxMetrics accepted")
	}
	_ = NumMetrics()
	defer func() {
		if recover() == nil {
			t.Error("Declare after the metrics were counted: no panic")
		}
		if len(declared) != 0 {
			t.Errorf("declared %d metrics", len(declared))
		}
	}()
	Declare(ok)
}
