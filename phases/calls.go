package phases

import (
	"slices"

	"github.com/nsysphase/nsysphase/nsys"
)

// CallFlags describe what one recorded API call did.
type CallFlags uint16

const (
	CallLaunch   CallFlags = 1 << iota // kernel or graph launch
	CallGraph                          // cudaGraphLaunch / cuGraphLaunch
	CallCopy                           // a memcpy API (cudaMemcpy*, cuMemcpy*)
	CallMemset                         // a memset API
	CallAlloc                          // an allocation
	CallFree                           // a free
	CallGPUWork                        // it produced GPU work: kernels, copies, memsets or graph records
	CallPageable                       // one of its copies reads or writes pageable host memory
)

// CallRecord is one top-level CUDA API call inside a step instance, recorded
// by the attribution pass when Options.Calls is set. Each call belongs to
// exactly one instance: the deepest measured instance whose range contains
// its start (a phase, or the step itself outside every phase).
type CallRecord struct {
	Start     int64  // call start on the export's clock (ns)
	Dur       int64  // host time from its start to its end, clipped to its instance's end
	Bytes     int64  // bytes of the call's copies and memsets; 0 without any
	Callchain int64  // CUDA_CALLCHAINS id of its backtrace; 0 when none was recorded
	Instance  int32  // index into Result.Instances
	API       uint16 // index into Result.CallAPIs
	Flags     CallFlags
	Cat       APICategory // where its host time went (launch, sync, memcpy_api, alloc, other_api)
	sync      uint8       // index into syncKinds
	CopyKind  uint8       // nsys.Copy* of its first copy; 0 without copies
	// For a call that made the host wait (Sync() != SyncNone): Dur split
	// by what the process's GPUs ran meanwhile, as sync_own_gpu_ns,
	// sync_other_gpu_ns and sync_no_gpu_ns split sync_ns. Zero otherwise.
	OwnGPUNs, OtherGPUNs, NoGPUNs int64
}

// syncKinds maps CallRecord.sync to SyncKind (0 = none).
var syncKinds = [...]SyncKind{SyncNone, SyncStream, SyncDevice, SyncEvent, SyncContext, SyncCopy, SyncMemset, SyncPageable, SyncFree}

// Sync says how the call made the host wait; SyncNone when it did not.
func (c CallRecord) Sync() SyncKind { return syncKinds[c.sync] }

// Is reports whether every flag of f is set.
func (c CallRecord) Is(f CallFlags) bool { return c.Flags&f == f }

// callRecorder collects CallRecords during attribution. Steps are measured
// before their phases, so a phase re-owns the records its step made: the
// step's records are kept in call order with their thread call index beside
// them (stepCalls) to find them again by binary search.
type callRecorder struct {
	tr        *trace
	records   []CallRecord
	step      int32   // instance index of the current step; -1 before the first
	stepBase  int     // index in records of the current step's first record
	stepCalls []int32 // thread call index of each record of the current step
	ownDepth  []int32 // depth of the instance that owns each record of the current step
	chains    map[[2]int32]int64
	ctx       gpuScratch
}

// newCallRecorder prepares recording; it reads the calls' backtrace ids only
// when the export holds backtraces (the reduced trace does not keep them).
func newCallRecorder(tr *trace) (*callRecorder, error) {
	r := &callRecorder{step: -1, tr: tr}
	f := tr.file
	if !f.HasTable(nsys.TableCallchains) || !f.HasColumn(nsys.TableRuntime, "callchainId") {
		return r, nil
	}
	r.chains = map[[2]int32]int64{}
	for c, err := range f.APICalls() {
		if err != nil {
			return nil, err
		}
		if c.CallchainID != 0 && c.CorrelationID > 0 && c.CorrelationID <= 1<<31-1 {
			r.chains[[2]int32{tr.file.JoinPid(c.GlobalTid), int32(c.CorrelationID)}] = c.CallchainID
		}
	}
	return r, nil
}

// add records top-level call i of the thread for instance x (index inst),
// whose range ends at end.
func (r *callRecorder) add(x *Instance, inst int32, pid int32, i int, c apiCall, cls apiClass, cat APICategory, sync SyncKind, ops []gpuOp, end int64) {
	dur := min(c.end, end) - c.start
	if x.IsStep {
		if inst != r.step {
			r.step, r.stepBase = inst, len(r.records)
			r.stepCalls, r.ownDepth = r.stepCalls[:0], r.ownDepth[:0]
		}
		r.records = append(r.records, r.record(inst, pid, c, cls, cat, sync, ops, dur))
		r.splitWait(&r.records[len(r.records)-1], pid, end)
		r.stepCalls = append(r.stepCalls, int32(i))
		r.ownDepth = append(r.ownDepth, 0)
		return
	}
	k, found := slices.BinarySearch(r.stepCalls, int32(i))
	if !found {
		// A phase outside any measured step of its thread cannot happen
		// (phases are the step's descendants); record it on its own.
		r.records = append(r.records, r.record(inst, pid, c, cls, cat, sync, ops, dur))
		r.splitWait(&r.records[len(r.records)-1], pid, end)
		return
	}
	// Deeper wins; of overlapping siblings (start/end ranges) the first.
	if int32(x.Depth) > r.ownDepth[k] {
		rec := &r.records[r.stepBase+k]
		rec.Instance, rec.Dur = inst, dur
		r.splitWait(rec, pid, end)
		r.ownDepth[k] = int32(x.Depth)
	}
}

// splitWait splits the host time of a call that waits by what the
// process's GPUs ran meanwhile (the GPUs of its instance, which ends at end).
func (r *callRecorder) splitWait(rec *CallRecord, pid int32, end int64) {
	if rec.Sync() == SyncNone {
		return
	}
	rec.OwnGPUNs, rec.OtherGPUNs, rec.NoGPUNs = r.ctx.split(r.tr, pid, rec.Start, rec.Start+rec.Dur, end)
}

func (r *callRecorder) record(inst int32, pid int32, c apiCall, cls apiClass, cat APICategory, sync SyncKind, ops []gpuOp, dur int64) CallRecord {
	rec := CallRecord{Start: c.start, Dur: dur, Instance: inst, API: c.class(), Cat: cat}
	for k, s := range syncKinds {
		if s == sync {
			rec.sync = uint8(k)
			break
		}
	}
	if cls.isLaunch {
		rec.Flags |= CallLaunch
	}
	if cls.isGraph {
		rec.Flags |= CallGraph
	}
	if cls.isCopy {
		rec.Flags |= CallCopy
	}
	if cls.isAlloc {
		rec.Flags |= CallAlloc
	}
	if cls.isFree {
		rec.Flags |= CallFree
	}
	if len(ops) > 0 {
		rec.Flags |= CallGPUWork
	}
	for _, o := range ops {
		switch o.kind {
		case opMemcpy:
			rec.Bytes += o.bytes
			if rec.CopyKind == 0 {
				rec.CopyKind = o.copyKind
			}
			if o.pageable {
				rec.Flags |= CallPageable
			}
		case opMemset:
			rec.Bytes += o.bytes
			rec.Flags |= CallMemset
		}
	}
	if isMemsetAPI(cls) {
		rec.Flags |= CallMemset // also when its op was not traced
	}
	if r.chains != nil {
		rec.Callchain = r.chains[[2]int32{pid, c.corr}]
	}
	return rec
}

// isMemsetAPI: classifyAPI gives memsets no flag of their own; they are the
// memcpy_api calls that are not copies, and the synchronous memsets.
func isMemsetAPI(cls apiClass) bool {
	return (cls.cat == CatMemcpyAPI && !cls.isCopy) || cls.sync == SyncMemset
}

// finish hands the records to the result.
func (r *callRecorder) finish(tr *trace, res *Result) {
	res.Calls = r.records
	res.CallAPIs = slices.Clone(tr.names)
}
