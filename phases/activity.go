package phases

// The activity reader: each activity table's row decode and row filter,
// written once. The engine's sources (source.go) decode rowid parts with
// decodeAPIPart and decodeOpPart (API calls and kernels by their core
// columns, the other GPU-op tables through opRows). Adding a GPU-op table means one
// opTables entry, one row function and one case in opRows.

import (
	"iter"

	"github.com/nsysphase/nsysphase/internal/base/parts"
	"github.com/nsysphase/nsysphase/nsys"
)

// The GPU-op tables, in the order a correlation id's ops are grouped.
const (
	srcKernel = iota
	srcMemcpy
	srcMemset
	srcGraph
	numSources
)

// opTables names each GPU-op table.
var opTables = [numSources]string{nsys.TableKernel, nsys.TableMemcpy, nsys.TableMemset, nsys.TableGraphTrace}

// opKind is the kind of a GPU operation.
type opKind uint8

const (
	opKernel opKind = iota
	opMemcpy
	opMemset
	opGraph // a whole-graph record of CUPTI_ACTIVITY_KIND_GRAPH_TRACE (graph trace mode)
)

// opRow is a row of any GPU-op table, decoded: every field the engine
// reads, at the table's own width (opFixer narrows it to a gpuOp).
type opRow struct {
	start, end int64
	globalPid  int64
	corr       int64 // correlation id; 0 where the table has none
	device     int64 // CUDA device id, per process
	bytes      int64 // copies and memsets
	kind       opKind
	copyKind   uint8 // nsys.Copy* for memcpy
	pageable   bool  // memcpy from or to pageable host memory
	graphNode  bool  // a kernel, memcpy or memset of a graph launch traced per node
}

// kernelCoreRow is a kernel's op from the columns nsys.File.KernelCoresIn
// hands over.
func kernelCoreRow(k *nsys.KernelCore) opRow {
	return opRow{start: k.Start, end: k.End, globalPid: k.GlobalPid, corr: k.CorrelationID, device: k.DeviceID, kind: opKernel, graphNode: k.GraphNodeID != 0}
}

// kernelRow is kernelCoreRow of a kernel row: opRows' kernel case (the
// engine itself reads kernels through KernelCoresIn).
func kernelRow(k nsys.Kernel) opRow {
	return kernelCoreRow(&nsys.KernelCore{Start: k.Start, End: k.End, GlobalPid: k.GlobalPid, DeviceID: k.DeviceID, CorrelationID: k.CorrelationID, GraphNodeID: k.GraphNodeID})
}

func memcpyRow(m nsys.Memcpy) opRow {
	pageable := (m.CopyKind == nsys.CopyHtoD && m.SrcKind == nsys.MemPageable) || (m.CopyKind == nsys.CopyDtoH && m.DstKind == nsys.MemPageable)
	return opRow{start: m.Start, end: m.End, globalPid: m.GlobalPid, corr: m.CorrelationID, device: m.DeviceID,
		bytes: m.Bytes, kind: opMemcpy, copyKind: uint8(m.CopyKind), pageable: pageable, graphNode: m.GraphNodeID != 0}
}

func memsetRow(m nsys.Memset) opRow {
	return opRow{start: m.Start, end: m.End, globalPid: m.GlobalPid, corr: m.CorrelationID, device: m.DeviceID,
		bytes: m.Bytes, kind: opMemset, graphNode: m.GraphNodeID != 0}
}

func graphRow(g nsys.GraphTrace) opRow {
	return opRow{start: g.Start, end: g.End, globalPid: g.GlobalPid, corr: g.CorrelationID, device: g.DeviceID, kind: opGraph}
}

// opRows streams the rows of GPU-op table src (srcKernel…) in rowid range
// r, then at most one error.
func opRows(f *nsys.File, src int, r nsys.Part) iter.Seq2[opRow, error] {
	return func(yield func(opRow, error) bool) {
		switch src {
		case srcKernel:
			rowsOf(f.KernelsCoreIn(r), kernelRow, yield)
		case srcMemcpy:
			rowsOf(f.MemcpysIn(r), memcpyRow, yield)
		case srcMemset:
			rowsOf(f.MemsetsIn(r), memsetRow, yield)
		case srcGraph:
			rowsOf(f.GraphTracesIn(r), graphRow, yield)
		}
	}
}

// rowsOf yields the rows of a table scan through its row function.
func rowsOf[T any](rows iter.Seq2[T, error], decode func(T) opRow, yield func(opRow, error) bool) {
	for v, err := range rows {
		if !yield(decode(v), err) || err != nil {
			return
		}
	}
}

// gpuOp is one GPU operation, compact: the big tables are reduced to this as
// they stream, and nothing else of their rows is kept.
type gpuOp struct {
	start, end int64
	bytes      int64
	pid        int32 // OS process id (correlation ids are per process)
	corr       int32 // correlation id (per process)
	gpu        int32 // physical GPU (TARGET_INFO_CUDA_DEVICE), else the process's deviceId
	kind       opKind
	copyKind   uint8 // nsys.Copy* for memcpy
	pageable   bool  // memcpy from or to pageable host memory
	graphNode  bool  // a kernel/memcpy of a graph launch traced per node
}

// streamCall is an API call as decoded, before its thread is looked up and
// its name classified.
type streamCall struct {
	start, end int64
	gtid       int64
	corr       int32
	name       uint32 // StringIds id
}

// apiPart is the calls of one rowid part of the API table, in table order,
// with the rows repaired or left out.
type apiPart struct {
	calls           []streamCall
	negAPI, badCorr int
}

// opPart is the ops of one rowid part of a GPU-op table, in table order.
type opPart struct {
	ops []gpuOp
	neg int // rows that ended before they started, made zero-length
}

// decodeAPIPart reads the calls of rowid range r into reuse's memory (or a
// new slice of capacity capHint). It gives up with parts.ErrStopped once stop is
// closed.
func decodeAPIPart(f *nsys.File, r nsys.Part, stop <-chan struct{}, reuse apiPart, capHint int) (apiPart, error) {
	p := apiPart{calls: reuse.calls[:0]}
	if cap(p.calls) < capHint {
		p.calls = make([]streamCall, 0, capHint)
	}
	// The core columns of each row, not nsys.APICall through an iterator:
	// a million rows per export, each a few nanoseconds cheaper.
	err := stoppable(f.APICoresIn, r, stop, func(c *nsys.APICore) {
		start, end, gtid, corr, name := c.Start, c.End, c.GlobalTid, c.CorrelationID, c.NameID
		if !nsys.IsCallClass(c.EventClass) {
			return
		}
		if corr > 1<<31-1 || name > 1<<31-1 {
			p.badCorr++
			return
		}
		if end < start { // a damaged row: zero length, counted
			end = start
			p.negAPI++
		}
		p.calls = append(p.calls, streamCall{start: start, end: end, gtid: gtid, corr: int32(corr), name: uint32(name)})
	})
	return p, err
}

// stoppable runs scan (nsys.File.APICoresIn or KernelCoresIn) over part r,
// handing each row to fn, and gives up with parts.ErrStopped once stop is
// closed.
func stoppable[T any](scan func(nsys.Part, func(*T) bool) error, r nsys.Part, stop <-chan struct{}, fn func(*T)) error {
	n := 0
	halted := false
	err := scan(r, func(v *T) bool {
		if n++; n&4095 == 0 && parts.Stopped(stop) {
			halted = true
			return false
		}
		fn(v)
		return true
	})
	if err == nil && halted {
		err = parts.ErrStopped
	}
	return err
}

// decodeOpPart reads the ops of table src in rowid range r, as
// decodeAPIPart reads calls.
func decodeOpPart(f *nsys.File, src int, r nsys.Part, gpuOf map[[2]int64]int32, stop <-chan struct{}, reuse opPart, capHint int) (opPart, error) {
	p := opPart{ops: reuse.ops[:0]}
	if cap(p.ops) < capHint {
		p.ops = make([]gpuOp, 0, capHint)
	}
	fix := opFixer{gpuOf: gpuOf, file: f}
	n := 0
	if src == srcKernel { // the biggest op table: its core columns, as for API calls
		err := stoppable(f.KernelCoresIn, r, stop, func(k *nsys.KernelCore) {
			p.ops = append(p.ops, fix.op(kernelCoreRow(k)))
		})
		p.neg = fix.neg
		return p, err
	}
	for o, err := range opRows(f, src, r) {
		if err != nil {
			return p, err
		}
		if n++; n&4095 == 0 && parts.Stopped(stop) {
			return p, parts.ErrStopped
		}
		p.ops = append(p.ops, fix.op(o))
	}
	p.neg = fix.neg
	return p, nil
}

// opFixer turns op rows into gpuOps, applying what every op needs: the
// physical GPU (device ids are per process; overlap needs the GPU) and a
// zero length for a damaged row that ends before it starts (counted in neg).
type opFixer struct {
	file    *nsys.File // JoinPid: processes by their full globalPid
	global  int64      // the last op's globalPid and its JoinPid (ops come in runs of one process)
	pid     int32
	pidOK   bool
	gpuOf   map[[2]int64]int32
	lastKey [2]int64
	lastGPU int32
	lastOK  bool
	cached  bool
	neg     int
}

func (x *opFixer) op(r opRow) gpuOp {
	if !x.pidOK || r.globalPid != x.global {
		x.global, x.pid, x.pidOK = r.globalPid, x.file.JoinPid(r.globalPid), true
	}
	o := gpuOp{start: r.start, end: r.end, bytes: r.bytes, pid: x.pid, corr: int32(r.corr), gpu: int32(r.device),
		kind: r.kind, copyKind: r.copyKind, pageable: r.pageable, graphNode: r.graphNode}
	if o.end < o.start {
		o.end = o.start
		x.neg++
	}
	key := [2]int64{int64(o.pid), int64(o.gpu)}
	if !x.cached || key != x.lastKey { // ops come in runs of one process and device
		x.lastGPU, x.lastOK = x.gpuOf[key]
		x.lastKey, x.cached = key, true
	}
	if x.lastOK {
		o.gpu = x.lastGPU
	}
	return o
}
