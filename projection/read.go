package projection

import (
	"context"
	"fmt"
	"iter"
	"os"

	"golang.org/x/sync/errgroup"

	"github.com/nsysphase/nsysphase/nsys"
)

// input is an export reduced to what the vendor's projection needs:
// per thread, its kept ranges and its API calls that launched GPU work.
type input struct {
	threads []*thread
	names   []rangeName
	diag    diagnostics
}

// diagnostics counts what the warnings report.
type diagnostics struct {
	endBeforeStart        map[string]int64 // table → rows whose end precedes their start
	unclosed              int64            // NVTX range rows with a NULL end
	otherThreadEnds       int64            // NVTX range rows that ended on another thread
	unnamed               int64            // NVTX range rows with neither text nor textId
	danglingTextIDs       int64            // NVTX rows whose textId is not in StringIds
	crossed               int64            // closed push/pop ranges that overlap an enclosing one without nesting
	duplicateCorrelations int64            // runtime/driver calls repeating another call's (process, correlationId)
	skipped               map[string]int64 // table → rows the reader skipped during these scans
}

// rangeName is a resolved range name.
type rangeName struct{ domain, text, name, style string }

// thread holds one thread's ranges and launching API calls.
type thread struct {
	globalTid int64
	ranges    []nvtxRange
	launches  []launch
	// dupCorr holds the correlation ids that several API calls of the
	// process share (nil on a healthy export): a range counts each once.
	dupCorr map[int64]bool
}

// launch is an API call that launched GPU work.
type launch struct {
	start, end     int64 // the API call
	opStart, opEnd int64 // its GPU work
	corr           int64
}

// opSpan is the GPU work of one correlation id: its ops' first start and
// last end (a graph launch traced per node has many ops under one id).
type opSpan struct{ start, end int64 }

// opRow is a GPU op as scanned: processKey is the row's globalPid
// until opIndex.add keeps it, by its ProcessKey.
type opRow struct{ processKey, corr, start, end int64 }

// procOps indexes one process's GPU work by correlationId. Ids are
// small increasing integers, so a dense table from id to span is the fast
// path, and since ops and calls both come in id order its memory is read
// sequentially; ids too sparse for it go to a map.
type procOps struct {
	lo, hi int64   // id range of the ops
	count  int     // ops of the process
	dense  []int32 // id−lo → 1 + index into spans; 0: no op
	sparse map[int64]int32
	spans  []opSpan
}

// fitsDense reports whether ids lo..hi of rows rows fit a dense table:
// 1M ids always, else 64 ids per row, so its memory stays proportional to
// the input. Unsigned arithmetic keeps absurd ranges from overflowing.
func fitsDense(lo, hi int64, rows int) bool { return uint64(hi)-uint64(lo) < 1<<20+64*uint64(rows) }

func (p *procOps) add(corr, start, end int64) {
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
	p.spans = append(p.spans, opSpan{start, end})
	j = int32(len(p.spans))
	if p.dense != nil {
		p.dense[corr-p.lo] = j
	} else {
		p.sparse[corr] = j
	}
}

func (p *procOps) lookup(corr int64) (opSpan, bool) {
	var j int32
	if p.dense != nil {
		if corr < p.lo || corr > p.hi {
			return opSpan{}, false
		}
		j = p.dense[corr-p.lo]
	} else {
		j = p.sparse[corr]
	}
	if j == 0 {
		return opSpan{}, false
	}
	return p.spans[j-1], true
}

// opIndex collects GPU ops by process (ProcessKey), then correlationId:
// correlation ids repeat across processes.
type opIndex struct {
	procs map[int64]*procOps
	rows  []opRow

	lastKey int64 // rows of one process come in runs: cache its lookup
	last    *procOps
}

func newOpIndex() *opIndex { return &opIndex{procs: map[int64]*procOps{}} }

// add keeps one scanned GPU op, noting its process's id range. Process 0 or
// correlationId 0 (the reader's NULL) join nothing, as NULL joins nothing in
// the vendor's SQL.
func (o *opIndex) add(globalPid, corr, start, end int64) {
	if corr == 0 || globalPid == 0 {
		return
	}
	key := nsys.ProcessKey(globalPid)
	if o.last == nil || key != o.lastKey {
		o.last = o.procs[key]
		if o.last == nil {
			o.last = &procOps{lo: corr, hi: corr}
			o.procs[key] = o.last
		}
		o.lastKey = key
	}
	p := o.last
	p.lo, p.hi = min(p.lo, corr), max(p.hi, corr)
	p.count++
	o.rows = append(o.rows, opRow{key, corr, start, end})
}

// index builds every process's id table from the scanned rows.
func (o *opIndex) index() {
	for _, p := range o.procs {
		p.spans = make([]opSpan, 0, p.count)
		if fitsDense(p.lo, p.hi, p.count) {
			p.dense = make([]int32, p.hi-p.lo+1)
		} else {
			p.sparse = make(map[int64]int32, p.count)
		}
	}
	var lastKey int64
	var last *procOps
	for _, r := range o.rows {
		if last == nil || r.processKey != lastKey {
			lastKey, last = r.processKey, o.procs[r.processKey]
		}
		last.add(r.corr, r.start, r.end)
	}
	o.rows = nil
}

// apiRow is the part of an API call the join needs.
type apiRow struct{ globalTid, start, end, corr int64 }

// apiScan is the scanned rows of CUPTI_ACTIVITY_KIND_RUNTIME, with
// per-process id ranges (to find repeated ids) and per-thread counts (to size
// the launch lists).
type apiScan struct {
	rows []apiRow // runtime and driver calls
	// wrappers are the table's other rows: with --cudabacktrace, an
	// eventClass 67 row wraps each call and repeats its correlation id. The
	// vendor's SQL joins them like calls; they are kept apart only so that
	// they do not count as calls sharing an id.
	wrappers  []apiRow
	procs     map[int64]*idRange
	perThread map[int64]int
}

type idRange struct {
	lo, hi int64
	rows   int
}

// idSet is a set of one process's correlation ids: a bitmap over its id
// range, or a map when the ids are too sparse for one.
type idSet struct {
	lo     int64
	bits   []uint64
	sparse map[int64]bool
}

func newIDSet(r *idRange) *idSet {
	if fitsDense(r.lo, r.hi, r.rows) {
		return &idSet{lo: r.lo, bits: make([]uint64, (r.hi-r.lo)/64+1)}
	}
	return &idSet{sparse: map[int64]bool{}}
}

// add inserts id and reports whether it was already there.
func (s *idSet) add(id int64) bool {
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

// openRange is a range left open: its end is set once the scan has seen
// every range row (nvtxScan.maxTS).
type openRange struct {
	t *thread
	i int
}

// nameKey is what a range's name depends on; interning it keeps one
// string per distinct name instead of one per row.
type nameKey struct {
	pid, domainID int64
	textID        int64 // -1: none
	text          string
	style         string
}

// domainRow is the earliest domain-create row of (pid, domainId).
type domainRow struct {
	start  int64
	textID int64  // -1: none
	text   string // NULL reads as "", which names the domain "" as NULL does
}

type domainKey struct{ pid, domainID int64 }

// nvtxScan is what the NVTX scan collects.
type nvtxScan struct {
	// threads hold the ranges as scanned (in order of each thread's first
	// range), named by their key index until buildThreads resolves it:
	// filing them at once spares a second copy of every range.
	threads     []*thread
	threadIndex map[int64]*thread
	last        *thread // the thread of the previous row: rows come in runs
	open        []openRange
	keys        []nameKey
	domains     map[domainKey]domainRow
	maxTS       int64         // largest start or end among range rows: the end of unclosed ranges
	haveTS      bool          // some range row exists
	strings     *nsys.Strings // loaded only when some row uses a registered string

	unclosed, otherThreadEnds, endBeforeStart, unnamed, danglingTextIDs int64
}

// checkEvery is how many rows a scan reads between checks whether a
// sibling scan failed.
const checkEvery = 1 << 14

// rowHint sizes a buffer for table t: the reader's estimate, capped by
// the file's size (no row takes under 16 bytes) so that a stray huge rowid
// cannot make it allocate gigabytes.
func rowHint(f *nsys.File, t string) int64 {
	n := f.RowEstimate(t)
	if st, err := os.Stat(f.Disk); err == nil {
		n = min(n, st.Size()/16)
	}
	return n
}

// readWhole streams the three inputs concurrently, each scan on its own
// connection (GPU ops, API calls, NVTX events), then joins them. Row counts
// size the big buffers up front: growing them would copy tens of MiB.
func readWhole(f *nsys.File) (*input, error) {
	skippedBefore := f.Skipped()
	g, ctx := errgroup.WithContext(context.Background())
	ops := newOpIndex()
	api := &apiScan{procs: map[int64]*idRange{}, perThread: map[int64]int{}}
	var nv nvtxScan
	var opsNegative map[string]int64
	var apiNegative int64
	g.Go(func() error {
		var err error
		opsNegative, err = scanOps(ctx, f, ops)
		return err
	})
	g.Go(func() error {
		var err error
		apiNegative, err = scanAPI(ctx, f, api)
		return err
	})
	g.Go(func() error { return scanNVTX(ctx, f, &nv) })
	if err := g.Wait(); err != nil {
		return nil, err
	}

	in := joinInput(&nv, ops, api)
	in.diag.finish(opsNegative, apiNegative, &nv, f, skippedBefore)
	return in, nil
}

// finish records what the scans found: per table, the rows that end before
// they start (opsNegative holds the op tables' and becomes the map), the
// NVTX findings, and the rows f skipped since skippedBefore.
func (d *diagnostics) finish(opsNegative map[string]int64, apiNegative int64, nv *nvtxScan, f *nsys.File, skippedBefore map[string]int64) {
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
}

// opTables are the GPU-op tables the vendor's projection joins (not
// graph-trace records), with what their read errors call them and their
// scan of one part as the rows the join reads.
var opTables = []struct {
	table, noun string
	scan        func(f *nsys.File, p nsys.Part) iter.Seq2[opRow, error]
}{
	{nsys.TableKernel, "kernels", func(f *nsys.File, p nsys.Part) iter.Seq2[opRow, error] {
		return opRowsOf(f.KernelsCoreIn(p), func(k *nsys.Kernel) opRow {
			return opRow{k.GlobalPid, k.CorrelationID, k.Start, k.End}
		})
	}},
	{nsys.TableMemcpy, "memcpys", func(f *nsys.File, p nsys.Part) iter.Seq2[opRow, error] {
		return opRowsOf(f.MemcpysIn(p), func(m *nsys.Memcpy) opRow {
			return opRow{m.GlobalPid, m.CorrelationID, m.Start, m.End}
		})
	}},
	{nsys.TableMemset, "memsets", func(f *nsys.File, p nsys.Part) iter.Seq2[opRow, error] {
		return opRowsOf(f.MemsetsIn(p), func(m *nsys.Memset) opRow {
			return opRow{m.GlobalPid, m.CorrelationID, m.Start, m.End}
		})
	}},
}

// opRowsOf yields what the join reads of each row of a GPU-op table's
// scan, then at most one error.
func opRowsOf[T any](rows iter.Seq2[T, error], row func(*T) opRow) iter.Seq2[opRow, error] {
	return func(yield func(opRow, error) bool) {
		for v, err := range rows {
			if err != nil {
				yield(opRow{}, err)
				return
			}
			if !yield(row(&v), nil) {
				return
			}
		}
	}
}

// scanOps reads kernels, memcpys and memsets into ops and indexes them.
// It returns, per table, the rows that end before they start.
func scanOps(ctx context.Context, f *nsys.File, ops *opIndex) (map[string]int64, error) {
	var total int64
	for _, vt := range opTables {
		total += rowHint(f, vt.table)
	}
	ops.rows = make([]opRow, 0, total)
	negative := map[string]int64{}
	n := 0
	for _, vt := range opTables {
		for o, err := range vt.scan(f, nsys.AllRows) {
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", vt.noun, err)
			}
			if n++; n%checkEvery == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if o.end < o.start {
				negative[vt.table]++
			}
			ops.add(o.processKey, o.corr, o.start, o.end)
		}
	}
	ops.index()
	return negative, nil
}

// scanAPI reads the runtime and driver API calls into api. It returns
// how many end before they start.
func scanAPI(ctx context.Context, f *nsys.File, api *apiScan) (int64, error) {
	api.rows = make([]apiRow, 0, rowHint(f, nsys.TableRuntime))
	var negative int64
	var lastTid, lastKey int64
	var lastProc *idRange
	lastCount, n := 0, 0
	for c, err := range f.APICallsCoreIn(nsys.AllRows) { // column-pruned: the fields used below
		if err != nil {
			return 0, fmt.Errorf("read CUDA API calls: %w", err)
		}
		if n++; n%checkEvery == 0 && ctx.Err() != nil {
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
				lastProc = &idRange{lo: c.CorrelationID, hi: c.CorrelationID}
				api.procs[key] = lastProc
			}
		}
		lastProc.lo, lastProc.hi = min(lastProc.lo, c.CorrelationID), max(lastProc.hi, c.CorrelationID)
		lastProc.rows++
		row := apiRow{c.GlobalTid, c.Start, c.End, c.CorrelationID}
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

func styleOf(eventType int64) string {
	if eventType == nsys.NVTXStartEnd || eventType == nsys.NVTXTStartEnd {
		return StartEnd
	}
	return PushPop
}

func scanNVTX(ctx context.Context, f *nsys.File, nv *nvtxScan) error {
	nv.domains = map[domainKey]domainRow{}
	keyIndex := map[nameKey]int32{}
	textIDRows := map[int64]int64{} // registered string id → rows naming it
	n := 0
	for e, err := range f.NVTXEvents() {
		if err != nil {
			return fmt.Errorf("read NVTX events: %w", err)
		}
		if n++; n%checkEvery == 0 && ctx.Err() != nil {
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
			k := domainKey{nsys.Pid(e.GlobalTid), e.DomainID}
			// The vendor names a domain after its earliest create row on a
			// thread; created on several threads of a process, it would list
			// the process's ranges once per thread (its R-tree insert then
			// fails). Here the earliest row of the process wins.
			if d, ok := nv.domains[k]; !ok || e.Start < d.start {
				nv.domains[k] = domainRow{start: e.Start, textID: textID, text: e.Text}
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
		k := nameKey{pid: nsys.Pid(e.GlobalTid), domainID: e.DomainID, textID: textID, text: e.Text, style: styleOf(e.EventType)}
		ki, ok := keyIndex[k]
		if !ok {
			ki = int32(len(nv.keys))
			keyIndex[k] = ki
			nv.keys = append(nv.keys, k)
		}
		pushPop := e.EventType == nsys.NVTXPushPop || e.EventType == nsys.NVTXTPushPop
		nv.addRange(e.GlobalTid, e.Start, e.End, e.HasEnd, pushPop, ki)
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

// addRange files a range row under its thread, named by its key index; an
// unclosed one (hasEnd false) gets its end in buildThreads.
func (nv *nvtxScan) addRange(globalTid, start, end int64, hasEnd, pushPop bool, key int32) {
	t := nv.last
	if t == nil || t.globalTid != globalTid {
		if nv.threadIndex == nil {
			nv.threadIndex = map[int64]*thread{}
		}
		t = nv.threadIndex[globalTid]
		if t == nil {
			t = &thread{globalTid: globalTid}
			nv.threadIndex[globalTid] = t
			nv.threads = append(nv.threads, t)
		}
		nv.last = t
	}
	if !hasEnd {
		nv.open = append(nv.open, openRange{t, len(t.ranges)})
	}
	t.ranges = append(t.ranges, nvtxRange{start: start, end: end, name: key,
		closedPushPop: pushPop && hasEnd && globalTid != 0})
}

// resolveText is the vendor's coalesce(StringIds.value, text).
func (nv *nvtxScan) resolveText(textID int64, text string) string {
	if textID >= 0 && nv.strings != nil {
		if s, ok := nv.strings.Get(textID); ok {
			return s
		}
	}
	return text
}

// joinInput resolves names, joins API calls to their GPU work and
// groups ranges and launches by thread.
func joinInput(nv *nvtxScan, ops *opIndex, api *apiScan) *input {
	in := buildThreads(nv)
	for _, t := range in.threads {
		t.launches = make([]launch, 0, api.perThread[t.globalTid])
	}
	return joinAPI(in, nv.threadIndex, ops, api)
}

// buildThreads resolves the names of the ranges addRange filed by thread,
// and the ends of those left open.
func buildThreads(nv *nvtxScan) *input {
	in := &input{}
	// Names: (domain, text, style) may come from several interned keys (the
	// same text as a registered and a plain string); rows group by the result.
	nameIndex := map[rangeName]int32{}
	keyName := make([]int32, len(nv.keys))
	for i, k := range nv.keys {
		var domain string
		if d, ok := nv.domains[domainKey{k.pid, k.domainID}]; ok {
			domain = nv.resolveText(d.textID, d.text)
		}
		text := nv.resolveText(k.textID, k.text)
		vn := rangeName{domain: domain, text: text, name: domain + ":" + text, style: k.style}
		ni, ok := nameIndex[vn]
		if !ok {
			ni = int32(len(in.names))
			nameIndex[vn] = ni
			in.names = append(in.names, vn)
		}
		keyName[i] = ni
	}

	for _, t := range nv.threads {
		for i := range t.ranges {
			t.ranges[i].name = keyName[t.ranges[i].name]
		}
	}
	for _, o := range nv.open {
		o.t.ranges[o.i].end = nv.maxTS
	}
	in.threads = nv.threads
	return in
}

// joinAPI joins the API calls to their GPU work into the threads'
// launch lists; threadIndex (nvtxScan's, nil when no range was read) finds
// a thread by globalTid.
func joinAPI(in *input, threadIndex map[int64]*thread, ops *opIndex, api *apiScan) *input {

	// Every row is checked for a repeated id; only rows on threads that hold
	// ranges can count. Rows of one thread and of one process come in runs,
	// so the last lookups are cached.
	type procState struct {
		ids *idSet
		ops *procOps
	}
	procs := map[int64]*procState{}
	var dupWithOps map[[2]int64]bool // (process, id) repeated and launching work
	join := func(rows []apiRow, calls bool) {
		var lastTid, lastKey int64
		var lastThread *thread
		var lastProc *procState
		for i, c := range rows {
			if key := nsys.ProcessKey(c.globalTid); lastProc == nil || key != lastKey {
				lastKey, lastProc = key, procs[key]
				if lastProc == nil {
					lastProc = &procState{ids: newIDSet(api.procs[key]), ops: ops.procs[key]}
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
			lastThread.launches = append(lastThread.launches, launch{start: c.start, end: c.end, opStart: s.start, opEnd: s.end, corr: c.corr})
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
