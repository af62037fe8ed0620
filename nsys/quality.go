package nsys

import (
	"runtime"
	"slices"
	"strings"
	"sync"

	"zombiezen.com/go/sqlite"
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

// CheckQuality scans the export for readable-but-odd rows with aggregate
// queries and one ordered pass over the push/pop ranges; its memory does not
// grow with the file. DuplicateCorrelations is left 0: SummarizeActivity
// counts it in its pass over the API calls (ActivitySummary), and Describe
// reports both.
//
// The queries run on a connection of their own, not the shared metadata
// connection: analyze runs them beside the segmentation, which reads the
// small tables through that one.
func (f *File) CheckQuality() (*Quality, error) {
	c, err := f.conn()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	query := func(q string, fn func(*sqlite.Stmt) error) error { return queryConn(c, q, fn) }
	q := &Quality{EndBeforeStart: map[string]int64{}, NonIntegerTimes: map[string]int64{}}
	if err := f.checkTimes(q); err != nil {
		return nil, err
	}
	if err := f.checkNVTX(q, query); err != nil {
		return nil, err
	}
	if err := f.checkCrossedRanges(q, query); err != nil {
		return nil, err
	}
	return q, nil
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
	var (
		tid   int64
		first = true
		stack []int64 // ends of the enclosing ranges, innermost last
	)
	err := query(sql, func(st *sqlite.Stmt) error {
		g, start, end := st.ColumnInt64(0), st.ColumnInt64(1), st.ColumnInt64(2)
		if first || g != tid {
			tid, first, stack = g, false, stack[:0]
		}
		for len(stack) > 0 && stack[len(stack)-1] <= start {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && end > stack[len(stack)-1] {
			q.CrossedRanges++
		}
		stack = append(stack, end)
		return nil
	})
	if err != nil {
		return f.readError("cannot check NVTX push/pop ranges", err)
	}
	return nil
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
			add(WarnEndBeforeStart, "%d rows of %s end before they start (their negative durations are kept as recorded, as nsys stats does)", n, t)
		}
		if n := q.NonIntegerTimes[t]; n > 0 {
			add(WarnNonIntegerTime, "%d rows of %s have a start or end stored as text or a blob (it reads as a number, usually 0)", n, t)
		}
	}
	if q.UnclosedRanges > 0 {
		add(WarnUnclosedRange, "%d NVTX ranges were never closed (%s)", q.UnclosedRanges, or(notes.Unclosed, "NULL end: a push without a pop, a start without an end, or a capture that stopped inside them"))
	}
	if q.CrossedRanges > 0 {
		add(WarnUnbalancedRange, "%d NVTX push/pop ranges overlap an enclosing range of the same thread without nesting in it (unbalanced push/pop)", q.CrossedRanges)
	}
	if q.OtherThreadEnds > 0 {
		add(WarnOtherThreadEnd, "%d NVTX start/end ranges ended on another thread (%s)", q.OtherThreadEnds, or(notes.OtherThreadEnds, "nsys stats' nvtx_gpu_proj_sum leaves them out"))
	}
	if q.UnnamedRanges > 0 {
		add(WarnUnnamedRange, "%d NVTX ranges have neither text nor textId (%s)", q.UnnamedRanges, or(notes.Unnamed, "unnamed"))
	}
	if q.DanglingTextIDs > 0 {
		add(WarnDanglingTextID, "%d NVTX rows name a textId that StringIds lacks (%s)", q.DanglingTextIDs, or(notes.DanglingTextIDs, "their name reads as empty"))
	}
	if q.DuplicateCorrelations > 0 {
		add(WarnDuplicateCorrelation, "%d CUDA API calls share their (process, correlationId) with another call (%s)", q.DuplicateCorrelations, or(notes.DuplicateCorrelations, "GPU work joined on those ids is ambiguous"))
	}
	return out
}

// checkTimes counts, in every timed table, the rows that end before they
// start (both numbers) and the rows whose start or end is stored as text or
// a blob. It reads the two columns through the page reader, each table cut
// into parts scanned in parallel: an aggregate SQL query over the largest
// tables costs as much as the whole analysis (a third of its CPU time on a
// 100 MB export).
func (f *File) checkTimes(q *Quality) error {
	type part struct {
		table         string
		r             Part
		before, texts int64
	}
	var parts []*part
	for _, t := range timedTables {
		if !f.HasTable(t) || !f.HasColumn(t, "start") || !f.HasColumn(t, "end") {
			continue
		}
		for _, r := range f.SplitTable(t, runtime.GOMAXPROCS(0), 1<<16) {
			parts = append(parts, &part{table: t, r: r})
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
			errs[i] = f.scanRange(p.table, cols, "", p.r, func(st row) bool {
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
	for i, p := range parts {
		if errs[i] != nil {
			return f.readError("cannot check "+p.table, errs[i])
		}
		if p.before > 0 {
			q.EndBeforeStart[p.table] += p.before
		}
		if p.texts > 0 {
			q.NonIntegerTimes[p.table] += p.texts
		}
	}
	return nil
}
