package nsys

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"zombiezen.com/go/sqlite"

	"github.com/nsysphase/nsysphase/internal/base/budget"
	"github.com/nsysphase/nsysphase/nsys/internal/btree"
)

// Table names of the export that the reader knows.
const (
	TableKernel     = "CUPTI_ACTIVITY_KIND_KERNEL"
	TableMemcpy     = "CUPTI_ACTIVITY_KIND_MEMCPY"
	TableMemset     = "CUPTI_ACTIVITY_KIND_MEMSET"
	TableSync       = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
	TableRuntime    = "CUPTI_ACTIVITY_KIND_RUNTIME"
	TableGraphTrace = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
	TableNVTX       = "NVTX_EVENTS"
	TableOSRT       = "OSRT_API"
	TableStrings    = "StringIds"
	TableThreads    = "ThreadNames"
	TableProcesses  = "PROCESSES"
	TableGPUs       = "TARGET_INFO_GPU"
	TableCUDAGPU    = "TARGET_INFO_CUDA_GPU" // the GPU table of exports before 2021
	TableSystemEnv  = "TARGET_INFO_SYSTEM_ENV"
	TableCapture    = "META_DATA_CAPTURE"
	TableCUDADevice = "TARGET_INFO_CUDA_DEVICE"
)

// ActivityTables are the tables whose absence means "none of that activity"
// rather than an error (the exporter writes no empty tables).
var ActivityTables = []string{TableKernel, TableMemcpy, TableMemset, TableSync, TableRuntime, TableGraphTrace, TableNVTX, TableOSRT}

// column describes one selected column: when absent from the export an
// optional column reads as NULL, a required one makes the scan fail with a
// message that names it. notNull columns make a row unusable when NULL: such
// rows are skipped and counted.
type column struct {
	name     string
	required bool
	notNull  bool
	def      string // SQL literal that replaces NULL (and an absent optional column); "" keeps NULL
}

func req(name string) column  { return column{name: name, required: true, notNull: true} }
func reqN(name string) column { return column{name: name, required: true} } // required, may be NULL
func opt(name string) column  { return column{name: name} }

// optInt and reqInt read NULL as def inside SQLite, so decoding needs no
// per-row NULL check (a Go→C call per column per row on the hot path).
func optInt(name string, def int64) column { return column{name: name, def: fmt.Sprint(def)} }
func reqInt(name string, def int64) column {
	return column{name: name, required: true, def: fmt.Sprint(def)}
}

// selectSQL builds the column-pruned SELECT for table t.
func (f *File) selectSQL(t string, cols []column, hint string) (string, error) {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		if f.HasColumn(t, c.name) {
			if c.def != "" {
				b.WriteString("ifnull(" + quoteIdent(c.name) + ", " + c.def + ")")
			} else {
				b.WriteString(quoteIdent(c.name))
			}
			continue
		}
		if c.required {
			return "", &InputError{Path: f.Path, Problem: fmt.Sprintf("table %s lacks column %s (export schema %s)", t, c.name, f.Export.SchemaLabel()), Hint: hint}
		}
		if c.def != "" {
			b.WriteString(c.def)
		} else {
			b.WriteString("NULL")
		}
	}
	// One computed flag says whether a row lacks a value it cannot do
	// without: a single column read instead of a NULL check per column.
	var nullChecks []string
	for _, c := range cols {
		if c.notNull && f.HasColumn(t, c.name) {
			if slices.Contains(f.declaredNotNull[t], strings.ToLower(c.name)) {
				nullChecks = append(nullChecks, "typeof("+quoteIdent(c.name)+") = 'null'")
			} else {
				nullChecks = append(nullChecks, quoteIdent(c.name)+" IS NULL")
			}
		}
	}
	if len(nullChecks) > 0 {
		b.WriteString(", (" + strings.Join(nullChecks, " OR ") + ")")
	} else {
		b.WriteString(", 0")
	}
	b.WriteString(" FROM ")
	b.WriteString(quoteIdent(t))
	return b.String(), nil
}

// scan streams table t through fn on a connection of its own. An absent table
// yields no rows. Rows with NULL in a notNull column are skipped and counted.
func (f *File) scan(t string, cols []column, hint string, fn func(row) bool) error {
	return f.scanRange(t, cols, hint, AllRows, fn)
}

func (f *File) scanRange(t string, cols []column, hint string, r Part, fn func(row) bool) error {
	if !f.HasTable(t) {
		return nil
	}
	q, err := f.selectSQL(t, cols, hint) // also checks the required columns
	if err != nil {
		return err
	}
	if pt := f.pageTables[t]; pt != nil && f.pages != nil && !f.sqlScans {
		return f.scanPages(pt, t, cols, r, fn)
	}
	// SQLite reads a table whose leaves were swapped or whose rowids were
	// edited without complaint (count(*) and sum() agree), rows out of
	// place: the scan checks itself that rowids increase.
	rowid := f.rowidName[t]
	if rowid != "" {
		from := strings.LastIndex(q, " FROM ")
		q = q[:from] + ", " + rowid + q[from:]
		if r.bounded {
			q += fmt.Sprintf(" WHERE %s >= %d AND %s <= %d", rowid, r.lo, rowid, r.hi)
		}
	}
	c, err := f.conn()
	if err != nil {
		return err
	}
	defer c.Close()
	st, _, err := c.PrepareTransient(q)
	if err != nil {
		return f.readError("cannot read "+t, err)
	}
	defer st.Finalize()
	flag := len(cols) // the computed "row lacks a required value" column
	var skipped, rows, prev int64
	defer func() { f.addSkipped(t, skipped) }()
	for {
		ok, err := st.Step()
		if err != nil {
			return f.readError("cannot read "+t, err)
		}
		if !ok {
			return nil
		}
		if rowid != "" {
			id := st.ColumnInt64(flag + 1)
			if rows > 0 && id <= prev {
				return &InputError{Path: f.Path, Problem: fmt.Sprintf("table %s is malformed: rowid %d follows rowid %d (rowids must increase)", t, id, prev), Hint: "`PRAGMA integrity_check` shows the damage; " + hintReexport}
			}
			prev = id
			rows++
		}
		if st.ColumnInt64(flag) != 0 {
			skipped++
			continue
		}
		if !fn(st) {
			return nil
		}
	}
}

// seq adapts a scan to a range-over-func iterator that yields rows, then at
// most one error.
func seq[T any](f *File, t string, cols []column, hint string, decode func(row) T) iter.Seq2[T, error] {
	return seqRange(f, t, cols, hint, AllRows, decode)
}

func seqRange[T any](f *File, t string, cols []column, hint string, r Part, decode func(row) T) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		stopped := false
		err := f.scanRange(t, cols, hint, r, func(st row) bool {
			if !yield(decode(st), nil) {
				stopped = true
				return false
			}
			return true
		})
		if err != nil && !stopped {
			var zero T
			yield(zero, err)
		}
	}
}

// nullInt reads an integer column, returning def when it is NULL.
func nullInt(st row, i int, def int64) int64 {
	if st.ColumnType(i) == sqlite.TypeNull {
		return def
	}
	return st.ColumnInt64(i)
}

const hintCUDA = "record with `nsys profile -t cuda,nvtx` and export again"

// Kernel is one row of CUPTI_ACTIVITY_KIND_KERNEL.
type Kernel struct {
	Start, End    int64 // ns
	GlobalPid     int64
	DeviceID      int64
	ContextID     int64
	StreamID      int64
	CorrelationID int64 // 0 = none
	DemangledName int64 // StringIds id
	ShortName     int64 // StringIds id
	GraphNodeID   int64 // 0 = not a graph node (or not traced per node)
}

var kernelCols = []column{req("start"), req("end"), reqInt("globalPid", 0), req("deviceId"), optInt("contextId", 0), req("streamId"), reqInt("correlationId", 0), req("demangledName"), optInt("shortName", -1), optInt("graphNodeId", 0)}

// Kernels streams the kernel table.
func (f *File) Kernels() iter.Seq2[Kernel, error] {
	return seq(f, TableKernel, kernelCols, hintCUDA, func(st row) Kernel {
		return Kernel{
			Start: st.ColumnInt64(0), End: st.ColumnInt64(1), GlobalPid: st.ColumnInt64(2),
			DeviceID: st.ColumnInt64(3), ContextID: st.ColumnInt64(4), StreamID: st.ColumnInt64(5),
			CorrelationID: st.ColumnInt64(6), DemangledName: st.ColumnInt64(7), ShortName: st.ColumnInt64(8),
			GraphNodeID: st.ColumnInt64(9),
		}
	})
}

// KernelCore is the columns of a kernel row that attribution reads: half
// the decoding of Kernel on the biggest GPU table.
type KernelCore struct {
	Start, End    int64
	GlobalPid     int64
	DeviceID      int64
	CorrelationID int64 // 0 = none
	GraphNodeID   int64 // 0 = not a graph node (or not traced per node)
}

// kernelOpCols are KernelCore's columns, in the order read reads them.
var kernelOpCols = []column{req("start"), req("end"), reqInt("globalPid", 0), req("deviceId"), reqInt("correlationId", 0), optInt("graphNodeId", 0)}

// read decodes a row of kernelOpCols into k, field by field: no
// intermediate copy of the row on the hot scan.
func (k *KernelCore) read(st row) {
	v := intsOf(st)
	if v == nil {
		var buf [6]int64
		v = sqlInts(st, buf[:])
	}
	_ = v[5]
	k.Start, k.End, k.GlobalPid, k.DeviceID, k.CorrelationID, k.GraphNodeID = v[0], v[1], v[2], v[3], v[4], v[5]
}

// KernelsCoreIn streams the kernels of part p (see SplitTable) with only
// KernelCore's fields filled.
func (f *File) KernelsCoreIn(p Part) iter.Seq2[Kernel, error] {
	return seqRange(f, TableKernel, kernelOpCols, hintCUDA, p, func(st row) Kernel {
		var k KernelCore
		k.read(st)
		return Kernel{Start: k.Start, End: k.End, GlobalPid: k.GlobalPid, DeviceID: k.DeviceID, CorrelationID: k.CorrelationID, GraphNodeID: k.GraphNodeID}
	})
}

// KernelCoresIn scans the kernels of part p (see SplitTable) and calls fn
// with each one's KernelCore, with the NULL defaults and skipped rows of
// KernelsCoreIn; fn returns false to stop, and k is only valid during the
// call. It is KernelsCoreIn without a row value and an iterator step per
// row: the engine reads a million rows this way.
func (f *File) KernelCoresIn(p Part, fn func(k *KernelCore) bool) error {
	var k KernelCore
	return f.scanRange(TableKernel, kernelOpCols, hintCUDA, p, func(st row) bool {
		k.read(st)
		return fn(&k)
	})
}

// sqlInts reads the first len(buf) columns of a row read through SQLite:
// the core scans' slow path (on the page path intsOf has them decoded).
func sqlInts(st row, buf []int64) []int64 {
	for i := range buf {
		buf[i] = st.ColumnInt64(i)
	}
	return buf
}

// Memcpy copy kinds (ENUM_CUDA_MEMCPY_OPER) and memory kinds (ENUM_CUDA_MEM_KIND).
const (
	CopyHtoD = 1
	CopyDtoH = 2
	CopyHtoA = 3
	CopyAtoH = 4
	CopyAtoA = 5
	CopyAtoD = 6
	CopyDtoA = 7
	CopyDtoD = 8
	CopyHtoH = 9
	CopyPtoP = 10

	MemPageable = 0
	MemPinned   = 1
	MemDevice   = 2
	MemArray    = 3
	MemManaged  = 4
)

// Memcpy is one row of CUPTI_ACTIVITY_KIND_MEMCPY.
type Memcpy struct {
	Start, End       int64
	GlobalPid        int64
	DeviceID         int64
	StreamID         int64
	CorrelationID    int64
	Bytes            int64
	CopyKind         int64
	SrcKind, DstKind int64 // -1 = unknown
	GraphNodeID      int64
}

var memcpyCols = []column{req("start"), req("end"), reqInt("globalPid", 0), req("deviceId"), req("streamId"), reqInt("correlationId", 0), req("bytes"), req("copyKind"), optInt("srcKind", -1), optInt("dstKind", -1), optInt("graphNodeId", 0)}

// Memcpys streams the memcpy table.
func (f *File) Memcpys() iter.Seq2[Memcpy, error] { return f.MemcpysIn(AllRows) }

// MemcpysIn streams the memcpy rows of part p (see SplitTable), every field
// filled, as Memcpys does for the whole table.
func (f *File) MemcpysIn(p Part) iter.Seq2[Memcpy, error] {
	return seqRange(f, TableMemcpy, memcpyCols, hintCUDA, p, func(st row) Memcpy {
		return Memcpy{
			Start: st.ColumnInt64(0), End: st.ColumnInt64(1), GlobalPid: st.ColumnInt64(2),
			DeviceID: st.ColumnInt64(3), StreamID: st.ColumnInt64(4), CorrelationID: st.ColumnInt64(5),
			Bytes: st.ColumnInt64(6), CopyKind: st.ColumnInt64(7), SrcKind: st.ColumnInt64(8), DstKind: st.ColumnInt64(9),
			GraphNodeID: st.ColumnInt64(10),
		}
	})
}

// Memset is one row of CUPTI_ACTIVITY_KIND_MEMSET.
type Memset struct {
	Start, End    int64
	GlobalPid     int64
	DeviceID      int64
	StreamID      int64
	CorrelationID int64
	Bytes         int64
	MemKind       int64 // -1 = unknown
	GraphNodeID   int64
}

var memsetCols = []column{req("start"), req("end"), reqN("globalPid"), req("deviceId"), req("streamId"), reqN("correlationId"), req("bytes"), opt("memKind"), opt("graphNodeId")}

// Memsets streams the memset table.
func (f *File) Memsets() iter.Seq2[Memset, error] { return f.MemsetsIn(AllRows) }

// MemsetsIn streams the memset rows of part p (see SplitTable), every field
// filled, as Memsets does for the whole table.
func (f *File) MemsetsIn(p Part) iter.Seq2[Memset, error] {
	return seqRange(f, TableMemset, memsetCols, hintCUDA, p, func(st row) Memset {
		return Memset{
			Start: st.ColumnInt64(0), End: st.ColumnInt64(1), GlobalPid: nullInt(st, 2, 0),
			DeviceID: st.ColumnInt64(3), StreamID: st.ColumnInt64(4), CorrelationID: nullInt(st, 5, 0),
			Bytes: st.ColumnInt64(6), MemKind: nullInt(st, 7, -1), GraphNodeID: nullInt(st, 8, 0),
		}
	})
}

// Sync is one row of CUPTI_ACTIVITY_KIND_SYNCHRONIZATION. Classify syncs by the
// API call that correlationId names, not by SyncType: every
// cudaStreamSynchronize in 2025.3 exports carries syncType 2 ("stream wait").
type Sync struct {
	Start, End    int64
	GlobalPid     int64
	DeviceID      int64
	StreamID      int64
	CorrelationID int64
	SyncType      int64
	EventID       int64
}

var syncCols = []column{req("start"), req("end"), reqN("globalPid"), req("deviceId"), req("streamId"), reqN("correlationId"), req("syncType"), opt("eventId")}

// Syncs streams the synchronization table.
func (f *File) Syncs() iter.Seq2[Sync, error] {
	return seq(f, TableSync, syncCols, hintCUDA, func(st row) Sync {
		return Sync{
			Start: st.ColumnInt64(0), End: st.ColumnInt64(1), GlobalPid: nullInt(st, 2, 0),
			DeviceID: st.ColumnInt64(3), StreamID: st.ColumnInt64(4), CorrelationID: nullInt(st, 5, 0),
			SyncType: st.ColumnInt64(6), EventID: nullInt(st, 7, -1),
		}
	})
}

// Event classes of CUPTI_ACTIVITY_KIND_RUNTIME rows (ENUM_NSYS_EVENT_CLASS).
const (
	ClassRuntime = 0 // cuda* runtime API
	ClassDriver  = 1 // cu* driver API; may nest inside a runtime call
)

// IsCallClass reports whether a row of CUPTI_ACTIVITY_KIND_RUNTIME with
// this eventClass is a call: a runtime or driver one. With --cudabacktrace
// each traced call also appears as an eventClass 67 "CUDA backtrace" row
// that wraps it and repeats its correlation id: counting it as a call would
// double the call's time and GPU work.
func IsCallClass(eventClass int64) bool {
	return eventClass == ClassRuntime || eventClass == ClassDriver
}

// APICall is one row of CUPTI_ACTIVITY_KIND_RUNTIME: a CUDA runtime or driver call.
type APICall struct {
	Start, End    int64
	GlobalTid     int64
	CorrelationID int64
	NameID        int64 // StringIds id
	EventClass    int64
	ReturnValue   int64
	CallchainID   int64 // 0 = no backtrace
}

var apiCols = []column{req("start"), req("end"), req("globalTid"), reqInt("correlationId", 0), req("nameId"), optInt("eventClass", ClassRuntime), optInt("returnValue", 0), optInt("callchainId", 0)}

// APICalls streams runtime and driver API calls.
func (f *File) APICalls() iter.Seq2[APICall, error] {
	return seq(f, TableRuntime, apiCols, hintCUDA, func(st row) APICall {
		return APICall{
			Start: st.ColumnInt64(0), End: st.ColumnInt64(1), GlobalTid: st.ColumnInt64(2),
			CorrelationID: st.ColumnInt64(3), NameID: st.ColumnInt64(4), EventClass: st.ColumnInt64(5),
			ReturnValue: st.ColumnInt64(6), CallchainID: st.ColumnInt64(7),
		}
	})
}

// APICore is the columns of an API call that the engine reads, of the
// table with the most rows: no return value, no callchain.
type APICore struct {
	Start, End    int64
	GlobalTid     int64
	CorrelationID int64
	NameID        int64 // StringIds id
	EventClass    int64
}

// apiCoreCols are APICore's columns, in the order read reads them.
var apiCoreCols = []column{req("start"), req("end"), req("globalTid"), reqInt("correlationId", 0), req("nameId"), optInt("eventClass", ClassRuntime)}

// read decodes a row of apiCoreCols into c, as KernelCore.read does.
func (c *APICore) read(st row) {
	v := intsOf(st)
	if v == nil {
		var buf [6]int64
		v = sqlInts(st, buf[:])
	}
	_ = v[5]
	c.Start, c.End, c.GlobalTid, c.CorrelationID, c.NameID, c.EventClass = v[0], v[1], v[2], v[3], v[4], v[5]
}

// APICallsCoreIn streams the API calls of part p (see SplitTable) with only
// APICore's fields filled.
func (f *File) APICallsCoreIn(p Part) iter.Seq2[APICall, error] {
	return seqRange(f, TableRuntime, apiCoreCols, hintCUDA, p, func(st row) APICall {
		var c APICore
		c.read(st)
		return APICall{Start: c.Start, End: c.End, GlobalTid: c.GlobalTid, CorrelationID: c.CorrelationID, NameID: c.NameID, EventClass: c.EventClass}
	})
}

// APICoresIn scans the API calls of part p as KernelCoresIn scans kernels,
// calling fn with each one's APICore.
func (f *File) APICoresIn(p Part, fn func(c *APICore) bool) error {
	var c APICore
	return f.scanRange(TableRuntime, apiCoreCols, hintCUDA, p, func(st row) bool {
		c.read(st)
		return fn(&c)
	})
}

// GraphTrace is one row of CUPTI_ACTIVITY_KIND_GRAPH_TRACE: a whole CUDA graph
// launch, recorded with --cuda-graph-trace=graph (no per-kernel rows then).
type GraphTrace struct {
	Start, End    int64
	GlobalPid     int64
	DeviceID      int64
	StreamID      int64
	CorrelationID int64
	GraphID       int64
	GraphExecID   int64
}

var graphTraceCols = []column{req("start"), req("end"), reqN("globalPid"), req("deviceId"), req("streamId"), reqN("correlationId"), opt("graphId"), opt("graphExecId")}

// GraphTraces streams whole-graph launch records.
func (f *File) GraphTraces() iter.Seq2[GraphTrace, error] { return f.GraphTracesIn(AllRows) }

// GraphTracesIn streams the graph launch records of part p (see
// SplitTable), every field filled, as GraphTraces does for the whole table.
func (f *File) GraphTracesIn(p Part) iter.Seq2[GraphTrace, error] {
	return seqRange(f, TableGraphTrace, graphTraceCols, hintCUDA, p, func(st row) GraphTrace {
		return GraphTrace{
			Start: st.ColumnInt64(0), End: st.ColumnInt64(1), GlobalPid: nullInt(st, 2, 0),
			DeviceID: st.ColumnInt64(3), StreamID: st.ColumnInt64(4), CorrelationID: nullInt(st, 5, 0),
			GraphID: nullInt(st, 6, 0), GraphExecID: nullInt(st, 7, 0),
		}
	})
}

// NVTX event types (ENUM_NSYS_EVENT_TYPE).
const (
	NVTXCategory     = 33
	NVTXMark         = 34
	NVTXPushPop      = 59
	NVTXStartEnd     = 60
	NVTXTPushPop     = 70 // NVTXT variants that are ranges
	NVTXTStartEnd    = 71
	NVTXDomainCreate = 75
	NVTXDomainDelete = 76
)

// IsRange reports whether an NVTX event type is a range (push/pop or start/end).
func IsRange(eventType int64) bool {
	switch eventType {
	case NVTXPushPop, NVTXStartEnd, NVTXTPushPop, NVTXTStartEnd:
		return true
	}
	return false
}

// NVTXEvent is one row of NVTX_EVENTS.
type NVTXEvent struct {
	Start        int64
	End          int64 // valid when HasEnd
	HasEnd       bool  // false: the range was never closed (or a mark)
	EventType    int64
	RangeID      int64
	Category     int64
	Color        int64
	Text         string // the non-registered string; see TextID
	TextID       int64  // StringIds id of a registered string; valid when HasTextID
	HasTextID    bool
	GlobalTid    int64
	EndGlobalTid int64 // valid when HasEndTid: a start/end range ended on another thread
	HasEndTid    bool
	DomainID     int64
}

var nvtxCols = []column{req("start"), reqN("end"), req("eventType"), opt("rangeId"), opt("category"), opt("color"), reqN("text"), reqN("globalTid"), opt("endGlobalTid"), opt("textId"), opt("domainId")}

const hintNVTX = "annotate the program with NVTX ranges and record with `nsys profile -t cuda,nvtx`"

// NVTXEvents streams NVTX events of every type.
func (f *File) NVTXEvents() iter.Seq2[NVTXEvent, error] {
	return seq(f, TableNVTX, nvtxCols, hintNVTX, func(st row) NVTXEvent { return decodeNVTX(f, st) })
}

// nvtxCoreCols are nvtxCols without rangeId, category and color: optional
// columns that segmentation does not read.
var nvtxCoreCols = []column{req("start"), reqN("end"), req("eventType"), reqN("text"), reqN("globalTid"), opt("endGlobalTid"), opt("textId"), opt("domainId")}

// NVTXEventsCoreIn streams the NVTX events of part p (see SplitTable) with
// RangeID, Category and Color left zero: the columns segmentation does not
// read. Texts repeat, and each distinct one is a single string per call.
func (f *File) NVTXEventsCoreIn(p Part) iter.Seq2[NVTXEvent, error] {
	return func(yield func(NVTXEvent, error) bool) {
		texts := interner{f: f}
		seqRange(f, TableNVTX, nvtxCoreCols, hintNVTX, p, func(st row) NVTXEvent {
			e := NVTXEvent{Start: st.ColumnInt64(0), EventType: st.ColumnInt64(2), GlobalTid: nullInt(st, 4, 0), DomainID: nullInt(st, 7, 0)}
			if st.ColumnType(1) != sqlite.TypeNull {
				e.End, e.HasEnd = st.ColumnInt64(1), true
			}
			if st.ColumnType(3) != sqlite.TypeNull {
				e.Text = texts.text(st, 3)
			}
			if st.ColumnType(5) != sqlite.TypeNull {
				e.EndGlobalTid, e.HasEndTid = st.ColumnInt64(5), true
			}
			if st.ColumnType(6) != sqlite.TypeNull {
				e.TextID, e.HasTextID = st.ColumnInt64(6), true
			}
			return e
		})(yield)
	}
}

// maxInterned bounds an interner's table: names with per-call ids
// (PyTorch's "seq = 12") never repeat.
const maxInterned = 1 << 12

// interner returns one string per distinct text of a scan: NVTX texts
// repeat (a few dozen names over tens of thousands of rows). A small table
// by length and first byte answers most rows without hashing; a page row's
// bytes are looked up without a copy. Texts come back through CleanName.
type interner struct {
	f      *File // its budget of long names
	recent [64]internEntry
	seen   map[string]string // raw text → clean text
}

type internEntry struct{ raw, clean string }

// text reads text column i as ColumnText does.
func (in *interner) text(st row, i int) string {
	if pr, ok := st.(*pageRow); ok && pr.pos[i] >= 0 {
		if k := pr.kind(i); k == btree.Text || k == btree.Blob {
			return in.bytes(pr.rec.Bytes(pr.pos[i]))
		}
	}
	return in.bytes([]byte(st.ColumnText(i)))
}

func (in *interner) bytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	slot := &in.recent[(len(b)*7+int(b[0]))&63]
	if string(b) == slot.raw {
		return slot.clean
	}
	v, ok := in.seen[string(b)]
	var raw string
	switch {
	case ok && v == string(b):
		raw = v // a clean text: one string for both
	case ok:
		raw = string(b)
	default:
		raw = string(b)
		v = in.f.cleanName(raw)
		if in.seen == nil {
			in.seen = map[string]string{}
		}
		if len(in.seen) < maxInterned && len(raw) <= budget.DisplayNameBytes {
			in.seen[raw] = v
		}
	}
	*slot = internEntry{raw, v}
	return v
}

func decodeNVTX(f *File, st row) NVTXEvent {
	e := NVTXEvent{
		Start: st.ColumnInt64(0), EventType: st.ColumnInt64(2), RangeID: nullInt(st, 3, 0),
		Category: nullInt(st, 4, 0), Color: nullInt(st, 5, 0), GlobalTid: nullInt(st, 7, 0),
		DomainID: nullInt(st, 10, 0),
	}
	if st.ColumnType(1) != sqlite.TypeNull {
		e.End, e.HasEnd = st.ColumnInt64(1), true
	}
	if st.ColumnType(6) != sqlite.TypeNull {
		e.Text = f.cleanName(st.ColumnText(6))
	}
	if st.ColumnType(8) != sqlite.TypeNull {
		e.EndGlobalTid, e.HasEndTid = st.ColumnInt64(8), true
	}
	if st.ColumnType(9) != sqlite.TypeNull {
		e.TextID, e.HasTextID = st.ColumnInt64(9), true
	}
	return e
}

// OSRuntimeCall is one row of OSRT_API (present when recorded with -t osrt).
type OSRuntimeCall struct {
	Start, End   int64
	GlobalTid    int64
	NameID       int64
	ReturnValue  int64
	NestingLevel int64
}

var osrtCols = []column{req("start"), req("end"), req("globalTid"), req("nameId"), opt("returnValue"), opt("nestingLevel")}

// OSRuntimeCalls streams OS runtime library calls.
func (f *File) OSRuntimeCalls() iter.Seq2[OSRuntimeCall, error] {
	return seq(f, TableOSRT, osrtCols, "record with `nsys profile -t osrt`", func(st row) OSRuntimeCall {
		return OSRuntimeCall{
			Start: st.ColumnInt64(0), End: st.ColumnInt64(1), GlobalTid: st.ColumnInt64(2),
			NameID: st.ColumnInt64(3), ReturnValue: nullInt(st, 4, 0), NestingLevel: nullInt(st, 5, 0),
		}
	})
}
