package phases

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/sync/errgroup"

	"github.com/nsysphase/nsysphase/nsys"
)

// vendorInput is an export reduced to what the vendor's projection needs:
// per thread, its kept ranges and its API calls that launched GPU work.
type vendorInput struct {
	threads []*vendorThread
	names   []vendorName
	diag    vendorDiag
}

// vendorDiag counts what the warnings report.
type vendorDiag struct {
	endBeforeStart        map[string]int64 // table → rows whose end precedes their start
	unclosed              int64            // NVTX range rows with a NULL end
	otherThreadEnds       int64            // NVTX range rows that ended on another thread
	unnamed               int64            // NVTX range rows with neither text nor textId
	danglingTextIDs       int64            // NVTX rows whose textId is not in StringIds
	crossed               int64            // closed push/pop ranges that overlap an enclosing one without nesting
	duplicateCorrelations int64            // runtime/driver calls repeating another call's (process, correlationId)
	skipped               map[string]int64 // table → rows the reader skipped during these scans
}

// vendorName is a resolved range name.
type vendorName struct{ domain, text, name, style string }

// vendorThread holds one thread's ranges and launching API calls.
type vendorThread struct {
	globalTid int64
	ranges    []vendorRange
	launches  []vendorLaunch
	// dupCorr holds the correlation ids that several API calls of the
	// process share (nil on a healthy export): a range counts each once.
	dupCorr map[int64]bool
}

// vendorLaunch is an API call that launched GPU work.
type vendorLaunch struct {
	start, end     int64 // the API call
	opStart, opEnd int64 // its GPU work
	corr           int64
}

// vendorSpan is the GPU work of one correlation id: its ops' first start and
// last end (a graph launch traced per node has many ops under one id).
type vendorSpan struct{ start, end int64 }

// vendorOpRow is a GPU op as scanned.
type vendorOpRow struct{ processKey, corr, start, end int64 }

// vendorProcOps indexes one process's GPU work by correlationId. Ids are
// small increasing integers, so a dense table from id to span is the fast
// path, and since ops and calls both come in id order its memory is read
// sequentially; ids too sparse for it go to a map.
type vendorProcOps struct {
	lo, hi int64   // id range of the ops
	count  int     // ops of the process
	dense  []int32 // id−lo → 1 + index into spans; 0: no op
	sparse map[int64]int32
	spans  []vendorSpan
}

// vendorDense reports whether ids lo..hi of rows rows fit a dense table:
// 1M ids always, else 64 ids per row, so its memory stays proportional to
// the input. Unsigned arithmetic keeps absurd ranges from overflowing.
func vendorDense(lo, hi int64, rows int) bool { return uint64(hi)-uint64(lo) < 1<<20+64*uint64(rows) }

func (p *vendorProcOps) add(corr, start, end int64) {
	var j int32
	if p.dense != nil {
		j = p.dense[corr-p.lo]
	} else {
		j = p.sparse[corr]
	}
	if j > 0 {
		s := &p.spans[j-1]
		s.start, s.end = min(s.start, start), max(s.end, end)
		return
	}
	p.spans = append(p.spans, vendorSpan{start, end})
	j = int32(len(p.spans))
	if p.dense != nil {
		p.dense[corr-p.lo] = j
	} else {
		p.sparse[corr] = j
	}
}

func (p *vendorProcOps) lookup(corr int64) (vendorSpan, bool) {
	var j int32
	if p.dense != nil {
		if corr < p.lo || corr > p.hi {
			return vendorSpan{}, false
		}
		j = p.dense[corr-p.lo]
	} else {
		j = p.sparse[corr]
	}
	if j == 0 {
		return vendorSpan{}, false
	}
	return p.spans[j-1], true
}

// vendorOps collects GPU ops by process (ProcessKey), then correlationId:
// correlation ids repeat across processes.
type vendorOps struct {
	procs map[int64]*vendorProcOps
	rows  []vendorOpRow

	lastKey int64 // rows of one process come in runs: cache its lookup
	last    *vendorProcOps
}

func newVendorOps() *vendorOps { return &vendorOps{procs: map[int64]*vendorProcOps{}} }

// add keeps one scanned GPU op, noting its process's id range. Process 0 or
// correlationId 0 (the reader's NULL) join nothing, as NULL joins nothing in
// the vendor's SQL.
func (o *vendorOps) add(globalPid, corr, start, end int64) {
	if corr == 0 || globalPid == 0 {
		return
	}
	key := nsys.ProcessKey(globalPid)
	if o.last == nil || key != o.lastKey {
		o.last = o.procs[key]
		if o.last == nil {
			o.last = &vendorProcOps{lo: corr, hi: corr}
			o.procs[key] = o.last
		}
		o.lastKey = key
	}
	p := o.last
	p.lo, p.hi = min(p.lo, corr), max(p.hi, corr)
	p.count++
	o.rows = append(o.rows, vendorOpRow{key, corr, start, end})
}

// index builds every process's id table from the scanned rows.
func (o *vendorOps) index() {
	for _, p := range o.procs {
		p.spans = make([]vendorSpan, 0, p.count)
		if vendorDense(p.lo, p.hi, p.count) {
			p.dense = make([]int32, p.hi-p.lo+1)
		} else {
			p.sparse = make(map[int64]int32, p.count)
		}
	}
	var lastKey int64
	var last *vendorProcOps
	for _, r := range o.rows {
		if last == nil || r.processKey != lastKey {
			lastKey, last = r.processKey, o.procs[r.processKey]
		}
		last.add(r.corr, r.start, r.end)
	}
	o.rows = nil
}

// vendorAPIRow is the part of an API call the join needs.
type vendorAPIRow struct{ globalTid, start, end, corr int64 }

// vendorAPI is the scanned rows of CUPTI_ACTIVITY_KIND_RUNTIME, with
// per-process id ranges (to find repeated ids) and per-thread counts (to size
// the launch lists).
type vendorAPI struct {
	rows []vendorAPIRow // runtime and driver calls
	// wrappers are the table's other rows: with --cudabacktrace, an
	// eventClass 67 row wraps each call and repeats its correlation id. The
	// vendor's SQL joins them like calls; they are kept apart only so that
	// they do not count as calls sharing an id.
	wrappers  []vendorAPIRow
	procs     map[int64]*vendorIDRange
	perThread map[int64]int
}

type vendorIDRange struct {
	lo, hi int64
	rows   int
}

// vendorIDSet is a set of one process's correlation ids: a bitmap over its id
// range, or a map when the ids are too sparse for one.
type vendorIDSet struct {
	lo     int64
	bits   []uint64
	sparse map[int64]bool
}

func newVendorIDSet(r *vendorIDRange) *vendorIDSet {
	if vendorDense(r.lo, r.hi, r.rows) {
		return &vendorIDSet{lo: r.lo, bits: make([]uint64, (r.hi-r.lo)/64+1)}
	}
	return &vendorIDSet{sparse: map[int64]bool{}}
}

// add inserts id and reports whether it was already there.
func (s *vendorIDSet) add(id int64) bool {
	if s.bits == nil {
		had := s.sparse[id]
		s.sparse[id] = true
		return had
	}
	i, bit := (id-s.lo)/64, uint64(1)<<((id-s.lo)%64)
	had := s.bits[i]&bit != 0
	s.bits[i] |= bit
	return had
}

// vendorRawRange is an NVTX range row before its name and open end resolve.
type vendorRawRange struct {
	globalTid, start, end int64
	hasEnd                bool
	pushPop               bool
	key                   int32 // index into vendorNVTX.keys
}

// vendorNameKey is what a range's name depends on; interning it keeps one
// string per distinct name instead of one per row.
type vendorNameKey struct {
	pid, domainID int64
	textID        int64 // -1: none
	text          string
	style         string
}

// vendorDomain is the earliest domain-create row of (pid, domainId).
type vendorDomain struct {
	start  int64
	textID int64  // -1: none
	text   string // NULL reads as "", which names the domain "" as NULL does
}

type vendorDomainKey struct{ pid, domainID int64 }

// vendorNVTX is what the NVTX scan collects.
type vendorNVTX struct {
	ranges  []vendorRawRange
	keys    []vendorNameKey
	domains map[vendorDomainKey]vendorDomain
	maxTS   int64         // largest start or end among range rows: the end of unclosed ranges
	haveTS  bool          // some range row exists
	strings *nsys.Strings // loaded only when some row uses a registered string

	unclosed, otherThreadEnds, endBeforeStart, unnamed, danglingTextIDs int64
}

// vendorCheckEvery is how many rows a scan reads between checks whether a
// sibling scan failed.
const vendorCheckEvery = 1 << 14

// vendorRowHint sizes a buffer for table t: the reader's estimate, capped by
// the file's size (no row takes under 16 bytes) so that a stray huge rowid
// cannot make it allocate gigabytes.
func vendorRowHint(f *nsys.File, t string) int64 {
	n := f.RowEstimate(t)
	if st, err := os.Stat(f.Disk); err == nil {
		n = min(n, st.Size()/16)
	}
	return n
}

// readVendorInput streams the three inputs concurrently, each scan on its own
// connection (GPU ops, API calls, NVTX events), then joins them. Row counts
// size the big buffers up front: growing them would copy tens of MiB.
func readVendorInput(f *nsys.File) (*vendorInput, error) {
	skippedBefore := f.Skipped()
	g, ctx := errgroup.WithContext(context.Background())
	ops := newVendorOps()
	api := &vendorAPI{procs: map[int64]*vendorIDRange{}, perThread: map[int64]int{}}
	var nv vendorNVTX
	var opsNegative map[string]int64
	var apiNegative int64
	g.Go(func() error {
		var err error
		opsNegative, err = scanVendorOps(ctx, f, ops)
		return err
	})
	g.Go(func() error {
		var err error
		apiNegative, err = scanVendorAPI(ctx, f, api)
		return err
	})
	g.Go(func() error { return scanVendorNVTX(ctx, f, &nv) })
	if err := g.Wait(); err != nil {
		return nil, err
	}

	in := joinVendorInput(&nv, ops, api)
	d := &in.diag
	d.endBeforeStart = opsNegative
	d.endBeforeStart[nsys.TableRuntime] = apiNegative
	d.endBeforeStart[nsys.TableNVTX] = nv.endBeforeStart
	d.unclosed, d.otherThreadEnds, d.unnamed, d.danglingTextIDs = nv.unclosed, nv.otherThreadEnds, nv.unnamed, nv.danglingTextIDs
	d.skipped = map[string]int64{}
	for t, n := range f.Skipped() {
		if n > skippedBefore[t] {
			d.skipped[t] = n - skippedBefore[t]
		}
	}
	return in, nil
}

// vendorOpTables are the GPU-op tables the vendor's projection joins (not
// graph-trace records), with what their read errors call them.
var vendorOpTables = []struct {
	src  int
	noun string
}{{srcKernel, "kernels"}, {srcMemcpy, "memcpys"}, {srcMemset, "memsets"}}

// scanVendorOps reads kernels, memcpys and memsets into ops and indexes them.
// It returns, per table, the rows that end before they start.
func scanVendorOps(ctx context.Context, f *nsys.File, ops *vendorOps) (map[string]int64, error) {
	var total int64
	for _, vt := range vendorOpTables {
		total += vendorRowHint(f, opTables[vt.src])
	}
	ops.rows = make([]vendorOpRow, 0, total)
	negative := map[string]int64{}
	n := 0
	for _, vt := range vendorOpTables {
		t := opTables[vt.src]
		for o, err := range opRows(f, vt.src, nsys.AllRows) {
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", vt.noun, err)
			}
			if n++; n%vendorCheckEvery == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if o.end < o.start {
				negative[t]++
			}
			ops.add(o.globalPid, o.corr, o.start, o.end)
		}
	}
	ops.index()
	return negative, nil
}

// scanVendorAPI reads the runtime and driver API calls into api. It returns
// how many end before they start.
func scanVendorAPI(ctx context.Context, f *nsys.File, api *vendorAPI) (int64, error) {
	api.rows = make([]vendorAPIRow, 0, vendorRowHint(f, nsys.TableRuntime))
	var negative int64
	var lastTid, lastKey int64
	var lastProc *vendorIDRange
	lastCount, n := 0, 0
	for c, err := range f.APICallsCoreIn(nsys.AllRows) { // column-pruned: the fields used below
		if err != nil {
			return 0, fmt.Errorf("read CUDA API calls: %w", err)
		}
		if n++; n%vendorCheckEvery == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if c.End < c.Start {
			negative++
		}
		if c.CorrelationID == 0 {
			continue // the reader's NULL: joins nothing
		}
		if lastCount == 0 || c.GlobalTid != lastTid {
			if lastCount > 0 {
				api.perThread[lastTid] += lastCount
			}
			lastTid, lastCount = c.GlobalTid, 0
		}
		lastCount++
		if key := nsys.ProcessKey(c.GlobalTid); lastProc == nil || key != lastKey {
			lastKey, lastProc = key, api.procs[key]
			if lastProc == nil {
				lastProc = &vendorIDRange{lo: c.CorrelationID, hi: c.CorrelationID}
				api.procs[key] = lastProc
			}
		}
		lastProc.lo, lastProc.hi = min(lastProc.lo, c.CorrelationID), max(lastProc.hi, c.CorrelationID)
		lastProc.rows++
		row := vendorAPIRow{c.GlobalTid, c.Start, c.End, c.CorrelationID}
		if nsys.IsCallClass(c.EventClass) {
			api.rows = append(api.rows, row)
		} else {
			api.wrappers = append(api.wrappers, row)
		}
	}
	if lastCount > 0 {
		api.perThread[lastTid] += lastCount
	}
	return negative, nil
}

func vendorStyle(eventType int64) string {
	if eventType == nsys.NVTXStartEnd || eventType == nsys.NVTXTStartEnd {
		return VendorStartEnd
	}
	return VendorPushPop
}

func scanVendorNVTX(ctx context.Context, f *nsys.File, nv *vendorNVTX) error {
	nv.domains = map[vendorDomainKey]vendorDomain{}
	keyIndex := map[vendorNameKey]int32{}
	textIDRows := map[int64]int64{} // registered string id → rows naming it
	n := 0
	for e, err := range f.NVTXEvents() {
		if err != nil {
			return fmt.Errorf("read NVTX events: %w", err)
		}
		if n++; n%vendorCheckEvery == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if e.HasEnd && e.End < e.Start {
			nv.endBeforeStart++
		}
		textID := int64(-1)
		if e.HasTextID {
			textID = e.TextID
			textIDRows[textID]++
		}
		if e.EventType == nsys.NVTXDomainCreate {
			k := vendorDomainKey{nsys.Pid(e.GlobalTid), e.DomainID}
			// The vendor names a domain after its earliest create row on a
			// thread; created on several threads of a process, it would list
			// the process's ranges once per thread (its R-tree insert then
			// fails). Here the earliest row of the process wins.
			if d, ok := nv.domains[k]; !ok || e.Start < d.start {
				nv.domains[k] = vendorDomain{start: e.Start, textID: textID, text: e.Text}
			}
			continue
		}
		if !nsys.IsRange(e.EventType) {
			continue
		}
		// Every range row, even one that ended on another thread, bounds
		// the end given to unclosed ranges.
		last := e.Start
		if e.HasEnd {
			last = max(last, e.End)
		} else {
			nv.unclosed++
		}
		if !nv.haveTS || last > nv.maxTS {
			nv.maxTS, nv.haveTS = last, true
		}
		if textID < 0 && e.Text == "" {
			nv.unnamed++
		}
		if e.HasEndTid {
			nv.otherThreadEnds++
			continue // not projected
		}
		k := vendorNameKey{pid: nsys.Pid(e.GlobalTid), domainID: e.DomainID, textID: textID, text: e.Text, style: vendorStyle(e.EventType)}
		ki, ok := keyIndex[k]
		if !ok {
			ki = int32(len(nv.keys))
			keyIndex[k] = ki
			nv.keys = append(nv.keys, k)
		}
		pushPop := e.EventType == nsys.NVTXPushPop || e.EventType == nsys.NVTXTPushPop
		nv.ranges = append(nv.ranges, vendorRawRange{globalTid: e.GlobalTid, start: e.Start, end: e.End, hasEnd: e.HasEnd,
			pushPop: pushPop, key: ki})
	}
	if len(textIDRows) > 0 {
		s, err := f.Strings()
		if err != nil {
			return fmt.Errorf("read registered NVTX strings: %w", err)
		}
		nv.strings = s
		for id, rows := range textIDRows {
			if _, ok := s.Get(id); !ok {
				nv.danglingTextIDs += rows
			}
		}
	}
	return nil
}

// resolveText is the vendor's coalesce(StringIds.value, text).
func (nv *vendorNVTX) resolveText(textID int64, text string) string {
	if textID >= 0 && nv.strings != nil {
		if s, ok := nv.strings.Get(textID); ok {
			return s
		}
	}
	return text
}

// joinVendorInput resolves names, joins API calls to their GPU work and
// groups ranges and launches by thread.
func joinVendorInput(nv *vendorNVTX, ops *vendorOps, api *vendorAPI) *vendorInput {
	in, threadIndex := buildVendorThreads(nv)
	for _, t := range in.threads {
		t.launches = make([]vendorLaunch, 0, api.perThread[t.globalTid])
	}
	return joinVendorAPI(in, threadIndex, ops, api)
}

// buildVendorThreads resolves the ranges' names and groups the ranges by
// thread (in order of each thread's first range).
func buildVendorThreads(nv *vendorNVTX) (*vendorInput, map[int64]*vendorThread) {
	in := &vendorInput{}
	// Names: (domain, text, style) may come from several interned keys (the
	// same text as a registered and a plain string); rows group by the result.
	nameIndex := map[vendorName]int32{}
	keyName := make([]int32, len(nv.keys))
	for i, k := range nv.keys {
		var domain string
		if d, ok := nv.domains[vendorDomainKey{k.pid, k.domainID}]; ok {
			domain = nv.resolveText(d.textID, d.text)
		}
		text := nv.resolveText(k.textID, k.text)
		vn := vendorName{domain: domain, text: text, name: domain + ":" + text, style: k.style}
		ni, ok := nameIndex[vn]
		if !ok {
			ni = int32(len(in.names))
			nameIndex[vn] = ni
			in.names = append(in.names, vn)
		}
		keyName[i] = ni
	}

	threadIndex := map[int64]*vendorThread{}
	for _, r := range nv.ranges {
		t := threadIndex[r.globalTid]
		if t == nil {
			t = &vendorThread{globalTid: r.globalTid}
			threadIndex[r.globalTid] = t
			in.threads = append(in.threads, t)
		}
		end := r.end
		if !r.hasEnd {
			end = nv.maxTS
		}
		t.ranges = append(t.ranges, vendorRange{start: r.start, end: end, name: keyName[r.key],
			closedPushPop: r.pushPop && r.hasEnd && r.globalTid != 0})
	}
	return in, threadIndex
}

// joinVendorAPI joins the API calls to their GPU work into the threads'
// launch lists.
func joinVendorAPI(in *vendorInput, threadIndex map[int64]*vendorThread, ops *vendorOps, api *vendorAPI) *vendorInput {

	// Every row is checked for a repeated id; only rows on threads that hold
	// ranges can count. Rows of one thread and of one process come in runs,
	// so the last lookups are cached.
	type procState struct {
		ids *vendorIDSet
		ops *vendorProcOps
	}
	procs := map[int64]*procState{}
	var dupWithOps map[[2]int64]bool // (process, id) repeated and launching work
	join := func(rows []vendorAPIRow, calls bool) {
		var lastTid, lastKey int64
		var lastThread *vendorThread
		var lastProc *procState
		for i, c := range rows {
			if key := nsys.ProcessKey(c.globalTid); lastProc == nil || key != lastKey {
				lastKey, lastProc = key, procs[key]
				if lastProc == nil {
					lastProc = &procState{ids: newVendorIDSet(api.procs[key]), ops: ops.procs[key]}
					procs[key] = lastProc
				}
			}
			dup := lastProc.ids.add(c.corr)
			if dup && calls {
				in.diag.duplicateCorrelations++
			}
			if i == 0 || c.globalTid != lastTid {
				lastTid, lastThread = c.globalTid, threadIndex[c.globalTid]
			}
			if lastThread == nil || lastProc.ops == nil {
				continue
			}
			s, ok := lastProc.ops.lookup(c.corr)
			if !ok {
				continue
			}
			if dup {
				if dupWithOps == nil {
					dupWithOps = map[[2]int64]bool{}
				}
				dupWithOps[[2]int64{lastKey, c.corr}] = true
			}
			lastThread.launches = append(lastThread.launches, vendorLaunch{start: c.start, end: c.end, opStart: s.start, opEnd: s.end, corr: c.corr})
		}
	}
	join(api.rows, true)
	join(api.wrappers, false)
	// Rare: ids that several launching calls share. The first call of each
	// was kept before the repeat showed, so mark them all now.
	if dupWithOps == nil {
		return in
	}
	for _, t := range in.threads {
		key := nsys.ProcessKey(t.globalTid)
		for _, l := range t.launches {
			if dupWithOps[[2]int64{key, l.corr}] {
				if t.dupCorr == nil {
					t.dupCorr = map[int64]bool{}
				}
				t.dupCorr[l.corr] = true
			}
		}
	}
	return in
}
