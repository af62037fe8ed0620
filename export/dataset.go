package export

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/nsysphase/nsysphase/internal/base/marks"
	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/internal/base/regular"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// hiveNull is the directory value Hive, Spark, pyarrow and DuckDB read as a
// null partition key.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// partFile is the file name inside a partition directory, without extension.
const partFile = "part"

// validTableName reports whether name is safe as a file name on every OS
// and cannot escape the dataset directory.
func validTableName(name string) bool {
	if name == "" || name[0] == '.' || len(name) > 200 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// WriteDataset writes each table to dir in format f (normally Parquet):
// <dir>/<table><ext>, or Hive-partitioned <dir>/<table>/<k>=<v>/…/part<ext>
// for tables holding any of opt.PartitionBy. DuckDB reads a partitioned
// table as one with
//
//	read_parquet('<dir>/<table>/**/*.parquet', hive_partitioning=true)
//
// Everything is first written to a staging directory beside dir, with a
// manifest (_dataset.json) naming the format, layout and tables. If any
// table fails, staging is removed and dir is untouched. Otherwise the
// complete new dataset takes dir's place in one step: a new dir by one
// rename, an existing dataset (only with opt.Replace) by an atomic exchange
// where the system has one, so a reader never sees tables of two runs and
// tables of an older layout or format are gone.
func WriteDataset(dir string, tables []*Table, f Format, opt Options) error {
	for _, t := range tables { // refuse bad names before touching the file system
		if !validTableName(t.Name) {
			return fmt.Errorf("write dataset %s: table name %q is not a safe file name (letters, digits, '_', '-', '.')", dir, t.Name)
		}
	}
	w, err := NewDatasetWriter(dir, f, opt)
	if err != nil {
		return err
	}
	for _, t := range tables {
		w.Add(t)
	}
	return w.Commit()
}

// DatasetWriter writes a dataset table by table: each Add starts encoding
// its table in the background (into a staging directory beside dir), so a
// table that is ready early — the instances, before the statistics — is
// written while the rest is computed. Commit publishes all of them as
// WriteDataset does; Abort, or any failed table, leaves dir untouched.
type DatasetWriter struct {
	dir, staging string
	f            Format
	opt          Options
	mu           sync.Mutex
	seen         map[string]bool // guarded by mu
	staged       []*stagedTable  // in Add order
	wg           sync.WaitGroup
	sem          chan struct{}
	done         bool
}

// stagedTable is the outcome of one Add.
type stagedTable struct {
	entry string // top-level name in staging
	err   error
}

// NewDatasetWriter creates the staging directory for a dataset at dir.
func NewDatasetWriter(dir string, f Format, opt Options) (*DatasetWriter, error) {
	if f.Ext() == "" {
		return nil, fmt.Errorf("write dataset %s: invalid format %v", dir, f)
	}
	dir = filepath.Clean(dir)
	parent, base := filepath.Split(dir)
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, dirPerm); err != nil {
		return nil, fmt.Errorf("write dataset %s: %w", dir, err)
	}
	removeStale(parent, base)
	// Staging beside dir keeps every rename on one file system; the pid in
	// its name lets a later run remove it if this one is killed.
	staging, err := mkdirStaging(parent, stagingPrefix(base, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("write dataset %s: create staging directory: %w", dir, err)
	}
	if err := keepMode(staging, dir); err != nil {
		os.RemoveAll(staging)
		return nil, fmt.Errorf("write dataset %s: %w", dir, err)
	}
	return &DatasetWriter{dir: dir, staging: staging, f: f, opt: opt, seen: map[string]bool{},
		sem: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))}, nil
}

// Add starts writing t. Tables are independent files, encoded concurrently;
// errors surface at Commit, the first in Add order, so the outcome does not
// depend on scheduling.
func (w *DatasetWriter) Add(t *Table) { w.AddFunc(func() *Table { return t }) }

// AddFunc is Add of the table build returns, built in the background too.
// Calls of Add, AddFunc and AddRows must come from one goroutine.
func (w *DatasetWriter) AddFunc(build func() *Table) {
	w.start(func(res *stagedTable) {
		t := build()
		if w.claim(res, t.Name) {
			res.entry, res.err = stageTable(w.staging, t, w.f, w.opt)
		}
	})
}

// start runs stage in the background, at most GOMAXPROCS at once, with the
// outcome slot it fills (read after wg.Wait, in Add order).
func (w *DatasetWriter) start(stage func(res *stagedTable)) {
	res := &stagedTable{}
	w.staged = append(w.staged, res)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.sem <- struct{}{}
		defer func() { <-w.sem }()
		stage(res)
	}()
}

// AddRows is AddFunc for a table of n rows built range by range: rows(lo,
// hi) returns rows [lo, hi) as a Table with the same name and columns on
// every call. A Parquet table that is not partitioned is encoded one range
// (one row group of Options.RowGroupRows, default 64Ki rows) at a time, so
// the whole table never exists in memory, neither as a Table nor as Arrow
// data; other formats build it whole.
func (w *DatasetWriter) AddRows(n int, rows func(lo, hi int) *Table) {
	step := w.opt.RowGroupRows
	if step <= 0 {
		step = streamRowGroupRows
	}
	w.start(func(res *stagedTable) {
		first := rows(0, min(n, step))
		if !w.claim(res, first.Name) {
			return
		}
		streams := w.f == FormatParquet
		for _, k := range w.opt.PartitionBy {
			if first.ColumnIndex(k) >= 0 {
				streams = false
			}
		}
		if !streams {
			res.entry, res.err = stageTable(w.staging, rows(0, n), w.f, w.opt)
			return
		}
		name := first.Name + w.f.Ext()
		// Nothing here may use first after the call: it would keep the
		// first row group (tens of MB) alive while the others are written.
		marks.Mark("rows table starts: " + name)
		res.entry, res.err = name, writeParquetRanges(filepath.Join(w.staging, name), first, n, step, rows, w.opt)
		marks.Mark("rows table written: " + name)
	})
}

// streamRowGroupRows is the row group length of AddRows by default.
const streamRowGroupRows = 1 << 16

// claim checks a table's name and records it; on a bad or repeated name it
// sets res.err and returns false.
func (w *DatasetWriter) claim(res *stagedTable, name string) bool {
	w.mu.Lock()
	dup := w.seen[name]
	w.seen[name] = true
	w.mu.Unlock()
	switch {
	case !validTableName(name):
		res.err = fmt.Errorf("table name %q is not a safe file name (letters, digits, '_', '-', '.')", name)
	case dup:
		res.err = fmt.Errorf("duplicate table %s", name)
	default:
		return true
	}
	return false
}

// Commit waits for every table and publishes the dataset as a whole: a new
// dir by one rename, an existing dataset (with Options.Replace) swapped for
// the new one.
func (w *DatasetWriter) Commit() (err error) {
	w.wg.Wait()
	defer func() {
		// After a successful commit staging is gone or holds leftovers only.
		if rmErr := os.RemoveAll(w.staging); rmErr != nil && err == nil {
			err = fmt.Errorf("write dataset %s: remove staging directory: %w", w.dir, rmErr)
		}
	}()
	if w.done {
		return fmt.Errorf("write dataset %s: already committed or aborted", w.dir)
	}
	w.done = true
	entries := make([]string, len(w.staged)) // top-level names in staging
	for i, st := range w.staged {
		if st.err != nil {
			return fmt.Errorf("write dataset %s: %w", w.dir, st.err)
		}
		entries[i] = st.entry
	}
	if err := writeManifest(w.staging, w.f, w.opt, entries); err != nil {
		return fmt.Errorf("write dataset %s: %w", w.dir, err)
	}
	if err := commitDataset(w.staging, w.dir, w.opt.Replace); err != nil {
		return fmt.Errorf("write dataset %s: %w", w.dir, err)
	}
	return nil
}

// Abort waits for tables in flight and removes the staging directory; dir
// is untouched.
func (w *DatasetWriter) Abort() {
	w.wg.Wait()
	w.done = true
	os.RemoveAll(w.staging)
}

// stageTable writes one table below staging and returns the name of the
// top-level entry it created.
func stageTable(staging string, t *Table, f Format, opt Options) (string, error) {
	var keys []int
	for _, k := range opt.PartitionBy {
		if i := t.ColumnIndex(k); i >= 0 && !slices.Contains(keys, i) {
			keys = append(keys, i)
		}
	}
	if len(keys) == 0 {
		name := t.Name + f.Ext()
		return name, writeNewFile(filepath.Join(staging, name), t, f, opt)
	}
	for _, k := range keys {
		if t.cols[k].Type == TypeFloat64 {
			return "", fmt.Errorf("table %s: cannot partition by float column %s", t.Name, t.cols[k].Name)
		}
	}
	if len(keys) == len(t.cols) {
		return "", fmt.Errorf("table %s: partitioning by every column leaves no data columns", t.Name)
	}
	root := filepath.Join(staging, t.Name)
	if err := os.Mkdir(root, dirPerm); err != nil {
		return "", fmt.Errorf("table %s: %w", t.Name, err)
	}
	// Group rows by partition path, in order of first appearance.
	var order []string
	groups := make(map[string][]int)
	var sb strings.Builder
	for r := range t.rows {
		sb.Reset()
		for _, k := range keys {
			sb.WriteString(t.cols[k].Name)
			sb.WriteByte('=')
			sb.WriteString(partitionValue(t, r, k))
			sb.WriteByte('/')
		}
		p := sb.String()
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], r)
	}
	drop := make(map[int]bool, len(keys))
	pkeys := make([]partitionKey, len(keys))
	for i, k := range keys {
		drop[k] = true
		c := t.cols[k]
		pkeys[i] = partitionKey{Index: k, Name: c.Name, Type: c.Type.String(), Unit: c.Unit, Doc: c.Doc, Nullable: c.Nullable}
	}
	pkJSON, err := json.Marshal(pkeys)
	if err != nil {
		return "", err
	}
	opt.partitionKeys = string(pkJSON)
	for _, p := range order {
		pdir := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(pdir, dirPerm); err != nil {
			return "", fmt.Errorf("table %s: %w", t.Name, err)
		}
		part := t.project(groups[p], drop)
		if err := writeNewFile(filepath.Join(pdir, partFile+f.Ext()), part, f, opt); err != nil {
			return "", fmt.Errorf("table %s partition %s: %w", t.Name, strings.TrimSuffix(p, "/"), err)
		}
	}
	return t.Name, nil
}

// partitionKey describes a key column in MetaPartitionKeys.
type partitionKey struct {
	Index    int    `json:"index"` // position in the full table
	Name     string `json:"name"`
	Type     string `json:"type"`
	Unit     string `json:"unit,omitempty"`
	Doc      string `json:"doc,omitempty"`
	Nullable bool   `json:"nullable"`
}

// partitionValue renders a key cell as a Hive directory value. Anything
// outside [A-Za-z0-9._~-] is percent-encoded, which Hive, Spark, pyarrow
// and DuckDB all decode; null is __HIVE_DEFAULT_PARTITION__.
func partitionValue(t *Table, row, col int) string {
	v := t.Value(row, col)
	switch v.typ {
	case 0:
		return hiveNull
	case TypeInt64:
		return strconv.FormatInt(v.i, 10)
	case TypeBool:
		return strconv.FormatBool(v.i != 0)
	}
	const hex = "0123456789ABCDEF"
	s := v.s
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	out := b.String()
	// DuckDB reads a directory value "null" (any case) as SQL NULL before it
	// decodes percent escapes: escape the first letter so an arm named
	// "null" stays the string "null" in every reader.
	if strings.EqualFold(out, "null") {
		return "%" + string(hex[out[0]>>4]) + string(hex[out[0]&0xf]) + out[1:]
	}
	// "." and ".." are not directory names we can create.
	if out != "." && out != ".." {
		return out
	}
	return strings.ReplaceAll(b.String(), ".", "%2E")
}

// writeParquetRanges writes a Parquet file of n rows from rows(lo, hi),
// step rows (one row group) at a time; first is rows [0, step).
func writeParquetRanges(path string, first *Table, n, step int, rows func(lo, hi int) *Table, opt Options) error {
	return writeNewFileWith(path, func(w io.Writer) error {
		return writeBuffered(w, func(bw *bufio.Writer) error {
			// The first chunk is not kept once written (a row group of
			// the biggest table is tens of MB): only the writer holds it.
			f := first
			first = nil
			return writeParquetChunks(bw, f, func(yield func(*Table) bool) {
				for lo := step; lo < n; lo += step {
					if !yield(rows(lo, min(n, lo+step))) {
						return
					}
				}
			}, opt)
		})
	})
}

// writeNewFile writes one output file and syncs it, so that the renames in
// commitDataset publish complete data.
func writeNewFile(path string, t *Table, f Format, opt Options) error {
	return writeNewFileWith(path, func(w io.Writer) error { return Write(w, t, f, opt) })
}

// writeNewFileWith creates path (it must not exist), fills it and syncs it.
func writeNewFileWith(path string, fill func(io.Writer) error) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return err
	}
	if err := fill(out); err != nil {
		out.Close()
		return err
	}
	marks.Mark("sync starts: " + filepath.Base(path))
	defer marks.Mark("synced: " + filepath.Base(path))
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}

// CheckDatasetDir says whether a dataset may be written at dir: it may not
// exist, or be empty, or (with replace) hold an nsysphase dataset. Anything
// else is refused: ErrDatasetExists without replace, ErrNotDataset for a
// file or a directory holding something else. Commit checks it again, so a
// command may call it before any work.
func CheckDatasetDir(dir string, replace bool) error {
	_, err := datasetDirState(dir, replace)
	return err
}

// datasetState is what CheckDatasetDir found at dir.
type datasetState int

const (
	dirAbsent datasetState = iota
	dirEmpty
	dirDataset // an nsysphase dataset, to be replaced
)

func datasetDirState(dir string, replace bool) (datasetState, error) {
	st, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return dirAbsent, nil
	case err != nil:
		return 0, err
	case !st.IsDir():
		return 0, fmt.Errorf("%w: it exists and is not a directory", ErrNotDataset)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	if len(entries) == 0 {
		return dirEmpty, nil
	}
	m, ok, err := ReadManifest(dir)
	if err != nil || !ok {
		return 0, fmt.Errorf("%w: it holds files and no readable %s", ErrNotDataset, ManifestName)
	}
	if !replace {
		return 0, ErrDatasetExists
	}
	// Replacing swaps the whole directory: anything in it that the dataset
	// did not write (an export, notes, another run's files) would be lost.
	for _, e := range entries {
		if e.Name() != ManifestName && !slices.Contains(m.Tables, e.Name()) {
			return 0, fmt.Errorf("%w: it holds %q, which is not part of the dataset", ErrNotDataset, e.Name())
		}
	}
	return dirDataset, nil
}

// Within reports whether path is dir or lies below it, comparing the
// directories' identities (symlinks and other spellings of a path are
// resolved); a path that does not exist yet is placed by its parent.
func Within(path, dir string) bool {
	dst, err := os.Stat(dir)
	if err != nil || !dst.IsDir() {
		return false
	}
	p, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	for {
		if st, err := os.Stat(p); err == nil && os.SameFile(st, dst) {
			return true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return false
		}
		p = parent
	}
}

// commitDataset puts the complete staged dataset in dir's place.
func commitDataset(staging, dir string, replace bool) error {
	state, err := datasetDirState(dir, replace)
	if err != nil {
		return err
	}
	switch state {
	case dirEmpty:
		// An empty directory is taken over (os.Rename refuses to replace it).
		if err := os.Remove(dir); err != nil {
			return err
		}
		fallthrough
	case dirAbsent:
		if err := os.Rename(staging, dir); err != nil {
			return fmt.Errorf("rename staging directory into place: %w", err)
		}
	default:
		if err := exchangeDirs(staging, dir); err != nil {
			return fmt.Errorf("replace the old dataset: %w", err)
		}
		// staging now holds the old dataset; Commit removes it.
	}
	return syncDir(filepath.Dir(dir))
}

// ErrDatasetExists is returned when the output directory already holds a
// dataset and Options.Replace is not set.
var ErrDatasetExists = errors.New("the directory already holds a dataset (replace it with --overwrite, or choose a new directory)")

// ErrNotDataset is returned when the output directory holds something that
// is not an nsysphase dataset: it is never replaced.
var ErrNotDataset = errors.New("the output is not an nsysphase dataset and is left alone (choose a new or empty directory)")

// ManifestName is the file at a dataset's root that names its format,
// layout and tables. Readers ignore files starting with '_' (pyarrow,
// Spark), and DuckDB globs only match *.parquet.
const ManifestName = "_dataset.json"

// Manifest is the content of ManifestName.
type Manifest struct {
	Tool        string   `json:"tool"`
	Format      string   `json:"format"`
	PartitionBy []string `json:"partition_by,omitempty"`
	// Tables are the top-level entries, <table><ext> files or <table>
	// directories, in the order they were added.
	Tables []string `json:"tables"`
}

func writeManifest(staging string, f Format, opt Options, entries []string) error {
	m := Manifest{Tool: "nsysphase", Format: strings.TrimPrefix(f.Ext(), "."), PartitionBy: opt.PartitionBy, Tables: entries}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return writeNewFileWith(filepath.Join(staging, ManifestName), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// ReadManifest reads dir's manifest; ok is false when there is none.
func ReadManifest(dir string) (m Manifest, ok bool, err error) {
	if err := regular.Check(filepath.Join(dir, ManifestName)); err != nil {
		return m, false, fmt.Errorf("%s %w", ManifestName, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("%s: %w", ManifestName, err)
	}
	return m, true, nil
}

// stagingPrefix is the MkdirTemp pattern of a staging directory for base
// created by process pid.
func stagingPrefix(base string, pid int) string {
	return "." + base + ".tmp-" + strconv.Itoa(pid) + "-"
}

// removeStale removes what processes that no longer run (killed with
// SIGKILL, or a crash) left for base in parent: staging directories of a
// dataset and temporary files of WriteFileAtomic, both named
// stagingPrefix(base, pid)*.
func removeStale(parent, base string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	prefix := "." + base + ".tmp-"
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !(e.IsDir() || e.Type().IsRegular()) {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(parent, e.Name()))
	}
}

// syncDir makes renames in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// ReadDataset loads every table of a dataset written by WriteDataset in
// Parquet: <dir>/<table>.parquet files and Hive-partitioned <dir>/<table>/
// directories, sorted by table name. Key columns of partitioned tables are
// restored from the directory names with their original types, units and
// positions; rows come in partition-path order. Hidden entries (staging
// directories of a concurrent write) are skipped.
func ReadDataset(dir string) ([]*Table, error) { return readDataset(dir, nil, false) }

// ReadDatasetTables is ReadDataset reading only the tables named (by their
// file or directory name, <name>.parquet or <name>/, as WriteDataset
// names them): the dataset is checked as a whole, the other tables are
// not decoded. A reader that needs three tables of six pays for three.
// Tables in nsysphase's own column types come without their columns' units
// and docs (Column.Unit and Column.Doc empty): the Arrow schema stored in
// each file is not decoded, which for a reduce over a thousand small
// datasets was a tenth of the reading.
func ReadDatasetTables(dir string, names ...string) ([]*Table, error) {
	return readDataset(dir, func(stem string) bool { return slices.Contains(names, stem) }, true)
}

func readDataset(dir string, keep func(stem string) bool, lean bool) ([]*Table, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read dataset: %w", err)
	}
	m, hasManifest, err := ReadManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("read dataset %s: %w", dir, err)
	}
	if hasManifest && m.Format != "parquet" {
		return nil, fmt.Errorf("read dataset %s: it was written as %s; only Parquet datasets can be read back", dir, m.Format)
	}
	var out []*Table
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), ManifestName)); err == nil {
				return nil, fmt.Errorf("read dataset %s: it holds more than one dataset (%s is another); pass each dataset directory on its own", dir, e.Name())
			}
		}
		if hasManifest && !slices.Contains(m.Tables, e.Name()) {
			if e.IsDir() || strings.HasSuffix(e.Name(), ".parquet") || strings.HasSuffix(e.Name(), ".arrow") {
				return nil, fmt.Errorf("read dataset %s: it holds more than one dataset (%s is not in its %s); write it again or remove the extra entry", dir, e.Name(), ManifestName)
			}
			continue
		}
		path := filepath.Join(dir, e.Name())
		if keep != nil && !keep(strings.TrimSuffix(e.Name(), ".parquet")) {
			continue
		}
		switch {
		case e.IsDir():
			t, err := readPartitioned(path, lean)
			if err != nil {
				return nil, fmt.Errorf("read dataset %s: %w", dir, err)
			}
			if t != nil {
				out = append(out, t)
			}
		case strings.HasSuffix(e.Name(), ".parquet"):
			t, err := readParquet(path, lean)
			if err != nil {
				return nil, fmt.Errorf("read dataset %s: %w", dir, err)
			}
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b *Table) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, fmt.Errorf("read dataset %s: it holds more than one dataset (table %s twice, flat and partitioned); write it again into a new directory", dir, out[i].Name)
		}
	}
	return out, nil
}

// readPartitioned reassembles one Hive-partitioned table; nil if the
// directory holds no Parquet files.
func readPartitioned(root string, lean bool) (*Table, error) {
	var full *Table
	var keys []partitionKey
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		dirVals := map[string]string{}
		for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
			k, v, ok := strings.Cut(seg, "=")
			if !ok {
				return fmt.Errorf("%s: directory %q is not key=value", path, seg)
			}
			dirVals[k] = v
		}
		part, err := readParquet(path, lean)
		if err != nil {
			return err
		}
		if full == nil {
			full, keys, err = partitionedSchema(part, part.fileMeta[MetaPartitionKeys], dirVals)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			full.fileMeta = part.fileMeta
		}
		return appendPartition(full, part, keys, dirVals, path)
	})
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", filepath.Base(root), err)
	}
	return full, nil
}

// partitionedSchema builds the empty full table from the first part file.
// Without MetaPartitionKeys (a foreign dataset) keys become nullable string
// columns after the data columns, as DuckDB shows them.
func partitionedSchema(part *Table, keysJSON string, dirVals map[string]string) (*Table, []partitionKey, error) {
	var keys []partitionKey
	if keysJSON != "" {
		if err := json.Unmarshal([]byte(keysJSON), &keys); err != nil {
			return nil, nil, fmt.Errorf("bad %s: %w", MetaPartitionKeys, err)
		}
	} else {
		names := make([]string, 0, len(dirVals))
		for k := range dirVals {
			names = append(names, k)
		}
		slices.Sort(names)
		for i, k := range names {
			keys = append(keys, partitionKey{Index: part.NumColumns() + i, Name: k, Type: TypeString.String(), Nullable: true})
		}
	}
	cols := part.Columns()
	// Insert in ascending position so each lands where it was written from.
	byIndex := slices.Clone(keys)
	slices.SortFunc(byIndex, func(a, b partitionKey) int { return a.Index - b.Index })
	for _, k := range byIndex {
		typ, err := parseType(k.Type)
		if err != nil {
			return nil, nil, err
		}
		if k.Index < 0 || k.Index > len(cols) {
			return nil, nil, fmt.Errorf("partition key %s has index %d of %d %s", k.Name, k.Index, len(cols), plural.Of(len(cols), "column", "columns"))
		}
		cols = slices.Insert(cols, k.Index, Column{Name: k.Name, Type: typ, Unit: k.Unit, Doc: k.Doc, Nullable: k.Nullable})
	}
	return NewTable(part.Name, part.Doc, cols...), keys, nil
}

func parseType(s string) (Type, error) {
	for t := TypeInt64; t <= TypeBool; t++ {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown column type %q", s)
}

// appendPartition appends the rows of one part file to full, filling key
// columns from the directory values.
func appendPartition(full, part *Table, keys []partitionKey, dirVals map[string]string, path string) error {
	keyVals := make(map[int]Value, len(keys))
	for _, k := range keys {
		raw, ok := dirVals[k.Name]
		if !ok {
			return fmt.Errorf("%s: no %s= directory", path, k.Name)
		}
		v, err := parsePartitionValue(raw, full.cols[k.Index].Type)
		if err != nil {
			return fmt.Errorf("%s: key %s: %w", path, k.Name, err)
		}
		keyVals[k.Index] = v
	}
	row := make([]Value, full.NumColumns())
	for r := range part.Len() {
		src := 0
		for c := range row {
			if v, ok := keyVals[c]; ok {
				row[c] = v
				continue
			}
			row[c] = part.Value(r, src)
			src++
		}
		if err := full.AppendRow(row...); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// parsePartitionValue inverts partitionValue.
func parsePartitionValue(s string, typ Type) (Value, error) {
	if s == hiveNull {
		return Null(), nil
	}
	switch typ {
	case TypeInt64:
		v, err := strconv.ParseInt(s, 10, 64)
		return Int(v), err
	case TypeBool:
		v, err := strconv.ParseBool(s)
		return Bool(v), err
	case TypeString:
		v, err := url.PathUnescape(s)
		return Str(v), err
	}
	return Value{}, fmt.Errorf("cannot partition by %v", typ)
}

// exchangeByRenames swaps directories a and b through a hidden name beside
// b: b moves aside, a takes its place, the old b ends at a.
func exchangeByRenames(a, b string) error {
	aside := filepath.Join(filepath.Dir(b), "."+filepath.Base(b)+".old-"+strconv.Itoa(os.Getpid()))
	if err := os.Rename(b, aside); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		if rerr := os.Rename(aside, b); rerr != nil {
			return fmt.Errorf("%w (and the old dataset stays at %s: %w)", err, aside, rerr)
		}
		return err
	}
	return os.Rename(aside, a)
}
