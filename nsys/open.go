package nsys

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"zombiezen.com/go/sqlite"

	"github.com/nsysphase/nsysphase/nsys/internal/btree"
)

// InputError says that an input cannot be used: which file, what is wrong and
// what the user can do about it. Commands map it to exit status 2.
type InputError struct {
	Path    string
	Problem string
	Hint    string // what to do; may be empty
	Err     error  // underlying cause; may be nil
}

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	b.WriteString(": ")
	b.WriteString(e.Problem)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(oneLine(e.Err.Error()))
	}
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

func (e *InputError) Unwrap() error { return e.Err }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

const hintReexport = "re-export the report with `nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep`"

// SupportedSchemaMajor is the export schema major version this reader was
// written against (exporter 2025.3.2 writes 3.20.3). A different major version
// is refused; a different minor is read with a warning, since NVIDIA may rename
// columns between minor versions and the column probe then names what is gone.
const SupportedSchemaMajor = 3

// MinSchemaMajor is the oldest export schema major version read: nsys
// 2022.1–2022.3 wrote 2.x (older exports carry no schema version at all).
const MinSchemaMajor = 2

// ExportInfo is the export's metadata (META_DATA_EXPORT, EXPORT_META_DATA
// before 2023.3, none before 2022.1): which exporter wrote it.
type ExportInfo struct {
	MetadataTable  string   // the metadata table read; "" when the export has none
	VersionSource  string   // where ProductVersion came from (a table, or an install path); "" when unknown
	Unknown        []string // what the export does not say, e.g. "nsys version"
	ProductName    string   // "NVIDIA Nsight Systems"
	ProductVersion string   // e.g. "2025.3.2.0"
	SchemaVersion  string   // e.g. "3.20.3"
	SchemaMajor    int
	SchemaMinor    int
	SchemaMicro    int
	Values         []KeyValue // every row, in table order
}

// KeyValue is one name/value row of a metadata table.
type KeyValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// File is an opened export. Scans may run concurrently from several
// goroutines: each opens its own read-only connection.
type File struct {
	// Path is the input as the user named it (FILE.sqlite, FILE.sqlite.xz
	// or a parquetdir directory): every error and warning names it.
	Path string
	// Disk is the SQLite file actually read: Path itself, or a private
	// temporary copy (decompressed .xz, imported parquetdir) that Close
	// removes.
	Disk   string
	Export ExportInfo
	// Warnings are oddities of the file that do not stop reading (a newer
	// schema minor version, rows skipped by a scan). They travel with results.
	Warnings []Warning

	// mmapSize, when > 0, lets SQLite memory-map up to this many bytes of
	// the export per connection (faster scans, higher resident memory).
	mmapSize int64

	ctx     context.Context
	uri     string
	columns map[string][]string // table → column names, as probed once at Open
	meta    *sqlite.Conn        // for the small tables; guarded by metaMu
	metaMu  sync.Mutex

	longNames longNames // the budget of long names (cleanName)

	skipMu  sync.Mutex
	skipped map[string]int64 // table → rows a scan could not use
	warned  map[string]bool  // warnings already added by warnOnce; guarded by skipMu

	cleanup func() // removes a private copy (.xz, parquetdir); nil otherwise

	joinOnce sync.Once // builds join (JoinPid)
	join     *joinPids

	// sqlScans makes every scan go through SQLite instead of reading the
	// B-tree pages directly (the two give the same rows; tests compare them).
	sqlScans bool

	pageFile   *os.File              // the export, opened read-only for page scans; nil when they are off
	pages      *btree.File           // direct reader of pageFile
	pageTables map[string]*pageTable // tables page scans can read
	rowidName  map[string]string     // rowid tables → a name that reads the rowid ("rowid", "_rowid_" or "oid")
	// declaredNotNull lists, per table, the lower-cased columns declared NOT
	// NULL: SQLite folds `c IS NULL` on them to false, yet a stored NaN
	// reads as NULL there.
	declaredNotNull map[string][]string

	hintMu sync.Mutex
	hints  map[string]int64 // RowEstimate's answers

	// audits hold, per table and part, what the page scans that read the
	// table's start and end counted (see timeAudit): a table whose parts
	// were all scanned needs no second pass in CheckTimes.
	auditMu sync.Mutex
	audits  map[string]map[Part][2]int64
}

var sqliteMagic = []byte("SQLite format 3\x00")

// Open opens an export read-only. See OpenContext.
func Open(path string) (*File, error) { return OpenContext(context.Background(), path) }

// OpenContext opens an export strictly read-only and proves it is an Nsight
// Systems export: a SQLite file, an xz-compressed one (FILE.sqlite.xz,
// decompressed into a private temporary copy), or a directory written by
// `nsys export --type parquetdir` (imported into a private temporary copy).
// File.Path stays the name given; Close removes any copy. Scans started from
// the file stop when ctx is done.
func OpenContext(ctx context.Context, path string) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &InputError{Path: path, Problem: "no such file", Hint: "check the path"}
		}
		return nil, &InputError{Path: path, Problem: "cannot read file", Err: err}
	}
	if st.IsDir() {
		if IsParquetDir(path) {
			return openParquetDir(ctx, path)
		}
		return nil, &InputError{Path: path, Problem: "is a directory, not an export", Hint: "pass the .sqlite file written by `nsys export --type sqlite` (or a `--type parquetdir` directory)"}
	}
	if strings.HasSuffix(path, ".xz") {
		return openXZ(ctx, path)
	}
	if !st.Mode().IsRegular() && !isReport(path) {
		return openStream(ctx, path)
	}
	if isReport(path) {
		cached, fresh, err := exportReport(ctx, path)
		if err != nil {
			return nil, err
		}
		f, err := openSQLite(ctx, cached, path)
		if err != nil && !fresh && ctx.Err() == nil {
			// A cached export that no longer opens (damaged on disk, or
			// cached by an older nsysphase that did not check it) is
			// exported again, once.
			_ = os.Remove(cached)
			if cached, _, err = exportReport(ctx, path); err != nil {
				return nil, err
			}
			f, err = openSQLite(ctx, cached, path)
		}
		return f, err
	}
	f, err := openSQLite(ctx, path, path)
	if errors.Is(err, errXZContent) {
		// xz under another name (`analyze /dev/stdin < run.sqlite.xz`)
		return openXZ(ctx, path)
	}
	return f, err
}

// errXZContent is checkHeader's answer for the user's own file when it
// holds an xz stream, not SQLite: OpenContext decompresses it instead.
var errXZContent = errors.New("xz content")

// privateCopy opens the SQLite file disk, a temporary copy of the input path
// in directory tmp, and hands tmp to the File's Close; on failure tmp is
// removed at once.
func privateCopy(ctx context.Context, disk, path, tmp string) (*File, error) {
	f, err := openSQLite(ctx, disk, path)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	f.cleanup = func() { os.RemoveAll(tmp) }
	return f, nil
}

// openSQLite opens the SQLite file disk as the export the user named path;
// see OpenContext. Every error names path.
func openSQLite(ctx context.Context, disk, path string) (*File, error) {
	st, err := os.Stat(disk)
	if err != nil {
		return nil, &InputError{Path: path, Problem: "cannot read file", Err: err}
	}
	if st.Size() == 0 {
		return nil, &InputError{Path: path, Problem: "empty file", Hint: hintReexport}
	}
	if err := checkHeader(disk, path, st.Size()); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(disk)
	if err != nil {
		return nil, &InputError{Path: path, Problem: "cannot resolve path", Err: err}
	}
	f := &File{
		Path:    path,
		Disk:    disk,
		ctx:     ctx,
		uri:     fileURI(abs),
		skipped: map[string]int64{},
	}
	f.meta, err = f.conn()
	if err != nil {
		return nil, err
	}
	if err := f.probe(); err != nil {
		f.meta.Close()
		return nil, err
	}
	if err := f.readExportInfo(); err != nil {
		f.meta.Close()
		return nil, err
	}
	if disk == path {
		f.checkSidecars() // a private copy has none
	}
	f.openPages(disk, st.Size())
	return f, nil
}

// sidecarSuffixes are the files SQLite keeps beside a database while writing it.
var sidecarSuffixes = []string{"-wal", "-journal", "-shm"}

// checkSidecars warns about a -wal, -journal or -shm file beside the export.
// The immutable open ignores them (and never creates, rolls back or deletes
// them), so the export is read exactly as it is on disk; but such a file
// means a program was writing the export, or was interrupted doing so, and
// changes it holds are not part of what is read.
func (f *File) checkSidecars() {
	for _, suf := range sidecarSuffixes {
		if _, err := os.Lstat(f.Path + suf); err == nil {
			f.Warnings = append(f.Warnings, FileWarning(WarnSidecar, f.Path, "a %s file sits beside the export; it was ignored and left untouched, so changes it may hold are not read (if a program was still writing the export, re-export it)", suf))
		}
	}
}

// checkHeader reads the 100-byte SQLite header and refuses files that are not
// SQLite or are shorter than the header says. SQLite itself reads a short
// file as if the missing pages were zeros, so an export cut inside its last
// pages would otherwise open and yield wrong rows without any error.
func checkHeader(disk, path string, size int64) error {
	fh, err := os.Open(disk)
	if err != nil {
		return &InputError{Path: path, Problem: "cannot read file", Err: err}
	}
	defer fh.Close()
	head := make([]byte, 100)
	n, err := io.ReadFull(fh, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return &InputError{Path: path, Problem: "cannot read file", Err: err}
	}
	if disk == path && bytes.HasPrefix(head[:n], xzMagic) {
		return errXZContent
	}
	if !bytes.HasPrefix(head[:n], sqliteMagic) {
		return &InputError{Path: path, Problem: "not an SQLite database", Hint: "nsysphase reads the SQLite export of a report: `nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep`"}
	}
	if n < 100 {
		return &InputError{Path: path, Problem: "truncated SQLite file (shorter than its 100-byte header)", Hint: hintReexport}
	}
	// Page size: a power of two from 512 to 65536, stored as 1 for 65536.
	pageSize := int64(binary.BigEndian.Uint16(head[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return &InputError{Path: path, Problem: fmt.Sprintf("damaged SQLite header (page size %d)", pageSize), Hint: hintReexport}
	}
	if size < pageSize {
		return &InputError{Path: path, Problem: fmt.Sprintf("truncated SQLite file (%d bytes, less than one %d-byte page)", size, pageSize), Hint: hintReexport}
	}
	// The page count in the header is valid when the change counter equals
	// the version-valid-for number (SQLite ≥ 3.7.0 writers, nsys included).
	pages := int64(binary.BigEndian.Uint32(head[28:32]))
	if pages > 0 && bytes.Equal(head[24:28], head[92:96]) {
		if want := pages * pageSize; size < want {
			return &InputError{Path: path, Problem: fmt.Sprintf("truncated SQLite file (%d bytes; its header says %d pages of %d bytes, %d bytes)", size, pages, pageSize, want), Hint: "the copy or export was cut short; " + hintReexport}
		}
		return nil
	}
	if size%pageSize != 0 {
		return &InputError{Path: path, Problem: fmt.Sprintf("truncated SQLite file (%d bytes, not a whole number of %d-byte pages)", size, pageSize), Hint: "the copy or export was cut short; " + hintReexport}
	}
	return nil
}

// fileURI builds the `file:` URI that keeps the input untouched: mode=ro
// refuses writes, immutable=1 skips locking and journal/WAL recovery, so no
// -wal, -shm or -journal file is created or consulted beside the input.
func fileURI(abs string) string {
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&immutable=1"}
	return u.String()
}

// conn opens a new read-only connection. zombiezen's OpenConn defaults to
// read-write with WAL, which would rewrite the export: the flags are explicit.
func (f *File) conn() (*sqlite.Conn, error) {
	c, err := sqlite.OpenConn(f.uri, sqlite.OpenReadOnly|sqlite.OpenURI)
	if err != nil {
		return nil, &InputError{Path: f.Path, Problem: "cannot open as SQLite", Err: err, Hint: hintReexport}
	}
	if f.ctx != nil && f.ctx.Done() != nil {
		c.SetInterrupt(f.ctx.Done())
	}
	// Memory-mapped reads are 10–15% faster for one-pass scans, but every
	// mapped page of the export then counts in the process's resident set
	// (a 108 MB export added ~100 MB of RSS). Off by default; mmapSize turns
	// it on.
	// A one-pass scan never rereads a page: a small page cache per
	// connection (512 KiB instead of 2 MiB) keeps a dozen concurrent scans
	// light.
	if err := execSimple(c, "PRAGMA cache_size=-512"); err != nil {
		c.Close()
		return nil, f.readError("cannot configure connection", err)
	}
	if f.mmapSize > 0 {
		if err := execSimple(c, fmt.Sprintf("PRAGMA mmap_size=%d", f.mmapSize)); err != nil {
			c.Close()
			return nil, f.readError("cannot configure connection", err)
		}
	}
	return c, nil
}

func execSimple(c *sqlite.Conn, q string) error {
	st, _, err := c.PrepareTransient(q)
	if err != nil {
		return err
	}
	defer st.Finalize()
	for {
		ok, err := st.Step()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
	}
}

// readError wraps a failure while reading the database: a damaged or
// truncated file surfaces here.
func (f *File) readError(what string, err error) error {
	var ie *InputError
	if errors.As(err, &ie) {
		return err
	}
	if f.ctx != nil && f.ctx.Err() != nil {
		return f.ctx.Err()
	}
	return &InputError{Path: f.Path, Problem: what, Err: err, Hint: "the file may be truncated or damaged; " + hintReexport}
}

func (f *File) probe() error {
	f.columns = map[string][]string{}
	f.pageTables = map[string]*pageTable{}
	f.rowidName = map[string]string{}
	f.declaredNotNull = map[string][]string{}
	type entry struct {
		name string
		tableInfo
	}
	// What SQLite knows of each table, not a reading of its CREATE text:
	// whether it is a view, and whether it has rowids.
	withoutRowid := map[string]bool{}
	err := f.query("SELECT name, wr FROM pragma_table_list WHERE schema = 'main'", func(st *sqlite.Stmt) error {
		withoutRowid[st.ColumnText(0)] = st.ColumnInt64(1) != 0
		return nil
	})
	if err != nil {
		return f.readError("cannot list tables", err)
	}
	var tables []entry
	// Views are read through SQLite: an activity table replaced by a view
	// still yields its rows.
	err = f.query("SELECT name, rootpage, sql, type FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name", func(st *sqlite.Stmt) error {
		ti := tableInfo{root: st.ColumnInt64(1), sql: st.ColumnText(2), view: st.ColumnText(3) == "view"}
		ti.withoutRowid = withoutRowid[st.ColumnText(0)]
		tables = append(tables, entry{name: st.ColumnText(0), tableInfo: ti})
		return nil
	})
	if err != nil {
		return f.readError("cannot list tables", err)
	}
	for _, t := range tables {
		var cols []string
		err := f.query("SELECT name, type, pk, dflt_value IS NOT NULL, hidden, \"notnull\" FROM pragma_table_xinfo("+quoteLiteral(t.name)+")", func(st *sqlite.Stmt) error {
			c := columnInfo{name: st.ColumnText(0), typ: st.ColumnText(1), pk: st.ColumnInt64(2), hasDflt: st.ColumnInt64(3) != 0, hidden: st.ColumnInt64(4)}
			t.columns = append(t.columns, c)
			if st.ColumnInt64(5) != 0 {
				f.declaredNotNull[t.name] = append(f.declaredNotNull[t.name], strings.ToLower(c.name))
			}
			if c.hidden == 0 {
				cols = append(cols, c.name)
			}
			return nil
		})
		if err != nil {
			return f.readError("cannot read the columns of table "+t.name, err)
		}
		// A PRIMARY KEY that is not the rowid is enforced by an index of
		// origin 'pk'; an INTEGER PRIMARY KEY aliasing the rowid has none
		// (whatever DESC or comments its CREATE text holds).
		err = f.query("SELECT count(*) FROM pragma_index_list("+quoteLiteral(t.name)+") WHERE origin = 'pk'", func(st *sqlite.Stmt) error {
			t.pkIndex = st.ColumnInt64(0) != 0
			return nil
		})
		if err != nil {
			return f.readError("cannot read the indexes of table "+t.name, err)
		}
		f.columns[t.name] = cols
		if !t.view && !t.withoutRowid {
			for _, name := range []string{"rowid", "_rowid_", "oid"} {
				if !slices.ContainsFunc(t.columns, func(c columnInfo) bool { return strings.EqualFold(c.name, name) }) {
					f.rowidName[t.name] = name
					break
				}
			}
		}
		if pt := pageTableOf(t.tableInfo); pt != nil {
			f.pageTables[t.name] = pt
		}
	}
	return nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// query runs q on the metadata connection and calls fn for every row.
func (f *File) query(q string, fn func(*sqlite.Stmt) error) error {
	f.metaMu.Lock()
	defer f.metaMu.Unlock()
	return queryConn(f.meta, q, fn)
}

// queryConn runs q on c, calling fn on each row.
func queryConn(c *sqlite.Conn, q string, fn func(*sqlite.Stmt) error) error {
	st, _, err := c.PrepareTransient(q)
	if err != nil {
		return err
	}
	defer st.Finalize()
	for {
		ok, err := st.Step()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if err := fn(st); err != nil {
			return err
		}
	}
}

// exportFamilies are the table-name prefixes every Nsight Systems export
// since 2020.3 holds at least one of (besides StringIds); a database with
// none of them is some other program's.
var exportFamilies = []string{"CUPTI_", "NVTX_", "OSRT_", "TARGET_INFO_"}

// metadataTables are the names the exporter gave its own metadata table:
// META_DATA_EXPORT from 2023.3, EXPORT_META_DATA in 2022.1–2023.2; older
// exports have none.
var metadataTables = []string{"META_DATA_EXPORT", "EXPORT_META_DATA"}

// installVersion finds an nsys version in an install path such as
// /opt/nvidia/nsight-systems/2021.3.3/target-linux-x64 or
// .../nsight-systems-2020.3.2/...
var installVersion = regexp.MustCompile(`nsight[-_ ]systems[-/ ](20[0-9]{2}\.[0-9]+(?:\.[0-9]+)*)`)

// readExportInfo recognises an export by its tables (StringIds plus any of
// the export's table families), then reads provenance from whichever
// metadata table exists. What the file does not say is left empty and named
// in Export.Unknown and a warning; only a file that is not an export, or one
// that claims a schema major version this reader does not know, is refused.
func (f *File) readExportInfo() error {
	family := false
	for _, t := range f.Tables() {
		for _, p := range exportFamilies {
			if strings.HasPrefix(t, p) {
				family = true
			}
		}
	}
	e := &f.Export
	for _, t := range metadataTables {
		if f.HasTable(t) && f.HasColumn(t, "name") && f.HasColumn(t, "value") {
			e.MetadataTable = t
			break
		}
	}
	// The exporter's own metadata table proves the file is an export; without
	// it, StringIds and one of the export's table families do. An export
	// without StringIds is refused later, by the reads that need names.
	switch {
	case e.MetadataTable != "":
	case !family:
		return &InputError{Path: f.Path, Problem: "not an Nsight Systems export (no StringIds table and none of the CUPTI_/NVTX_/OSRT_/TARGET_INFO_ tables)", Hint: "nsysphase reads `nsys export --type sqlite` output"}
	case !f.HasTable(TableStrings):
		return &InputError{Path: f.Path, Problem: "missing table StringIds (every name of an Nsight Systems export lives there)", Hint: hintReexport}
	}
	if e.MetadataTable != "" {
		t := e.MetadataTable
		err := f.query("SELECT name, value FROM "+quoteIdent(t), func(st *sqlite.Stmt) error {
			kv := KeyValue{Name: st.ColumnText(0), Value: st.ColumnText(1)}
			e.Values = append(e.Values, kv)
			switch kv.Name {
			case "EXPORT_PRODUCT_NAME":
				e.ProductName = kv.Value
			case "EXPORT_PRODUCT_VERSION":
				e.ProductVersion = kv.Value
			case "EXPORT_SCHEMA_VERSION":
				e.SchemaVersion = kv.Value
			}
			return nil
		})
		if err != nil {
			return f.readError("cannot read "+t, err)
		}
		if e.ProductVersion != "" {
			e.VersionSource = t
		}
	}
	if e.ProductVersion == "" {
		if v, src := f.inferVersion(); v != "" {
			e.ProductVersion, e.VersionSource = v, src
		}
	}
	if e.ProductVersion == "" {
		e.Unknown = append(e.Unknown, "nsys version")
	}
	if e.SchemaVersion == "" {
		e.Unknown = append(e.Unknown, "export schema version")
	} else if err := f.parseSchema(); err != nil {
		return err
	}
	switch {
	case e.MetadataTable == "":
		f.Warnings = append(f.Warnings, FileWarning(WarnNoMetadata, f.Path, "no export metadata table (exports before nsys 2022.1 have none); %s unknown%s; tables and columns were probed and missing ones are reported", strings.Join(e.Unknown, " and "), e.versionNote()))
	case len(e.Unknown) > 0:
		f.Warnings = append(f.Warnings, FileWarning(WarnNoMetadata, f.Path, "%s does not say the %s; tables and columns were probed and missing ones are reported", e.MetadataTable, strings.Join(e.Unknown, " or ")))
	}
	return nil
}

// SchemaLabel is the schema version, or "unknown" when the export does not say.
func (e ExportInfo) SchemaLabel() string {
	if e.SchemaVersion == "" {
		return "unknown"
	}
	return e.SchemaVersion
}

// versionNote says where an inferred version came from.
func (e *ExportInfo) versionNote() string {
	if e.ProductVersion == "" || e.VersionSource == e.MetadataTable {
		return ""
	}
	return fmt.Sprintf(" (nsys %s inferred from %s)", e.ProductVersion, e.VersionSource)
}

// parseSchema splits EXPORT_SCHEMA_VERSION and refuses unknown majors.
func (f *File) parseSchema() error {
	e := &f.Export
	parts := strings.Split(e.SchemaVersion, ".")
	nums := make([]int, 3)
	for i := 0; i < len(parts) && i < 3; i++ {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return &InputError{Path: f.Path, Problem: fmt.Sprintf("unreadable EXPORT_SCHEMA_VERSION %q", e.SchemaVersion), Hint: hintReexport}
		}
		nums[i] = n
	}
	e.SchemaMajor, e.SchemaMinor, e.SchemaMicro = nums[0], nums[1], nums[2]
	if e.SchemaMajor < MinSchemaMajor || e.SchemaMajor > SupportedSchemaMajor {
		return &InputError{Path: f.Path, Problem: fmt.Sprintf("export schema %s is not supported (nsysphase reads schema %d.x–%d.x)", e.SchemaVersion, MinSchemaMajor, SupportedSchemaMajor), Hint: "export the report with Nsight Systems 2020.3–2026.x"}
	}
	if e.SchemaMajor != SupportedSchemaMajor || e.SchemaMinor != 20 {
		f.Warnings = append(f.Warnings, FileWarning(WarnSchemaMinor, f.Path, "export schema %s differs from the tested 3.20.x; columns were probed and missing ones are reported", e.SchemaVersion))
	}
	return nil
}

// inferVersion looks for the nsys install path that older exports record
// (TARGET_INFO_SYSTEM_ENV TargetInstallDir, or an injection library path in
// StringIds); "" when nothing names a version.
func (f *File) inferVersion() (version, source string) {
	if f.HasTable(TableSystemEnv) && f.HasColumn(TableSystemEnv, "name") && f.HasColumn(TableSystemEnv, "value") {
		_ = f.query("SELECT value FROM "+quoteIdent(TableSystemEnv)+" WHERE name = 'TargetInstallDir'", func(st *sqlite.Stmt) error {
			if m := installVersion.FindStringSubmatch(st.ColumnText(0)); m != nil && version == "" {
				version, source = m[1], "the install path (TARGET_INFO_SYSTEM_ENV TargetInstallDir)"
			}
			return nil
		})
	}
	if version == "" && f.HasColumn(TableStrings, "value") {
		_ = f.query("SELECT value FROM StringIds WHERE value LIKE '%nsight%systems%' LIMIT 64", func(st *sqlite.Stmt) error {
			if m := installVersion.FindStringSubmatch(st.ColumnText(0)); m != nil && version == "" {
				version, source = m[1], "the install path in StringIds"
			}
			return nil
		})
	}
	return version, source
}

// Close releases the metadata connection and any private copy of the input.
func (f *File) Close() error {
	var err error
	if f.meta != nil {
		err = f.meta.Close()
		f.meta = nil
	}
	if f.pageFile != nil {
		f.pageFile.Close()
		f.pageFile = nil
	}
	if f.cleanup != nil {
		f.cleanup()
		f.cleanup = nil
	}
	return err
}

// Tables lists the tables present in the export, sorted by name.
func (f *File) Tables() []string {
	names := make([]string, 0, len(f.columns))
	for t := range f.columns {
		names = append(names, t)
	}
	slices.Sort(names)
	return names
}

// HasTable reports whether the export holds table t.
func (f *File) HasTable(t string) bool { _, ok := f.columns[t]; return ok }

// HasColumn reports whether table t has column c.
// Column names match case-insensitively, as in SQL.
func (f *File) HasColumn(t, c string) bool {
	return slices.ContainsFunc(f.columns[t], func(name string) bool { return strings.EqualFold(name, c) })
}

// Columns returns the columns of table t as probed at Open.
func (f *File) Columns(t string) []string { return slices.Clone(f.columns[t]) }

// RowCount counts the rows of table t (0 when absent).
func (f *File) RowCount(t string) (int64, error) {
	if !f.HasTable(t) {
		return 0, nil
	}
	var n int64
	err := f.query("SELECT count(*) FROM "+quoteIdent(t), func(st *sqlite.Stmt) error {
		n = st.ColumnInt64(0)
		return nil
	})
	if err != nil {
		return 0, f.readError("cannot count rows of "+t, err)
	}
	return n, nil
}

// RowEstimate estimates the rows of table t, cheaply, for sizing buffers
// and parts (see SplitTable); RowCount counts them exactly. A table read
// from the pages is measured from its B-tree (its leaves,
// counted from the interior pages, times the cells of its first and last
// leaves): the estimate follows the rows, never the rowid values, which
// may be sparse. Other tables (views, WITHOUT ROWID) are counted by SQLite.
// Answers are kept per table; a damaged table reads as 0 and its scan
// reports the damage.
func (f *File) RowEstimate(t string) int64 {
	if !f.HasTable(t) {
		return 0
	}
	f.hintMu.Lock()
	defer f.hintMu.Unlock()
	if n, ok := f.hints[t]; ok {
		return n
	}
	var n int64
	if pt := f.pageTables[t]; pt != nil && f.pages != nil {
		n = f.pageRowEstimate(pt.root)
	} else if c, err := f.RowCount(t); err == nil {
		n = c
	}
	if f.hints == nil {
		f.hints = map[string]int64{}
	}
	f.hints[t] = n
	return n
}

// pageRowEstimate estimates the rows under B-tree root from its leaves.
func (f *File) pageRowEstimate(root uint32) int64 {
	leaves, _, isLeaf, err := f.pages.Subtrees(root, 1<<62)
	if err != nil || !isLeaf || len(leaves) == 0 {
		return 0
	}
	first, err1 := f.pages.Cells(leaves[0])
	last, err2 := f.pages.Cells(leaves[len(leaves)-1])
	if err1 != nil || err2 != nil {
		return 0
	}
	if len(leaves) == 1 {
		return int64(first)
	}
	return int64(len(leaves)-1)*int64(max(first, last)) + int64(last)
}

// Skipped returns, per table, how many rows scans could not use (a NULL in a
// column the row cannot do without). The rows are counted, never silently lost.
func (f *File) Skipped() map[string]int64 {
	f.skipMu.Lock()
	defer f.skipMu.Unlock()
	out := make(map[string]int64, len(f.skipped))
	for k, v := range f.skipped {
		out[k] = v
	}
	return out
}

func (f *File) addSkipped(t string, n int64) {
	if n == 0 {
		return
	}
	f.skipMu.Lock()
	f.skipped[t] += n
	f.skipMu.Unlock()
}
