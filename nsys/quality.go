package nsys

import (
	"cmp"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"zombiezen.com/go/sqlite"

	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// Quality counts rows that can be read but are odd: the export is usable,
// and the oddity travels with the results as a warning instead of stopping
// the command or being silently absorbed. Every count is 0 on a healthy
// export (all bundled fixtures are).
type Quality struct {
	// EndBeforeStart counts, per table, rows whose end precedes their start.
	// Their negative durations are kept as recorded, as `nsys stats` does.
	EndBeforeStart map[string]int64
	// NonIntegerTimes counts, per table, rows whose start or end is stored as
	// text or a blob: it reads as a number, usually 0.
	NonIntegerTimes map[string]int64
	// UnclosedRanges counts NVTX ranges with a NULL end: a push without a
	// pop, a start without an end, or a capture that stopped inside them.
	UnclosedRanges int64
	// OtherThreadEnds counts NVTX ranges that ended on another thread
	// (endGlobalTid set); the vendor's nvtx_gpu_proj_sum leaves them out.
	OtherThreadEnds int64
	// CrossedRanges counts closed push/pop ranges that overlap an enclosing
	// range of the same thread without nesting in it: an unbalanced stack.
	CrossedRanges int64
	// UnnamedRanges counts NVTX ranges with neither text nor textId.
	UnnamedRanges int64
	// DanglingTextIDs counts NVTX rows whose textId is not in StringIds.
	DanglingTextIDs int64
	// DuplicateCorrelations counts CUDA API calls whose (process,
	// correlationId) another call of the same process also has, so GPU work
	// joined on it cannot be told apart. Filled from
	// ActivitySummary.DuplicateCorrelations.
	DuplicateCorrelations int64
}

// timedTables are the tables whose rows have start and end timestamps.
var timedTables = []string{TableKernel, TableMemcpy, TableMemset, TableSync, TableRuntime, TableGraphTrace, TableOSRT, TableNVTX}

// CheckQuality scans the export for readable-but-odd rows: CheckRanges,
// then CheckTimes. Its memory does not grow with the file.
// DuplicateCorrelations is left 0: SummarizeActivity counts it in its pass
// over the API calls (ActivitySummary), and Describe reports both.
func (f *File) CheckQuality() (*Quality, error) {
	q, err := f.CheckRanges()
	if err != nil {
		return nil, err
	}
	if err := f.CheckTimes(q); err != nil {
		return nil, err
	}
	return q, nil
}

// CheckRanges counts the NVTX oddities (unclosed, other-thread ends,
// unnamed, dangling textIds, crossed push/pop ranges) into a new Quality
// with aggregate queries and one ordered pass over the push/pop ranges.
// The queries run on a connection of their own, not the shared metadata
// connection: analyze runs them beside the segmentation, which reads the
// small tables through that one.
func (f *File) CheckRanges() (*Quality, error) {
	c, err := f.conn()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	query := func(q string, fn func(*sqlite.Stmt) error) error { return queryConn(c, q, fn) }
	q := &Quality{EndBeforeStart: map[string]int64{}, NonIntegerTimes: map[string]int64{}}
	if ok, err := f.checkRangePages(q, query); err != nil || ok {
		if err != nil {
			return nil, f.readError("cannot check "+TableNVTX, err)
		}
		return q, nil
	}
	if err := f.checkNVTX(q, query); err != nil {
		return nil, err
	}
	if err := f.checkCrossedRanges(q, query); err != nil {
		return nil, err
	}
	return q, nil
}

// CheckTimes counts into q, for every timed table, the rows that end before
// they start and the rows whose start or end is text or a blob. A table
// whose every row an earlier page scan of this File has read (the engine's
// decoders read the activity and NVTX tables whole) is not read again:
// those scans counted as they went.
func (f *File) CheckTimes(q *Quality) error {
	if q.EndBeforeStart == nil {
		q.EndBeforeStart = map[string]int64{}
	}
	if q.NonIntegerTimes == nil {
		q.NonIntegerTimes = map[string]int64{}
	}
	return f.checkTimes(q)
}

const rangeTypes = "eventType IN (59, 60, 70, 71)"

// queryFunc runs a query, calling fn on each row.
type queryFunc func(q string, fn func(*sqlite.Stmt) error) error

func (f *File) checkNVTX(q *Quality, query queryFunc) error {
	t := TableNVTX
	if !f.HasTable(t) || !f.HasColumn(t, "eventType") {
		return nil
	}
	has := func(c string) bool { return f.HasColumn(t, c) }
	// Each expression is guarded by the columns it needs; absent ones count 0.
	exprs := []struct {
		ok   bool
		expr string
		dst  *int64
	}{
		{has("end"), rangeTypes + ` AND "end" IS NULL`, &q.UnclosedRanges},
		{has("endGlobalTid"), rangeTypes + " AND endGlobalTid IS NOT NULL", &q.OtherThreadEnds},
		{has("text") && has("textId"), rangeTypes + " AND text IS NULL AND textId IS NULL", &q.UnnamedRanges},
		{has("textId") && f.HasColumn(TableStrings, "id"), "textId IS NOT NULL AND NOT EXISTS (SELECT 1 FROM StringIds s WHERE s.id = textId)", &q.DanglingTextIDs},
	}
	var sel []string
	var dst []*int64
	for _, e := range exprs {
		if e.ok {
			sel = append(sel, "coalesce(sum("+e.expr+"), 0)")
			dst = append(dst, e.dst)
		}
	}
	if len(sel) == 0 {
		return nil
	}
	err := query("SELECT "+strings.Join(sel, ", ")+" FROM "+quoteIdent(t), func(st *sqlite.Stmt) error {
		for i, d := range dst {
			*d = st.ColumnInt64(i)
		}
		return nil
	})
	if err != nil {
		return f.readError("cannot check "+t, err)
	}
	return nil
}

// checkCrossedRanges walks the closed push/pop ranges of each thread in start
// order with a stack of the enclosing ranges: a range that starts inside the
// innermost open range must also end inside it.
func (f *File) checkCrossedRanges(q *Quality, query queryFunc) error {
	t := TableNVTX
	for _, c := range []string{"start", "end", "eventType", "globalTid"} {
		if !f.HasColumn(t, c) {
			return nil
		}
	}
	sql := `SELECT globalTid, start, "end" FROM NVTX_EVENTS WHERE eventType IN (59, 70) AND "end" IS NOT NULL AND globalTid IS NOT NULL ORDER BY globalTid, start, "end" DESC`
	var c crossedCounter
	err := query(sql, func(st *sqlite.Stmt) error {
		c.add(st.ColumnInt64(0), st.ColumnInt64(1), st.ColumnInt64(2))
		return nil
	})
	if err != nil {
		return f.readError("cannot check NVTX push/pop ranges", err)
	}
	q.CrossedRanges = c.n
	return nil
}

// crossedCounter counts crossed push/pop ranges, handed one at a time in
// the order (thread, start, end descending), with a stack of the enclosing
// ranges' ends: a range that starts inside the innermost open range must
// also end inside it.
type crossedCounter struct {
	tid     int64
	started bool
	stack   []int64 // ends of the enclosing ranges, innermost last
	n       int64
}

func (c *crossedCounter) add(tid, start, end int64) {
	if !c.started || tid != c.tid {
		c.tid, c.started, c.stack = tid, true, c.stack[:0]
	}
	for len(c.stack) > 0 && c.stack[len(c.stack)-1] <= start {
		c.stack = c.stack[:len(c.stack)-1]
	}
	if len(c.stack) > 0 && end > c.stack[len(c.stack)-1] {
		c.n++
	}
	c.stack = append(c.stack, end)
}

// countDuplicates counts ids that repeat an earlier id of the same process;
// it sorts the slices in place. correlationId 0 means "none": callers leave
// it out.
func countDuplicates(byProc map[int64][]int64) int64 {
	var n int64
	for _, ids := range byProc {
		slices.Sort(ids)
		for i := 1; i < len(ids); i++ {
			if ids[i] == ids[i-1] {
				n++
			}
		}
	}
	return n
}

// Warnings words every non-zero count as one warning about path.
func (q *Quality) Warnings(path string) []Warning { return q.WarningsNoted(path, QualityNotes{}) }

// QualityNotes replace the explanation in parentheses of some warnings, for
// a consumer whose own rules treat those rows in a particular way (the
// vendor's nvtx_gpu_proj_sum view); an empty note keeps the default.
type QualityNotes struct {
	Unclosed, Unnamed, DanglingTextIDs, DuplicateCorrelations, OtherThreadEnds string
}

// WarningsNoted is Warnings with the explanations of notes.
func (q *Quality) WarningsNoted(path string, notes QualityNotes) []Warning {
	var out []Warning
	add := func(code, format string, args ...any) {
		out = append(out, FileWarning(code, path, format, args...))
	}
	or := func(note, def string) string {
		if note != "" {
			return note
		}
		return def
	}
	for _, t := range timedTables {
		if n := q.EndBeforeStart[t]; n > 0 {
			add(WarnEndBeforeStart, "%d %s of %s %s before %s (%s kept as recorded, as nsys stats does)",
				n, plural.Of(n, "row", "rows"), t, plural.Of(n, "ends", "end"), plural.Of(n, "it starts", "they start"), plural.Of(n, "its negative duration is", "their negative durations are"))
		}
		if n := q.NonIntegerTimes[t]; n > 0 {
			add(WarnNonIntegerTime, "%d %s of %s %s a start or end stored as text or a blob (it reads as a number, usually 0)", n, plural.Of(n, "row", "rows"), t, plural.Of(n, "has", "have"))
		}
	}
	if q.UnclosedRanges > 0 {
		add(WarnUnclosedRange, "%d NVTX %s never closed (%s)", q.UnclosedRanges, plural.Of(q.UnclosedRanges, "range was", "ranges were"), or(notes.Unclosed, "NULL end: a push without a pop, a start without an end, or a capture that stopped inside them"))
	}
	if q.CrossedRanges > 0 {
		add(WarnUnbalancedRange, "%d NVTX push/pop %s an enclosing range of the same thread without nesting in it (unbalanced push/pop)", q.CrossedRanges, plural.Of(q.CrossedRanges, "range overlaps", "ranges overlap"))
	}
	if q.OtherThreadEnds > 0 {
		add(WarnOtherThreadEnd, "%d NVTX start/end %s ended on another thread (%s)", q.OtherThreadEnds, plural.Of(q.OtherThreadEnds, "range", "ranges"), or(notes.OtherThreadEnds, "nsys stats' nvtx_gpu_proj_sum leaves them out"))
	}
	if q.UnnamedRanges > 0 {
		add(WarnUnnamedRange, "%d NVTX %s neither text nor textId (%s)", q.UnnamedRanges, plural.Of(q.UnnamedRanges, "range has", "ranges have"), or(notes.Unnamed, "unnamed"))
	}
	if q.DanglingTextIDs > 0 {
		add(WarnDanglingTextID, "%d NVTX %s a textId that StringIds lacks (%s)", q.DanglingTextIDs, plural.Of(q.DanglingTextIDs, "row names", "rows name"), or(notes.DanglingTextIDs, "their name reads as empty"))
	}
	if q.DuplicateCorrelations > 0 {
		add(WarnDuplicateCorrelation, "%d CUDA API %s (process, correlationId) with another call (%s)", q.DuplicateCorrelations, plural.Of(q.DuplicateCorrelations, "call shares its", "calls share their"), or(notes.DuplicateCorrelations, "GPU work joined on those ids is ambiguous"))
	}
	return out
}

// checkTimes counts, in every timed table, the rows that end before they
// start (both numbers) and the rows whose start or end is stored as text or
// a blob. A table that earlier page scans read whole is not read again
// (auditedTimes); the others are read, the two columns only, through the
// page reader, each cut into parts scanned in parallel: an aggregate SQL
// query over the largest tables costs as much as the whole analysis (a
// third of its CPU time on a 100 MB export).
func (f *File) checkTimes(q *Quality) error {
	var unread []string
	for _, t := range timedTables {
		if !f.hasTimes(t) {
			continue
		}
		if c, ok := f.auditedTimes(t); ok {
			q.addTimes(t, c)
			continue
		}
		unread = append(unread, t)
	}
	counts, err := f.scanTimes(unread)
	if err != nil {
		return err
	}
	for i, t := range unread {
		q.addTimes(t, counts[i])
	}
	return nil
}

// hasTimes reports whether table t is present with start and end columns.
func (f *File) hasTimes(t string) bool {
	return f.HasTable(t) && f.HasColumn(t, "start") && f.HasColumn(t, "end")
}

// addTimes adds table t's counts of rows ending before they start (c[0])
// and of text or blob times (c[1]); a zero adds no entry.
func (q *Quality) addTimes(t string, c [2]int64) {
	if c[0] > 0 {
		q.EndBeforeStart[t] += c[0]
	}
	if c[1] > 0 {
		q.NonIntegerTimes[t] += c[1]
	}
}

// CheckTimesAhead counts now what CheckTimes counts in the listed tables
// (those with start and end) and records it as a scan of each whole table,
// so that CheckTimes does not read them again. The analysis calls it beside
// the engine for the tables the engine never reads (the sync and OS-runtime
// tables): read after the engine, they were on its critical path.
func (f *File) CheckTimesAhead(tables ...string) error {
	var timed []string
	for _, t := range tables {
		if slices.Contains(timedTables, t) && f.hasTimes(t) {
			timed = append(timed, t)
		}
	}
	counts, err := f.scanTimes(timed)
	if err != nil {
		return err
	}
	for i, t := range timed {
		f.addTimeAudit(t, AllRows, counts[i][0], counts[i][1])
	}
	return nil
}

// scanTimes counts, per table, the rows that end before they start and the
// rows whose start or end is text or a blob, reading the tables in parts
// on all cores.
func (f *File) scanTimes(tables []string) ([][2]int64, error) {
	type part struct {
		table         int
		r             Part
		before, texts int64
	}
	var parts []*part
	for i, t := range tables {
		for _, r := range f.SplitTable(t, runtime.GOMAXPROCS(0), 1<<16) {
			parts = append(parts, &part{table: i, r: r})
		}
	}
	cols := []column{{name: "start"}, {name: "end"}}
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, p := range parts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = f.scanRange(tables[p.table], cols, "", p.r, func(st row) bool {
				ts, te := st.ColumnType(0), st.ColumnType(1)
				switch {
				case ts == sqlite.TypeNull || te == sqlite.TypeNull:
				case ts == sqlite.TypeText || ts == sqlite.TypeBlob || te == sqlite.TypeText || te == sqlite.TypeBlob:
					p.texts++
				case st.ColumnInt64(1) < st.ColumnInt64(0):
					p.before++
				}
				return true
			})
		}()
	}
	wg.Wait()
	counts := make([][2]int64, len(tables))
	for i, p := range parts {
		if errs[i] != nil {
			return nil, f.readError("cannot check "+tables[p.table], errs[i])
		}
		counts[p.table][0] += p.before
		counts[p.table][1] += p.texts
	}
	return counts, nil
}

// addTimeAudit records what a complete page scan of part r of table t
// counted. Scans of the same part count the same rows, so a part scanned
// twice is recorded once.
func (f *File) addTimeAudit(t string, r Part, before, texts int64) {
	f.auditMu.Lock()
	defer f.auditMu.Unlock()
	if f.audits == nil {
		f.audits = map[string]map[Part][2]int64{}
	}
	if f.audits[t] == nil {
		f.audits[t] = map[Part][2]int64{}
	}
	f.audits[t][r] = [2]int64{before, texts}
}

// auditedTimes returns table t's counts (end before start, text or blob
// times) when earlier page scans covered every row exactly once: one
// scan of the whole table, or parts that tile the rowids from end to end.
func (f *File) auditedTimes(t string) ([2]int64, bool) {
	f.auditMu.Lock()
	defer f.auditMu.Unlock()
	parts := f.audits[t]
	if c, ok := parts[AllRows]; ok {
		return c, true
	}
	if len(parts) == 0 {
		return [2]int64{}, false
	}
	rs := slices.SortedFunc(maps.Keys(parts), func(a, b Part) int { return cmp.Compare(a.lo, b.lo) })
	next := int64(-1 << 63)
	var sum [2]int64
	for i, r := range rs {
		if r.lo != next || r.hi < r.lo {
			return [2]int64{}, false
		}
		c := parts[r]
		sum[0] += c[0]
		sum[1] += c[1]
		if r.hi == 1<<63-1 {
			if i != len(rs)-1 {
				break // parts beyond the end: not one tiling
			}
			return sum, true
		}
		next = r.hi + 1
	}
	return [2]int64{}, false
}

// checkRangePages is checkNVTX and checkCrossedRanges in one pass over the
// NVTX table's pages: the queries cost more than the rest of the analysis
// on a 2-core machine. It answers ok=false, having counted nothing, where
// only SQLite can say what the queries would: a value of another storage
// class than the integers the queries compare (SQLite's comparison and sort
// rules across classes), a column declared NOT NULL (SQLite folds IS NULL
// on it), or no page reader.
func (f *File) checkRangePages(q *Quality, query queryFunc) (ok bool, err error) {
	t := TableNVTX
	if !f.HasTable(t) || !f.HasColumn(t, "eventType") || f.sqlScans || f.pages == nil || f.pageTables[t] == nil {
		return false, nil
	}
	names := []string{"eventType", "start", "end", "globalTid", "endGlobalTid", "text", "textId"}
	const (
		cType = iota
		cStart
		cEnd
		cTid
		cEndTid
		cText
		cTextID
	)
	var cols []column
	var has, declared [7]bool
	for i, n := range names {
		has[i] = f.HasColumn(t, n)
		declared[i] = has[i] && slices.Contains(f.declaredNotNull[t], strings.ToLower(n))
		cols = append(cols, column{name: n}) // absent columns read as NULL
	}
	crossed := has[cStart] && has[cEnd] && has[cTid]
	dangling := has[cTextID] && f.HasColumn(TableStrings, "id")
	var (
		ranges  []pushPop
		textIDs = map[int64]int64{} // textId → rows naming it
		mixed   bool                // a value the queries compare is not an integer
		n       Quality
	)
	// intOrNull reads column i, noting a value of another storage class, or
	// a NULL in a column declared NOT NULL (SQLite folds IS NULL there).
	intOrNull := func(st row, i int) (v int64, null bool) {
		switch st.ColumnType(i) {
		case sqlite.TypeNull:
			mixed = mixed || declared[i]
			return 0, true
		case sqlite.TypeInteger:
			return st.ColumnInt64(i), false
		}
		mixed = true
		return 0, false
	}
	if crossed {
		// At its size once (an estimate, bounded: a damaged file may claim any).
		ranges = make([]pushPop, 0, min(f.RowEstimate(t), 1<<20))
	}
	err = f.scanRange(t, cols, "", AllRows, func(st row) bool {
		et, etNull := intOrNull(st, cType)
		start, startNull := intOrNull(st, cStart)
		end, endNull := intOrNull(st, cEnd)
		tid, tidNull := intOrNull(st, cTid)
		textID, textIDNull := intOrNull(st, cTextID)
		if mixed {
			return false
		}
		isRange := !etNull && (et == 59 || et == 60 || et == 70 || et == 71)
		if isRange {
			if has[cEnd] && endNull {
				n.UnclosedRanges++
			}
			if has[cEndTid] && (declared[cEndTid] || st.ColumnType(cEndTid) != sqlite.TypeNull) {
				n.OtherThreadEnds++
			}
			if has[cText] && has[cTextID] && !declared[cText] && st.ColumnType(cText) == sqlite.TypeNull && textIDNull {
				n.UnnamedRanges++
			}
		}
		if dangling && !textIDNull {
			textIDs[textID]++
		}
		if crossed && !etNull && (et == 59 || et == 70) && !endNull && !tidNull {
			ranges = append(ranges, pushPop{tid: tid, start: start, end: end, nullStart: startNull})
		}
		return true
	})
	if err != nil || mixed {
		return false, err
	}
	if dangling {
		if n.DanglingTextIDs, err = danglingTextIDs(query, textIDs); err != nil {
			return false, err
		}
	}
	if crossed {
		n.CrossedRanges = countCrossed(ranges)
	}
	q.UnclosedRanges, q.OtherThreadEnds, q.UnnamedRanges = n.UnclosedRanges, n.OtherThreadEnds, n.UnnamedRanges
	q.DanglingTextIDs, q.CrossedRanges = n.DanglingTextIDs, n.CrossedRanges
	return true, nil
}

// pushPop is a closed push/pop range of the NVTX table, as the crossed
// ranges query reads it.
type pushPop struct {
	tid, start, end int64
	nullStart       bool
}

// danglingTextIDs counts the rows (textIDs: textId → rows naming it) whose
// textId is not in StringIds. Few distinct ids: each is looked up as the
// query's NOT EXISTS does.
func danglingTextIDs(query queryFunc, textIDs map[int64]int64) (int64, error) {
	var dangling int64
	ids := slices.Sorted(maps.Keys(textIDs))
	found := map[int64]bool{}
	for len(ids) > 0 {
		batch := ids[:min(len(ids), 500)]
		ids = ids[len(batch):]
		list := make([]string, len(batch))
		for i, id := range batch {
			list[i] = "(" + strconv.FormatInt(id, 10) + ")"
		}
		err := query("WITH ids(v) AS (VALUES "+strings.Join(list, ",")+") SELECT v FROM ids WHERE EXISTS (SELECT 1 FROM StringIds s WHERE s.id = v)", func(st *sqlite.Stmt) error {
			found[st.ColumnInt64(0)] = true
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	for id, rows := range textIDs {
		if !found[id] {
			dangling += rows
		}
	}
	return dangling, nil
}

// countCrossed counts the ranges that cross an enclosing one, sorting them
// in the query's order: globalTid, start (NULL first, read as 0), end
// descending.
func countCrossed(ranges []pushPop) int64 {
	slices.SortFunc(ranges, func(a, b pushPop) int {
		if c := cmp.Compare(a.tid, b.tid); c != 0 {
			return c
		}
		if a.nullStart != b.nullStart {
			if a.nullStart {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(b.end, a.end)
	})
	var c crossedCounter
	for _, r := range ranges {
		c.add(r.tid, r.start, r.end)
	}
	return c.n
}
