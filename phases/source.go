package phases

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sync/errgroup"

	"github.com/nsysphase/nsysphase/internal/base/parts"
	"github.com/nsysphase/nsysphase/nsys"
)

// activitySource hands the engine (sweep.go) the activity tables part by
// part: the API calls, and each GPU-op table (srcKernel…), each in start
// order as far as the source knows — the engine checks it. ok is false
// after the last part.
type activitySource interface {
	nextAPI() (p apiPart, ok bool, err error)
	nextOps(src int) (p opPart, ok bool, err error)
	// reuseAPI and reuseOps hand a consumed part back for its memory.
	reuseAPI(p apiPart)
	reuseOps(src int, p opPart)
	close() // stops the decoders; may be called more than once
}

// streamSource decodes the tables in rowid parts, several at once, ahead
// of the engine: memory follows the parts in flight, not the export. The
// rows come in table order, which nsys writes in start order.
type streamSource struct {
	stop      chan struct{}
	closeOnce sync.Once
	api       *parts.Stream[apiPart]
	ops       [numSources]*parts.Stream[opPart]
}

// readAheadBytes bounds the decoded parts in flight of one table: with
// GOMAXPROCS+1 parts each on 16 cores, the parts decoded ahead of the
// engine held ~30 MB of the sweep's ~70 MB live heap on large_interleaved
// (~45 MB on 2 cores). At 8 MiB (14 API parts, 11 kernel parts of 16Ki
// rows) the sweep's live heap is ~63 MB and the engine waited for parts
// about as long as before (GOMAXPROCS=16 on 2 cores); at 4 MiB, ~54 MB but
// three times the wait. Never fewer than minAhead (2 cores: GOMAXPROCS+1
// = 3, unchanged).
const (
	readAheadBytes = 8 << 20
	minAhead       = 3
)

// partsAhead is how many parts of capRows rows of rowBytes bytes to decode
// ahead on procs cores: one a core and one more, at most readAheadBytes of
// them, at least minAhead.
func partsAhead(procs, capRows int, rowBytes uintptr) int {
	n := readAheadBytes / max(1, capRows*int(rowBytes))
	return min(procs+1, max(minAhead, n))
}

// startStream starts decoding the API table and the GPU-op tables of f in
// parts of about partRows rows.
func startStream(f *nsys.File, gpuOf map[[2]int64]int32, partRows int64) *streamSource {
	s := &streamSource{stop: make(chan struct{})}
	stop := s.stop
	apiCap := partCap(f.RowEstimate(nsys.TableRuntime), partRows)
	ahead := partsAhead(runtime.GOMAXPROCS(0), apiCap, unsafe.Sizeof(streamCall{}))
	s.api = parts.Start(stop, partsOf(f, nsys.TableRuntime, partRows), ahead, ahead+1, func(r nsys.Part, reuse apiPart) (apiPart, error) {
		return decodeAPIPart(f, r, stop, reuse, apiCap)
	})
	for src, t := range opTables {
		opCap := partCap(f.RowEstimate(t), partRows)
		ahead := partsAhead(runtime.GOMAXPROCS(0), opCap, unsafe.Sizeof(gpuOp{}))
		// The engine keeps op parts until their ops are let go and then
		// hands back a window's worth at once: a longer free list lets the
		// decoders reuse them instead of allocating.
		s.ops[src] = parts.Start(stop, partsOf(f, t, partRows), ahead, ahead+1+opPartsKept, func(r nsys.Part, reuse opPart) (opPart, error) {
			return decodeOpPart(f, src, r, gpuOf, stop, reuse, opCap)
		})
	}
	return s
}

func (s *streamSource) nextAPI() (apiPart, bool, error)       { return s.api.Pull() }
func (s *streamSource) nextOps(src int) (opPart, bool, error) { return s.ops[src].Pull() }
func (s *streamSource) reuseAPI(p apiPart)                    { s.api.Give(p) }
func (s *streamSource) reuseOps(src int, p opPart)            { s.ops[src].Give(p) }
func (s *streamSource) close()                                { s.closeOnce.Do(func() { close(s.stop) }) }

// memorySource is the whole export in memory: every part decoded (as the
// stream source decodes them), joined, and sorted by start where the
// export is not. It hands each table over as one part, so the engine
// measures it in one window of unlimited length. It is the engine's
// fallback for exports whose rows are out of time order.
type memorySource struct {
	stream *streamSource
	loaded chan struct{}
	err    error
	api    *apiPart
	ops    [numSources]*opPart
}

// startMemory starts loading f in the background; the first part waits
// for it.
func startMemory(f *nsys.File, gpuOf map[[2]int64]int32, partRows int64) *memorySource {
	m := &memorySource{stream: startStream(f, gpuOf, partRows), loaded: make(chan struct{})}
	go func() {
		defer close(m.loaded)
		m.err = m.load()
	}()
	return m
}

// load collects every table's parts, each table on its own goroutine; an
// error stops the others.
func (m *memorySource) load() error {
	var (
		g     errgroup.Group
		once  sync.Once
		cause error // the first error, not the parts.ErrStopped it causes
	)
	fail := func(err error) error {
		once.Do(func() { cause = err })
		m.stream.close()
		return err
	}
	g.Go(func() error {
		parts, err := collect(m.stream.nextAPI)
		if err != nil {
			return fail(err)
		}
		api := &apiPart{}
		for _, p := range parts {
			api.negAPI += p.negAPI
			api.badCorr += p.badCorr
		}
		api.calls = joinParts(parts, func(p apiPart) []streamCall { return p.calls })
		// The engine wants calls in start order over all threads; ties
		// keep the table's order.
		if byStart := func(a, b streamCall) int { return cmp.Compare(a.start, b.start) }; !slices.IsSortedFunc(api.calls, byStart) {
			slices.SortStableFunc(api.calls, byStart)
		}
		m.api = api
		return nil
	})
	for src := range m.ops {
		g.Go(func() error {
			parts, err := collect(func() (opPart, bool, error) { return m.stream.nextOps(src) })
			if err != nil {
				return fail(err)
			}
			ops := &opPart{}
			for _, p := range parts {
				ops.neg += p.neg
			}
			ops.ops = joinParts(parts, func(p opPart) []gpuOp { return p.ops })
			if byStart := func(a, b gpuOp) int { return cmp.Compare(a.start, b.start) }; !slices.IsSortedFunc(ops.ops, byStart) {
				slices.SortStableFunc(ops.ops, byStart)
			}
			m.ops[src] = ops
			return nil
		})
	}
	if g.Wait() != nil {
		return cause // every error went through fail
	}
	return nil
}

// collect pulls every part of a stream.
func collect[T any](next func() (T, bool, error)) ([]T, error) {
	var out []T
	for {
		p, ok, err := next()
		if err != nil || !ok {
			return out, err
		}
		out = append(out, p)
	}
}

// joinParts concatenates the rows of parts, freeing each part as it goes.
func joinParts[P, T any](parts []P, rows func(P) []T) []T {
	n := 0
	for _, p := range parts {
		n += len(rows(p))
	}
	out := make([]T, 0, n)
	for i := range parts {
		out = append(out, rows(parts[i])...)
		var zero P
		parts[i] = zero
	}
	return out
}

func (m *memorySource) nextAPI() (apiPart, bool, error) {
	<-m.loaded
	if m.err != nil || m.api == nil {
		return apiPart{}, m.err != nil, m.err
	}
	p := *m.api
	m.api = nil // handed over: the engine's now
	return p, true, nil
}

func (m *memorySource) nextOps(src int) (opPart, bool, error) {
	<-m.loaded
	if m.err != nil || m.ops[src] == nil {
		return opPart{}, m.err != nil, m.err
	}
	p := *m.ops[src]
	m.ops[src] = nil
	return p, true, nil
}

func (m *memorySource) reuseAPI(apiPart)     {}
func (m *memorySource) reuseOps(int, opPart) {}
func (m *memorySource) close()               { m.stream.close() }

// opPartsKept is how many op parts beyond those in flight a table's free
// list holds: about a window's worth of the densest table
// (large_interleaved: ~20 parts of 16Ki kernels).
const opPartsKept = 24

// partsOf cuts table t into parts of about partRows rows.
func partsOf(f *nsys.File, t string, partRows int64) []nsys.Part {
	n := f.RowEstimate(t)/partRows + 1
	return f.SplitTable(t, int(n), partRows)
}

// partCap is the capacity a decoded part starts with: a part of a table
// of rows rows, split by partsOf, holds about partRows of them.
func partCap(rows, partRows int64) int {
	return int(min(rows, partRows+partRows/8) + 1)
}
