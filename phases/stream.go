package phases

import (
	"errors"
	"runtime"

	"github.com/nsysphase/nsysphase/nsys"
)

// partStream decodes a table's rowid parts ahead of its consumer, several
// at once, and hands them over in table order. At most ahead parts are
// decoded or decoding beyond the one being consumed, which bounds memory.
type partStream[T any] struct {
	results []chan partResult[T]
	tokens  chan struct{}
	free    chan T // consumed parts, for decoders to reuse their memory
	next    int
}

type partResult[T any] struct {
	v   T
	err error
}

// errStopped ends a decoder whose consumer has gone.
var errStopped = errors.New("stopped")

func startParts[T any](stop <-chan struct{}, parts []nsys.RowRange, ahead int, decode func(r nsys.RowRange, reuse T) (T, error)) *partStream[T] {
	p := &partStream[T]{results: make([]chan partResult[T], len(parts)), tokens: make(chan struct{}, ahead), free: make(chan T, ahead+1)}
	for i := range p.results {
		p.results[i] = make(chan partResult[T], 1)
	}
	go func() {
		for i, r := range parts {
			select {
			case p.tokens <- struct{}{}:
			case <-stop:
				return
			}
			var reuse T
			select {
			case reuse = <-p.free:
			default:
			}
			go func() {
				v, err := decode(r, reuse)
				p.results[i] <- partResult[T]{v, err}
			}()
		}
	}()
	return p
}

// pull returns the next part; ok is false after the last.
func (p *partStream[T]) pull() (v T, ok bool, err error) {
	if p.next >= len(p.results) {
		return v, false, nil
	}
	r := <-p.results[p.next]
	p.results[p.next] = nil
	p.next++
	<-p.tokens
	return r.v, true, r.err
}

// give hands a consumed part back for reuse.
func (p *partStream[T]) give(v T) {
	select {
	case p.free <- v:
	default:
	}
}

// stopped reports whether stop is closed; decoders poll it between rows.
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// streamCall is an API row as decoded, before its thread is looked up.
type streamCall struct {
	start, end int64
	gtid       int64
	corr       int32
	name       uint32
}

type apiPart struct {
	calls           []streamCall
	negAPI, badCorr int
}

type opPart struct {
	ops []gpuOp
	neg int
}

// partsOf cuts table t into parts of about sweepPartRows rows.
func partsOf(f *nsys.File, t string) []nsys.RowRange {
	n := f.RowHint(t)/sweepPartRows + 1
	return f.Split(t, int(n), sweepPartRows)
}

// partCap is the capacity a decoded part starts with: a part of a table
// of rows rows, split by partsOf, holds about sweepPartRows of them.
func partCap(rows int64) int {
	return int(min(rows, sweepPartRows+sweepPartRows/8) + 1)
}

// startStreams starts decoding the API table and the four GPU-op tables.
func (s *sweep) startStreams(f *nsys.File, gpuOf map[[2]int64]int32) {
	ahead := runtime.GOMAXPROCS(0) + 1
	stop := s.stop
	apiRows := f.RowHint(nsys.TableRuntime)
	s.api = startParts(stop, partsOf(f, nsys.TableRuntime), ahead, func(r nsys.RowRange, reuse apiPart) (apiPart, error) {
		p := apiPart{calls: reuse.calls[:0]}
		if n := partCap(apiRows); cap(p.calls) < n {
			p.calls = make([]streamCall, 0, n)
		}
		n := 0
		for c, err := range f.APICallsCore(r) {
			if err != nil {
				return p, err
			}
			if n++; n&4095 == 0 && stopped(stop) {
				return p, errStopped
			}
			// With --cudabacktrace each traced call also appears as an
			// eventClass 67 "CUDA backtrace" row that wraps it and repeats
			// its correlation id: only runtime and driver rows are calls.
			if c.EventClass != nsys.ClassRuntime && c.EventClass != nsys.ClassDriver {
				continue
			}
			if c.CorrelationID > 1<<31-1 || c.NameID > 1<<31-1 {
				p.badCorr++
				continue
			}
			if c.End < c.Start { // a damaged row: zero length, counted
				c.End = c.Start
				p.negAPI++
			}
			p.calls = append(p.calls, streamCall{start: c.Start, end: c.End, gtid: c.GlobalTid, corr: int32(c.CorrelationID), name: uint32(c.NameID)})
		}
		return p, nil
	})
	// Each table's loop appends to the part itself: a callback per row
	// cost a tenth of the decoding.
	opParts := func(t string, each func(r nsys.RowRange, p *opPart, fix *opFixer) error) *partStream[opPart] {
		rows := f.RowHint(t)
		return startParts(stop, partsOf(f, t), ahead, func(r nsys.RowRange, reuse opPart) (opPart, error) {
			p := opPart{ops: reuse.ops[:0]}
			if n := partCap(rows); cap(p.ops) < n {
				p.ops = make([]gpuOp, 0, n)
			}
			fix := opFixer{gpuOf: gpuOf}
			err := each(r, &p, &fix)
			p.neg = fix.neg
			return p, err
		})
	}
	s.ops[srcKernel] = opParts(nsys.TableKernel, func(r nsys.RowRange, p *opPart, fix *opFixer) error {
		n := 0
		for k, err := range f.KernelOps(r) {
			if err != nil {
				return err
			}
			if n++; n&4095 == 0 && stopped(stop) {
				return errStopped
			}
			p.ops = append(p.ops, fix.op(gpuOp{start: k.Start, end: k.End, pid: int32(nsys.Pid(k.GlobalPid)), corr: int32(k.CorrelationID), gpu: int32(k.DeviceID), kind: opKernel, graphNode: k.GraphNodeID != 0}))
		}
		return nil
	})
	s.ops[srcMemcpy] = opParts(nsys.TableMemcpy, func(r nsys.RowRange, p *opPart, fix *opFixer) error {
		n := 0
		for m, err := range f.MemcpysIn(r) {
			if err != nil {
				return err
			}
			if n++; n&4095 == 0 && stopped(stop) {
				return errStopped
			}
			pageable := (m.CopyKind == nsys.CopyHtoD && m.SrcKind == nsys.MemPageable) || (m.CopyKind == nsys.CopyDtoH && m.DstKind == nsys.MemPageable)
			p.ops = append(p.ops, fix.op(gpuOp{start: m.Start, end: m.End, bytes: m.Bytes, pid: int32(nsys.Pid(m.GlobalPid)), corr: int32(m.CorrelationID), gpu: int32(m.DeviceID), kind: opMemcpy, copyKind: uint8(m.CopyKind), pageable: pageable, graphNode: m.GraphNodeID != 0}))
		}
		return nil
	})
	s.ops[srcMemset] = opParts(nsys.TableMemset, func(r nsys.RowRange, p *opPart, fix *opFixer) error {
		n := 0
		for m, err := range f.MemsetsIn(r) {
			if err != nil {
				return err
			}
			if n++; n&4095 == 0 && stopped(stop) {
				return errStopped
			}
			p.ops = append(p.ops, fix.op(gpuOp{start: m.Start, end: m.End, bytes: m.Bytes, pid: int32(nsys.Pid(m.GlobalPid)), corr: int32(m.CorrelationID), gpu: int32(m.DeviceID), kind: opMemset, graphNode: m.GraphNodeID != 0}))
		}
		return nil
	})
	s.ops[srcGraph] = opParts(nsys.TableGraphTrace, func(r nsys.RowRange, p *opPart, fix *opFixer) error {
		n := 0
		for g, err := range f.GraphTracesIn(r) {
			if err != nil {
				return err
			}
			if n++; n&4095 == 0 && stopped(stop) {
				return errStopped
			}
			p.ops = append(p.ops, fix.op(gpuOp{start: g.Start, end: g.End, pid: int32(nsys.Pid(g.GlobalPid)), corr: int32(g.CorrelationID), gpu: int32(g.DeviceID), kind: opGraph}))
		}
		return nil
	})
}
