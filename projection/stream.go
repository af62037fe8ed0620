package projection

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"

	"github.com/nsysphase/nsysphase/internal/base/corrset"
	"github.com/nsysphase/nsysphase/internal/base/parts"
	"github.com/nsysphase/nsysphase/nsys"
)

// The vendor's projection in bounded memory. nsys writes the API and GPU-op
// tables in start order (the engine of package phases relies on it too), so
// the join of calls and ops runs as the tables stream: a call waits in its process's
// queue until no unread op can start before its end + margin, and is
// then handed, with the span of its ops, to its thread's stack sweep
// (attributeByStack, one call at a time). Nothing holds a table: only the
// calls of the last second or so, a bit per correlation id, and the NVTX
// ranges. Every assumption is checked as the rows come (API rows in start
// order, each op table in start order, correlation ids increasing per
// process, no repeated id, no wrapper rows, no op after its call was
// handed over, no call after an op of its id, the stack sweep's limits);
// when one fails, the projection starts over on the whole tables
// (readWhole), which gives the same answer for any input.

// margin is how long after a call ends its ops may still start before
// the call is handed over (the longest launch-to-start delay in
// large_interleaved is 13.6 ms).
const margin = 1_000_000_000

// errUnordered: the stream cannot serve this export; the whole-table
// path can.
var errUnordered = errors.New("vendor stream: input not in the order it relies on")

// streamCall is a call row as streamed.
type streamCall struct {
	globalTid, start, end, corr int64
	call                        bool
}

// rowPart is one decoded part of a table: its rows (those the join
// reads) and how many of all its rows end before they start.
type rowPart[T any] struct {
	rows     []T
	negative int64
}

// rowStream reads a table's parts, decoded ahead on all cores (package
// parts), row by row in table order.
type rowStream[T any] struct {
	ps       *parts.Stream[*rowPart[T]]
	cur      *rowPart[T]
	i        int
	done     bool
	err      error
	negative int64
}

// partRows is the rows of a part, as in the engine's stream source.
const partRows = 1 << 14

// startRows decodes table t's parts with scan, which appends a part's
// rows to the part it is given (emptied) and counts its negative rows.
func startRows[T any](stop <-chan struct{}, f *nsys.File, t string, scan func(r nsys.Part, p *rowPart[T]) error) *rowStream[T] {
	cut := f.SplitTable(t, int(f.RowEstimate(t)/partRows+1), partRows)
	ps := parts.Start(stop, cut, runtime.GOMAXPROCS(0)+1, 4, func(r nsys.Part, reuse *rowPart[T]) (*rowPart[T], error) {
		p := reuse
		if p == nil {
			p = &rowPart[T]{}
		}
		p.rows, p.negative = p.rows[:0], 0
		return p, scan(r, p)
	})
	return &rowStream[T]{ps: ps}
}

// peek returns the next row without consuming it (false at the end, or on
// an error, kept in err).
func (v *rowStream[T]) peek() (*T, bool) {
	for v.cur == nil || v.i >= len(v.cur.rows) {
		if v.done {
			return nil, false
		}
		if v.cur != nil {
			v.ps.Give(v.cur)
			v.cur = nil
		}
		p, ok, err := v.ps.Pull()
		if !ok || err != nil {
			v.done, v.err = true, err
			return nil, false
		}
		v.cur, v.i = p, 0
		v.negative += p.negative
	}
	return &v.cur.rows[v.i], true
}

func (v *rowStream[T]) advance() { v.i++ }

// pendingCall is a call waiting for its ops.
type pendingCall struct {
	globalTid, start, end, corr int64
	opStart, opEnd              int64
	hasOps                      bool
}

// procCalls is one process's calls in flight.
type procCalls struct {
	calls   []pendingCall // in start (and id) order; calls[head:] wait
	head    int
	lastID  int64
	callIDs corrset.Set // every call id read
	orphans corrset.Set // ids of ops read before any call of theirs
}

// threadSweep is a thread's stack sweep, fed one call at a time.
type threadSweep struct {
	t       *thread
	active  []int32
	next    int
	counter opCounter
}

// add attributes launch l (calls come in start order) as attributeByStack
// does; false when that sweep would give up.
func (s *threadSweep) add(l *launch, stackLimit int) bool {
	rs := s.t.ranges
	if l.end < l.start {
		return false
	}
	for s.next < len(rs) && rs[s.next].start <= l.start {
		s.active = append(s.active, int32(s.next))
		s.next++
	}
	if len(s.active) > stackLimit {
		return false
	}
	kept := s.active[:0]
	for _, ri := range s.active {
		r := &rs[ri]
		if r.end < l.start {
			continue
		}
		kept = append(kept, ri)
		if r.end >= l.end {
			s.counter.add(r, int(ri), l)
		}
	}
	s.active = kept
	return true
}

// projectStream is readWhole + project on the streamed
// tables; errUnordered when the stream cannot serve the export.
func projectStream(f *nsys.File, stackLimit int) (*input, error) {
	skippedBefore := f.Skipped()
	stop := make(chan struct{})
	defer close(stop) // the decoders still running stop at their next row
	api := startAPIRows(stop, f)
	streams := startOpStreams(stop, f)
	var nv nvtxScan
	if err := scanNVTX(context.Background(), f, &nv); err != nil {
		return nil, err
	}
	in := buildThreads(&nv)
	j := &streamJoin{
		api:          api,
		stackLimit:   stackLimit,
		procs:        map[int64]*procCalls{},
		sweeps:       make(map[int64]*threadSweep, len(in.threads)),
		lastAPIStart: math.MinInt64,
	}
	for _, t := range in.threads {
		in.diag.crossed += sortRanges(t)
		j.sweeps[t.globalTid] = &threadSweep{t: t, counter: opCounter{t: t}}
	}
	if err := j.run(streams); err != nil {
		return nil, err
	}
	if api.err != nil {
		return nil, api.err
	}
	for _, s := range streams {
		if s.b.err != nil {
			return nil, s.b.err
		}
	}
	for _, t := range in.threads {
		buildTree(t.ranges, stackLimit)
	}
	opsNegative := map[string]int64{}
	for _, s := range streams {
		if s.b.negative > 0 {
			opsNegative[s.table] = s.b.negative
		}
	}
	in.diag.finish(opsNegative, api.negative, &nv, f, skippedBefore)
	return in, nil
}

// startAPIRows starts decoding the CUDA API calls that carry a
// correlation id.
func startAPIRows(stop chan struct{}, f *nsys.File) *rowStream[streamCall] {
	return startRows(stop, f, nsys.TableRuntime, func(r nsys.Part, p *rowPart[streamCall]) error {
		n := 0
		for c, err := range f.APICallsCoreIn(r) {
			if err != nil {
				return fmt.Errorf("read CUDA API calls: %w", err)
			}
			if n++; n%checkEvery == 0 && parts.Stopped(stop) {
				return parts.ErrStopped
			}
			if c.End < c.Start {
				p.negative++
			}
			if c.CorrelationID != 0 {
				p.rows = append(p.rows, streamCall{c.GlobalTid, c.Start, c.End, c.CorrelationID, nsys.IsCallClass(c.EventClass)})
			}
		}
		return nil
	})
}

// opStream is one op table's decoded rows, read in start order.
type opStream struct {
	b     *rowStream[opRow]
	last  int64
	table string
}

// startOpStreams starts decoding every op table.
func startOpStreams(stop chan struct{}, f *nsys.File) []*opStream {
	var streams []*opStream
	for _, vt := range opTables {
		s := &opStream{table: vt.table, last: math.MinInt64}
		s.b = startRows(stop, f, vt.table, func(r nsys.Part, p *rowPart[opRow]) error {
			n := 0
			for o, err := range vt.scan(f, r) {
				if err != nil {
					return fmt.Errorf("read %s: %w", vt.noun, err)
				}
				if n++; n%checkEvery == 0 && parts.Stopped(stop) {
					return parts.ErrStopped
				}
				if o.end < o.start {
					p.negative++
				}
				p.rows = append(p.rows, o)
			}
			return nil
		})
		streams = append(streams, s)
	}
	return streams
}

// streamJoin joins the streamed ops to their calls by correlation id and
// hands each call, once no later op can join it, to its thread's sweep.
type streamJoin struct {
	api          *rowStream[streamCall]
	stackLimit   int
	procs        map[int64]*procCalls
	sweeps       map[int64]*threadSweep
	lastKey      int64
	last         *procCalls
	lastAPIStart int64
}

// run merges the op streams in start order and joins each op.
func (j *streamJoin) run(streams []*opStream) error {
	n := 0
	for {
		var next *opStream
		var op *opRow
		for _, s := range streams {
			if o, ok := s.b.peek(); ok && (op == nil || o.start < op.start) {
				next, op = s, o
			}
		}
		wm := int64(math.MaxInt64)
		if op != nil {
			wm = op.start
		}
		if err := j.readAPI(wm); err != nil {
			return err
		}
		if n++; op == nil || n%1024 == 0 {
			if err := j.handOver(wm); err != nil {
				return err
			}
		}
		if op == nil {
			return nil
		}
		o := *op
		next.b.advance()
		if o.start < next.last {
			return errUnordered
		}
		next.last = o.start
		if o.corr == 0 || o.processKey == 0 { // globalPid 0: joins nothing (opIndex.add)
			continue
		}
		if err := j.joinOp(&o); err != nil {
			return err
		}
	}
}

// procOf is the calls in flight of process key.
func (j *streamJoin) procOf(key int64) *procCalls {
	if j.last == nil || key != j.lastKey {
		j.lastKey, j.last = key, j.procs[key]
		if j.last == nil {
			j.last = &procCalls{lastID: math.MinInt64, callIDs: corrset.Set{}, orphans: corrset.Set{}}
			j.procs[key] = j.last
		}
	}
	return j.last
}

// readAPI reads the calls that start by wm.
func (j *streamJoin) readAPI(wm int64) error {
	for {
		c, ok := j.api.peek()
		if !ok || c.start > wm {
			return nil
		}
		j.api.advance()
		if !c.call || c.start < j.lastAPIStart || c.corr < 0 || c.corr > math.MaxInt32 {
			return errUnordered
		}
		j.lastAPIStart = c.start
		p := j.procOf(nsys.ProcessKey(c.globalTid))
		id := int32(c.corr)
		if c.corr <= p.lastID || p.orphans.Has(id) {
			return errUnordered // a repeated or decreasing id, or an op came first
		}
		p.lastID = c.corr
		p.callIDs.Add(id)
		p.calls = append(p.calls, pendingCall{globalTid: c.globalTid, start: c.start, end: c.end, corr: c.corr})
	}
}

// handOver passes the calls that end before wm − margin to their
// threads' sweeps.
func (j *streamJoin) handOver(wm int64) error {
	for _, p := range j.procs {
		for p.head < len(p.calls) {
			c := &p.calls[p.head]
			if wm != math.MaxInt64 && c.end >= wm-margin {
				break
			}
			if c.hasOps {
				if s := j.sweeps[c.globalTid]; s != nil {
					l := launch{start: c.start, end: c.end, opStart: c.opStart, opEnd: c.opEnd, corr: c.corr}
					if !s.add(&l, j.stackLimit) {
						return errUnordered
					}
				}
			}
			p.head++
		}
		if p.head > 4096 && p.head*2 > len(p.calls) {
			n := copy(p.calls, p.calls[p.head:])
			p.calls, p.head = p.calls[:n], 0
		}
	}
	return nil
}

// joinOp widens the op span of o's call, or records o as an orphan when
// its call has not been read.
func (j *streamJoin) joinOp(o *opRow) error {
	if o.corr < 0 || o.corr > math.MaxInt32 {
		return errUnordered
	}
	p := j.procOf(nsys.ProcessKey(o.processKey))
	id := int32(o.corr)
	w := p.calls[p.head:]
	k := sort.Search(len(w), func(i int) bool { return w[i].corr >= o.corr })
	switch {
	case k < len(w) && w[k].corr == o.corr:
		c := &w[k]
		if c.hasOps {
			c.opStart, c.opEnd = min(c.opStart, o.start), max(c.opEnd, o.end)
		} else {
			c.opStart, c.opEnd, c.hasOps = o.start, o.end, true
		}
	case p.callIDs.Has(id):
		return errUnordered // its call was handed over already
	default:
		p.orphans.Add(id)
	}
	return nil
}

// compute is the projection of f: streamed, or from the whole
// tables when the stream cannot serve the export.
func compute(f *nsys.File, stackLimit int) (*input, error) {
	in, err := projectStream(f, stackLimit)
	if !errors.Is(err, errUnordered) {
		return in, err
	}
	in, err = readWhole(f)
	if err != nil {
		return nil, err
	}
	in.project(stackLimit)
	return in, nil
}
