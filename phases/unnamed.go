package phases

import (
	"github.com/nsysphase/nsysphase/internal/base/corrset"
	"github.com/nsysphase/nsysphase/nsys"
)

// A CUDA API call whose nameId StringIds lacks has no name to classify. What
// the GPU side recorded under its (pid, correlationId) still says what it
// did; unnamedClass reads it. Exports without such calls never read the
// SYNCHRONIZATION table: the engine reads it (readSyncEvidence) on meeting
// the first nameless call.

// noEvent is the eventId of a SYNCHRONIZATION record that names no event
// (CUPTI_SYNCHRONIZATION_INVALID_VALUE).
const noEvent = 1<<32 - 1

// CUPTI's syncType values (ENUM_CUPTI_SYNC_TYPE) that say "stream".
const (
	syncTypeStreamWaitEvent = 2 // also every cudaStreamSynchronize of nsys 2025.3, with no event
	syncTypeStreamSync      = 3
)

// syncEvidence holds, per process, the correlation ids of the
// SYNCHRONIZATION records that name no event: those of a stream, device or
// context synchronize, calls that block the host. A record naming an event
// is left out: cudaEventSynchronize blocks, but cudaEventQuery and
// cudaStreamWaitEvent leave such records too and do not, and syncType does
// not tell them apart (exports give cudaEventQuery syncType 1,
// EVENT_SYNCHRONIZE, or 2, and cudaEventSynchronize 1 or 2).
type syncEvidence struct {
	stream map[int32]*corrset.Set // syncType 2 or 3: a stream synchronize
	device map[int32]*corrset.Set // any other: a device or context synchronize
}

// readSyncEvidence reads the event-less records of f's SYNCHRONIZATION
// table; an export without the table or its eventId column has none.
func readSyncEvidence(f *nsys.File) (*syncEvidence, error) {
	ev := &syncEvidence{stream: map[int32]*corrset.Set{}, device: map[int32]*corrset.Set{}}
	if !f.HasTable(nsys.TableSync) || !f.HasColumn(nsys.TableSync, "eventId") {
		return ev, nil
	}
	for r, err := range f.Syncs() {
		if err != nil {
			return nil, err
		}
		if r.EventID != noEvent && r.EventID != -1 || r.CorrelationID <= 0 || r.CorrelationID > 1<<31-1 {
			continue // an event's, or no call's
		}
		sets := ev.device
		if r.SyncType == syncTypeStreamWaitEvent || r.SyncType == syncTypeStreamSync {
			sets = ev.stream
		}
		corrSetOf(sets, f.JoinPid(r.GlobalPid)).Add(int32(r.CorrelationID))
	}
	return ev, nil
}

// kind is how call (pid, corr) blocked, by its SYNCHRONIZATION record;
// SyncNone without an event-less one.
func (ev *syncEvidence) kind(pid, corr int32) SyncKind {
	switch {
	case ev == nil:
		return SyncNone
	case ev.stream[pid].Has(corr):
		return SyncStream
	case ev.device[pid].Has(corr):
		return SyncDevice
	}
	return SyncNone
}

// unnamedClass classifies a nameless call of process pid by its GPU-side
// records: ops, its GPU operations, and its SYNCHRONIZATION record. A call
// that launched a kernel or a graph is a launch (a graph launch when the
// kernels are graph nodes or the record a whole graph); one that left an
// event-less synchronization record is a sync; one that copied is a copy
// (memcpy_api, or sync when the copy touches pageable memory, as category
// decides for named copies); one that set memory a memset (memcpy_api).
// Anything else stays other_api. A blocking cudaMemcpy or cudaMemset of
// pinned memory leaves nothing that tells it from its Async form: it
// counts as memcpy_api.
func (tr *trace) unnamedClass(pid, corr int32, ops []gpuOp) apiClass {
	cls := apiClass{cat: CatOther, dangling: true}
	copied, set := false, false
	for _, o := range ops {
		switch o.kind {
		case opKernel, opGraph:
			cls.cat, cls.isLaunch = CatLaunch, true
			cls.isGraph = cls.isGraph || o.kind == opGraph || o.graphNode
		case opMemcpy:
			copied = true
		case opMemset:
			set = true
		}
	}
	switch {
	case cls.isLaunch:
	case copied:
		cls.cat, cls.isCopy = CatMemcpyAPI, true
	case set:
		cls.cat = CatMemcpyAPI
	default:
		if k := tr.syncs.kind(pid, corr); k != SyncNone {
			cls.cat, cls.sync = CatSync, k
		}
	}
	return cls
}
