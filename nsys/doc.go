// Package nsys is the first pipeline stage: it reads an Nsight Systems SQLite
// export (`nsys export --type sqlite`).
//
// Input: the path of an export from nsys 2020.3 on: FILE.sqlite,
// FILE.sqlite.xz (decompressed into a private temporary copy, its blocks on all
// cores when `xz -T` wrote several), a `nsys export
// --type parquetdir` directory (imported into one) or a FILE.nsys-rep report
// or an older FILE.qdrep one (exported once by nsys into a cache keyed by its
// hash). File.Path stays the
// name given, which every error and Warning names, and Close removes any
// copy. Open proves the file is an Nsight Systems export (its metadata table,
// META_DATA_EXPORT or the older EXPORT_META_DATA, or StringIds plus a
// CUPTI_/NVTX_/OSRT_/TARGET_INFO_ table), reads what provenance exists
// (Export.Unknown names the rest), probes once which tables and
// columns exist, and opens the file strictly read-only: a `file:` URI with
// mode=ro and immutable=1, so SQLite takes no locks, never checks or creates a
// journal, and no -wal/-shm file ever appears beside the input.
//
// Output: typed rows streamed column-pruned through range-over-func iterators
// (kernels, memcpy, memset, synchronization records, runtime/driver API calls,
// NVTX events, CUDA graph trace records, OS runtime calls), plus the small
// provenance tables (strings, threads, processes, GPUs, capture/export
// metadata). The big activity tables are never held in memory: each scan runs
// on its own so that independent tables, and the parts of one table (runs
// of B-tree subtrees), are read concurrently. File.SplitTable cuts a table
// into Parts, File.RowEstimate sizes them, and a part scan (KernelsCoreIn,
// MemcpysIn, MemsetsIn, GraphTracesIn, APICallsCoreIn, NVTXEventsCoreIn, or
// KernelCoresIn and APICoresIn, which hand over each row's core columns
// without an iterator step) reads one.
//
// Scans read the rows straight from the file's B-tree pages (package
// internal/btree, opened read-only on the same file) — about ten times
// faster than stepping SQLite's virtual machine in pure Go — and fall back
// to SQLite for any table the page reader does not take (WITHOUT ROWID,
// generated columns, defaults, views; a UTF-16 database). The page reader
// refuses what SQLite calls malformed (and what only its integrity check
// sees: rowids out of order); the SQLite path checks rowid order itself.
// Both paths yield the same
// values and types; TestPageScansEqualSQLite compares them on every table
// of every fixture.
//
// An absent activity table means that activity did not happen or was not
// traced (the exporter is lazy); scans of it yield nothing and Tables reports
// it as absent. An absent required table or column is an *InputError naming
// the file, what is missing and what to do.
//
// Identifiers: globalTid/globalPid pack <hw:8><vm:8><pid:24><tid:24>; use Pid,
// Tid and ProcessKey. correlationId, deviceId, contextId and streamId are per
// process: join on (ProcessKey, correlationId).
package nsys
