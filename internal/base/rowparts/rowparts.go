// Package rowparts carries the reader's performance entry points from
// package nsys to the engine in package phases without making them part of
// nsys's public API: cutting a table into parts along its B-tree, estimating
// its rows, and the column-pruned scan of one part of each activity table.
// Package nsys registers them when it is initialised; being internal, only
// this module's packages can call them. Every f is an *nsys.File.
package rowparts

import "iter"

// Range is one part of a table as Split cuts it: the rows whose rowids lie
// between Lo and Hi, both included. The zero Range (All) is every row.
type Range struct {
	Lo, Hi  int64
	Bounded bool // false: every row
}

// All selects every row.
var All = Range{}

// Reader is what package nsys registers.
type Reader struct {
	Split   func(f any, table string, n int, minRows int64) []Range
	RowHint func(f any, table string) int64
	// Scans maps an activity table to its column-pruned scan of one part,
	// an iter.Seq2[row, error] of the table's nsys row type.
	Scans map[string]func(f any, r Range) any
	// SQLScans makes every scan of f go through SQLite instead of the page
	// reader (tests compare the two).
	SQLScans func(f any, on bool)
	// IntScans maps the API and kernel tables to a scan of one part that
	// hands each row's six integer columns to fn as they are decoded:
	// the columns of the table's row scan above, without building its
	// row type (see Ints).
	IntScans map[string]func(f any, r Range, fn func(v *[6]int64) bool) error
}

var reader Reader

// Register installs package nsys's reader; it runs once, at nsys's init.
func Register(r Reader) { reader = r }

// Split cuts table into at most n parts of about equal size along the pages
// of its B-tree (never by rowid values); small tables, n ≤ 1 and tables read
// through SQLite come back whole.
func Split(f any, table string, n int, minRows int64) []Range {
	return reader.Split(f, table, n, minRows)
}

// RowHint estimates the rows of table, for sizing buffers and parts.
func RowHint(f any, table string) int64 { return reader.RowHint(f, table) }

// Rows streams part r of table through its column-pruned scan; T is the
// table's nsys row type (nsys.Kernel, nsys.Memcpy, nsys.Memset,
// nsys.GraphTrace, nsys.APICall for the runtime table).
func Rows[T any](f any, table string, r Range) iter.Seq2[T, error] {
	return reader.Scans[table](f, r).(iter.Seq2[T, error])
}

// SQLScans makes every scan of f go through SQLite (on) or the pages (off).
func SQLScans(f any, on bool) { reader.SQLScans(f, on) }

// Ints scans part r of table (nsys.TableRuntime or nsys.TableKernel) and
// calls fn with each row's six integer columns, in the order of the
// fields of its row type (nsys.APICall: Start, End, GlobalTid,
// CorrelationID, NameID, EventClass; nsys.Kernel: Start, End, GlobalPid,
// DeviceID, CorrelationID, GraphNodeID) with the same NULL defaults and
// skipped rows as Rows; fn returns false to stop. v is only valid during
// the call. It is Rows without a row value and an iterator step per row:
// the engine's decoders read a million rows this way.
func Ints(f any, table string, r Range, fn func(v *[6]int64) bool) error {
	return reader.IntScans[table](f, r, fn)
}
