package nsys

import (
	"math/bits"
	"os"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"

	"github.com/nsysphase/nsysphase/nsys/internal/btree"
)

// row is the current row of a scan, read through SQLite or straight from
// the pages; decoders see the same values either way.
type row interface {
	ColumnInt64(i int) int64
	ColumnText(i int) string
	ColumnType(i int) sqlite.ColumnType
}

// pageTable is what a page scan needs of a table: its B-tree root and where
// each column sits in the stored records.
type pageTable struct {
	root    uint32
	columns map[string]int // column → record position
	rowidAt int            // the INTEGER PRIMARY KEY column (stored as NULL, read as the rowid); -1 if none
	real    []bool         // by record position: REAL affinity (stored integers read back as reals)
}

// tableInfo is one table's entry in sqlite_master with what SQLite says of
// it: its columns, whether it is a view or WITHOUT ROWID, and whether its
// PRIMARY KEY has an index of its own (then it does not alias the rowid).
type tableInfo struct {
	root         int64
	sql          string
	view         bool
	withoutRowid bool
	pkIndex      bool
	columns      []columnInfo
}

type columnInfo struct {
	name, typ string
	pk        int64
	hasDflt   bool
	hidden    int64
}

// pageTableOf decides whether table t can be scanned from the pages: an
// ordinary rowid table whose columns are all stored in the record, with no
// column default that old rows would have to take. The schema comes from
// SQLite (pragma table_list, table_xinfo, index_list), never from the text
// of the CREATE statement.
func pageTableOf(ti tableInfo) *pageTable {
	if ti.view || ti.withoutRowid || ti.root <= 0 || ti.root > 1<<32-1 || !strings.HasPrefix(strings.ToUpper(strings.TrimSpace(ti.sql)), "CREATE TABLE") {
		return nil
	}
	pt := &pageTable{root: uint32(ti.root), columns: map[string]int{}, rowidAt: -1}
	pks := 0
	for i, c := range ti.columns {
		if c.hidden != 0 || c.hasDflt {
			return nil
		}
		pt.columns[strings.ToLower(c.name)] = i
		pt.real = append(pt.real, realAffinity(c.typ))
		if c.pk > 0 {
			pks++
			if strings.EqualFold(c.typ, "INTEGER") {
				pt.rowidAt = i
			}
		}
	}
	if pks != 1 || ti.pkIndex {
		// Only a lone INTEGER PRIMARY KEY without an index of its own
		// (`INTEGER PRIMARY KEY DESC` gets one) aliases the rowid.
		pt.rowidAt = -1
	}
	return pt
}

// realAffinity applies SQLite's affinity rules (datatype3 §3.1) to a
// declared type: REAL affinity is a type naming REAL, FLOAT or DOUBLE (by
// their first four letters) and none of INT, CHAR, CLOB, TEXT or BLOB.
func realAffinity(typ string) bool {
	t := strings.ToUpper(typ)
	for _, other := range []string{"INT", "CHAR", "CLOB", "TEXT", "BLOB"} {
		if strings.Contains(t, other) {
			return false
		}
	}
	return strings.Contains(t, "REAL") || strings.Contains(t, "FLOA") || strings.Contains(t, "DOUB") //nolint:misspell // SQLite's rule matches "DOUB"
}

// openPages prepares page scans of the export; on any doubt (an encoding
// other than UTF-8, a damaged header) scans go through SQLite.
func (f *File) openPages(path string, size int64) {
	fh, err := os.Open(path)
	if err != nil {
		return
	}
	bt, err := btree.Open(fh, size)
	if err != nil {
		fh.Close()
		return
	}
	f.pageFile, f.pages = fh, bt
}

// pageRow presents the record under the cursor of a page scan as a row of
// the selected columns, with the SQL path's NULL defaults applied.
type pageRow struct {
	f       *File
	rec     btree.Record
	rowid   int64
	pos     []int   // record position of each selected column; -1 absent, -2 the rowid
	real    []bool  // the column has REAL affinity: SQLite reads stored integers back as reals
	def     []int64 // NULL replacement of each selected column
	hasDf   []bool
	ints    []int64 // each selected column's integer value, when !slow
	slow    []bool  // the value is not an integer or NULL as read: convert on demand
	anySlow bool
	// fast: the row was decoded by ParseInts, so rec is not this row's;
	// every selected column is an integer or, where its bit of nulls is
	// set, NULL.
	fast  bool
	nulls uint64
}

// intsOf returns the integer values of a page row's selected columns when
// every one of them is an integer or NULL as read (nil otherwise, and for
// rows read through SQLite): the hot decoders then skip a method call per
// column.
func intsOf(st row) []int64 {
	if pr, ok := st.(*pageRow); ok && !pr.anySlow {
		return pr.ints
	}
	return nil
}

// load decodes the selected columns of the parsed record: integers (nearly
// every value of an export) once, into ints.
func (r *pageRow) load() {
	r.anySlow = false
	for i, p := range r.pos {
		r.slow[i] = false
		switch {
		case p == -2:
			r.ints[i] = r.rowid
		case p < 0:
			r.ints[i] = r.def[i]
		default:
			k, v := r.rec.Stored(p)
			switch k {
			case btree.Integer:
				r.ints[i] = v
				r.slow[i] = r.real[i]
			case btree.Null:
				r.ints[i] = r.def[i]
			default:
				r.slow[i] = true
			}
			r.anySlow = r.anySlow || r.slow[i]
		}
	}
}

// kind is the storage class of selected column i as SQLite returns it.
func (r *pageRow) kind(i int) btree.Kind {
	p := r.pos[i]
	switch {
	case p == -2:
		return btree.Integer
	case p < 0:
		return btree.Null
	case r.fast:
		if r.nulls&(1<<uint(i)) != 0 {
			return btree.Null
		}
		return btree.Integer
	}
	k := r.rec.Kind(p)
	if k == btree.Integer && r.real[i] {
		return btree.Float
	}
	return k
}

func (r *pageRow) ColumnInt64(i int) int64 {
	if !r.slow[i] {
		return r.ints[i]
	}
	if r.kind(i) == btree.Float {
		return btree.RealToInt(r.rec.Float(r.pos[i]))
	}
	return r.rec.Int(r.pos[i])
}

func (r *pageRow) ColumnText(i int) string {
	switch r.kind(i) {
	case btree.Null:
		if r.hasDf[i] {
			return strconv.FormatInt(r.def[i], 10)
		}
		return ""
	case btree.Float:
		return r.f.realText(r.rec.Float(r.pos[i]))
	}
	if r.pos[i] == -2 {
		return strconv.FormatInt(r.rowid, 10)
	}
	if r.fast {
		return strconv.FormatInt(r.ints[i], 10)
	}
	return r.rec.Text(r.pos[i])
}

func (r *pageRow) ColumnType(i int) sqlite.ColumnType {
	switch r.kind(i) {
	case btree.Integer:
		return sqlite.TypeInteger
	case btree.Float:
		return sqlite.TypeFloat
	case btree.Text:
		return sqlite.TypeText
	case btree.Blob:
		return sqlite.TypeBlob
	}
	if r.hasDf[i] {
		return sqlite.TypeInteger
	}
	return sqlite.TypeNull
}

// realText renders a real as SQLite's column_text does, by asking SQLite:
// its printf is its own, and no export stores reals where text is read.
func (f *File) realText(v float64) string {
	f.metaMu.Lock()
	defer f.metaMu.Unlock()
	st, err := f.meta.Prepare("SELECT CAST(?1 AS TEXT)")
	if err != nil {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	defer func() { _ = st.Reset() }()
	st.BindFloat(1, v)
	if ok, err := st.Step(); err != nil || !ok {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return st.ColumnText(0)
}

// isNull reports whether record position p (of a present column) is NULL.
func (r *pageRow) isNull(p int) bool {
	return p != -2 && r.rec.Kind(p) == btree.Null
}

// scanPages is scanRange read straight from the B-tree pages.
func (f *File) scanPages(pt *pageTable, t string, cols []column, r Part, fn func(row) bool) error {
	pr, sel := selectPageColumns(f, pt, cols)
	required, width, want := sel.required, sel.width, sel.want
	slot, fast, requiredSel, fixed := sel.slot, sel.fast, sel.requiredSel, sel.fixed
	// The time audit: rows whose end precedes their start, and rows whose
	// start or end is text or a blob, counted as the scan goes by (before
	// any row is skipped), so that CheckTimes need not read the table again.
	audit := newTimeAudit(cols, pr.pos)
	lo, hi := bounds(r)
	var stop func() error
	if f.ctx != nil && f.ctx.Done() != nil {
		stop = f.ctx.Err
	}
	var skipped int64
	defer func() { f.addSkipped(t, skipped) }()
	var recErr error
	stopped := false // fn ended the scan early: the audit saw part of r only
	sc := f.pages.NewScanner(stop)
	defer sc.Release()
	err := sc.Scan(pt.root, lo, hi, func(rowid int64, rec []byte) bool {
		if fast {
			nulls, ok, err := pr.rec.ParseInts(rec, width, slot, pr.ints)
			if err != nil {
				recErr = err
				return false
			}
			if ok {
				if audit.on && nulls&audit.nullMask == 0 && pr.ints[audit.end] < pr.ints[audit.start] {
					audit.before++
				}
				if nulls&requiredSel != 0 {
					skipped++
					return true
				}
				pr.rowid, pr.fast, pr.nulls = rowid, true, nulls
				for _, i := range fixed {
					if pr.pos[i] == -2 {
						pr.ints[i] = rowid
					} else {
						pr.ints[i] = pr.def[i]
					}
				}
				for m := nulls; m != 0; m &= m - 1 {
					i := bits.TrailingZeros64(m)
					pr.ints[i] = pr.def[i]
				}
				if pr.anySlow { // left by a row decoded the slow way
					clear(pr.slow)
					pr.anySlow = false
				}
				if !fn(pr) {
					stopped = true
					return false
				}
				return true
			}
		}
		pr.fast = false
		if err := pr.rec.Parse(rec, width, want); err != nil {
			recErr = err
			return false
		}
		pr.rowid = rowid
		if audit.on {
			pr.load()
			audit.slowRow(pr)
		}
		for _, p := range required {
			if pr.isNull(p) {
				skipped++
				return true
			}
		}
		if !audit.on {
			pr.load()
		}
		if !fn(pr) {
			stopped = true
			return false
		}
		return true
	})
	if err == nil && recErr != nil {
		err = recErr
	}
	if err == nil && !stopped && audit.on {
		f.addTimeAudit(t, r, audit.before, audit.texts)
	}
	if err != nil {
		if f.ctx != nil && f.ctx.Err() != nil {
			return f.ctx.Err()
		}
		return f.readError("cannot read "+t, err)
	}
	return nil
}

// pageSelection is how a page scan decodes the selected columns of a
// table's records.
type pageSelection struct {
	required    []int  // record positions of the notNull columns
	width       int    // record positions read
	want        uint64 // record positions to decode
	slot        []int8 // per record position, its selected column (-1: none)
	fast        bool   // rows may take the fast decode
	requiredSel uint64 // selected columns that must not be NULL
	fixed       []int  // selected columns not read from the record
}

// selectPageColumns maps cols onto pt's record positions: the row that a
// page scan fills and how it decodes each record.
func selectPageColumns(f *File, pt *pageTable, cols []column) (*pageRow, pageSelection) {
	n := len(cols)
	pr := &pageRow{f: f, pos: make([]int, n), real: make([]bool, n), def: make([]int64, n), hasDf: make([]bool, n), ints: make([]int64, n), slow: make([]bool, n)}
	var s pageSelection
	for i, c := range cols {
		p, ok := pt.columns[strings.ToLower(c.name)]
		switch {
		case !ok:
			p = -1
		case p == pt.rowidAt:
			p = -2
		}
		pr.pos[i] = p
		pr.real[i] = p >= 0 && pt.real[p]
		if c.def != "" {
			pr.hasDf[i] = true
			pr.def[i], _ = strconv.ParseInt(c.def, 10, 64)
		}
		if p >= 0 && p < 64 {
			s.want |= 1 << uint(p)
		}
		if c.notNull && p >= 0 {
			s.required = append(s.required, p)
		}
		s.width = max(s.width, p+1)
	}
	// The fast decode (ParseInts) serves rows whose selected columns are
	// integers or NULL, nearly every row of an export; it needs each record
	// position selected once, at most 64 columns, and no REAL affinity.
	s.slot = make([]int8, max(s.width, 0))
	for i := range s.slot {
		s.slot[i] = -1
	}
	s.fast = n <= 64
	for i, p := range pr.pos {
		switch {
		case p < 0:
			s.fixed = append(s.fixed, i)
		case s.slot[p] >= 0 || pr.real[i]:
			s.fast = false
		default:
			s.slot[p] = int8(i)
			if cols[i].notNull {
				s.requiredSel |= 1 << uint(i)
			}
		}
	}
	return pr, s
}

// timeAudit counts, during a page scan that selects a table's start and
// end, what CheckTimes counts: rows whose end precedes their start (both
// non-NULL) and rows whose start or end is text or a blob.
type timeAudit struct {
	on            bool
	start, end    int    // selected column indices
	nullMask      uint64 // their bits in ParseInts' NULL mask
	before, texts int64
}

func newTimeAudit(cols []column, pos []int) timeAudit {
	a := timeAudit{start: -1, end: -1}
	for i, c := range cols {
		switch {
		case pos[i] < 0 || i >= 64:
		case strings.EqualFold(c.name, "start"):
			a.start = i
		case strings.EqualFold(c.name, "end"):
			a.end = i
		}
	}
	if a.start >= 0 && a.end >= 0 {
		a.on = true
		a.nullMask = 1<<uint(a.start) | 1<<uint(a.end)
	}
	return a
}

// slowRow audits a row decoded the slow way (loaded): its values may be of
// any storage class, read as CheckTimes reads them.
func (a *timeAudit) slowRow(pr *pageRow) {
	ks, ke := pr.kind(a.start), pr.kind(a.end)
	switch {
	case ks == btree.Null || ke == btree.Null:
	case ks == btree.Text || ks == btree.Blob || ke == btree.Text || ke == btree.Blob:
		a.texts++
	case pr.ColumnInt64(a.end) < pr.ColumnInt64(a.start):
		a.before++
	}
}
