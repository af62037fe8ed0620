package nsys

// Parallel reading of one table: the big activity tables (a million API
// calls, hundreds of thousands of kernels) are cut into parts along their
// B-trees so that several goroutines decode one table at once, each its own
// run of pages, and a consumer can take the parts in table order. SplitTable
// cuts, RowEstimate sizes buffers and parts, and the …In scans read one
// part; the whole-table scans (Kernels, APICalls, …) are the same scans of
// AllRows.

// Part is one part of a table as SplitTable cuts it: the rows whose rowids
// lie between two keys of the table's B-tree, both ends included. A part
// holds whole pages, so the parts of one table can be scanned concurrently
// (each scan reads on its own) and together hold every row once. The zero
// Part (AllRows) is every row.
type Part struct {
	lo, hi  int64
	bounded bool // false: every row
}

// AllRows is the Part of every row of a table: a part scan of AllRows
// reads the whole table.
var AllRows = Part{}

// bounds returns the first and last rowid part p admits.
func bounds(p Part) (int64, int64) {
	if !p.bounded {
		return -1 << 63, 1<<63 - 1
	}
	return p.lo, p.hi
}

// SplitTable cuts table into at most n parts of about equal size, in table
// order, so that they can be decoded concurrently. It cuts along the pages
// of the table's B-tree: each part is a run of whole subtrees, so the parts
// follow the pages (and so the rows), never the rowid values, which may be
// sparse, negative or near ±2^63 in a valid file. Tables with fewer than
// minRows rows (by RowEstimate), n ≤ 1, and tables not read from the pages
// come back as one part, AllRows: a scan through SQLite reads the table in
// one pass, which lets it check that rowids increase.
func (f *File) SplitTable(table string, n int, minRows int64) []Part {
	whole := []Part{AllRows}
	pt := f.pageTables[table]
	if n <= 1 || pt == nil || f.pages == nil || f.sqlScans || f.RowEstimate(table) < minRows {
		return whole
	}
	_, keys, _, err := f.pages.Subtrees(pt.root, n)
	if err != nil || len(keys) == 0 {
		return whole // the scan reports the damage
	}
	for i, k := range keys {
		if (i > 0 && k <= keys[i-1]) || k == 1<<63-1 {
			return whole // keys out of order: the scan reports the damage
		}
	}
	m := len(keys) + 1 // subtrees
	n = min(n, m)
	out := make([]Part, 0, n)
	for j := 0; j < n; j++ {
		a, b := j*m/n, (j+1)*m/n // subtrees [a, b)
		p := Part{lo: -1 << 63, hi: 1<<63 - 1, bounded: true}
		if a > 0 {
			p.lo = keys[a-1] + 1
		}
		if b < m {
			p.hi = keys[b-1]
		}
		out = append(out, p)
	}
	return out
}

// ScanThroughSQLite makes every later scan of f go through SQLite's virtual
// machine (on) or straight from the B-tree pages where the page reader takes
// the table (off, the default). The two yield the same rows; it exists for
// cross-checks and benchmarks that compare them. With it on, SplitTable
// returns each table whole. Call it while no scan of f runs.
func (f *File) ScanThroughSQLite(on bool) { f.sqlScans = on }
