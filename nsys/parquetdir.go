package nsys

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// IsParquetDir reports whether dir is an `nsys export --type parquetdir`
// directory: one TABLE.parquet per export table, META_DATA_EXPORT included.
func IsParquetDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "META_DATA_EXPORT.parquet"))
	return err == nil && st.Mode().IsRegular()
}

// openParquetDir imports a parquetdir export into a private temporary SQLite
// file with the same tables and columns, then opens that read-only like any
// export, so every reader path and every number is the same as from the
// SQLite export. The files of dir are only read; Close removes the copy.
func openParquetDir(ctx context.Context, dir string) (*File, error) {
	tmp, err := os.MkdirTemp("", "nsysphase-parquetdir-*")
	if err != nil {
		return nil, &InputError{Path: dir, Problem: "cannot create a temporary directory", Err: err}
	}
	db := filepath.Join(tmp, strings.TrimSuffix(filepath.Base(dir), filepath.Ext(dir))+".sqlite")
	if err := importParquetDir(ctx, dir, db); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return privateCopy(ctx, db, dir, tmp)
}

func importParquetDir(ctx context.Context, dir, db string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return &InputError{Path: dir, Problem: "cannot list the parquetdir", Err: err}
	}
	conn, err := sqlite.OpenConn(db, sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		return &InputError{Path: dir, Problem: "cannot create the temporary database", Err: err}
	}
	defer conn.Close()
	// A throwaway copy: no journal, no syncs.
	for _, q := range []string{"PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF", "BEGIN"} {
		if err := sqlitex.ExecuteTransient(conn, q, nil); err != nil {
			return &InputError{Path: dir, Problem: "cannot prepare the temporary database", Err: err}
		}
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".parquet") && readsTable(strings.TrimSuffix(e.Name(), ".parquet")) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	// The required table first: a directory without it is refused before
	// anything is imported.
	if !slices.Contains(names, TableStrings+".parquet") {
		return &InputError{Path: dir, Problem: "missing table StringIds (no StringIds.parquet)", Hint: "re-export with `nsys export --type parquetdir`, or use the SQLite export"}
	}
	for _, n := range names {
		if err := importParquetTable(ctx, conn, filepath.Join(dir, n), strings.TrimSuffix(n, ".parquet")); err != nil {
			return &InputError{Path: dir, Problem: "cannot read " + n, Err: err, Hint: "re-export with `nsys export --type parquetdir`, or use the SQLite export"}
		}
	}
	if err := sqlitex.ExecuteTransient(conn, "COMMIT", nil); err != nil {
		return &InputError{Path: dir, Problem: "cannot write the temporary database", Err: err}
	}
	return nil
}

// readTables are the tables nsysphase reads; readTablePrefixes name the
// families it reads (metadata, target info, enums).
var (
	readTables = []string{TableKernel, TableMemcpy, TableMemset, TableSync, TableRuntime, TableGraphTrace, TableNVTX, TableOSRT,
		TableStrings, TableThreads, TableProcesses, TableCallchains}
	readTablePrefixes = []string{"META_DATA_", "EXPORT_META_DATA", "TARGET_INFO_", "ENUM_"}
)

// readsTable reports whether a parquetdir table is imported: only what
// nsysphase reads, so an unrelated large file in the directory (a
// 2·10⁷-row JUNK.parquet took 16 s and 694 MB of temporary space) costs
// nothing.
func readsTable(name string) bool {
	if slices.Contains(readTables, name) {
		return true
	}
	for _, p := range readTablePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// importParquetTable creates table name from a Parquet file and copies its
// rows: integers as INTEGER, floats as REAL, strings as TEXT, nulls as NULL.
func importParquetTable(ctx context.Context, conn *sqlite.Conn, path, name string) error {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	schema, err := fr.Schema()
	if err != nil {
		return err
	}
	cols := make([]string, schema.NumFields())
	marks := make([]string, schema.NumFields())
	for i, fld := range schema.Fields() {
		cols[i] = quoteIdent(fld.Name) + " " + sqlType(fld.Type)
		marks[i] = "?"
	}
	if err := sqlitex.ExecuteTransient(conn, fmt.Sprintf("CREATE TABLE %s (%s)", quoteIdent(name), strings.Join(cols, ", ")), nil); err != nil {
		return err
	}
	if len(cols) == 0 || pf.NumRows() == 0 {
		return nil
	}
	st, err := conn.Prepare(fmt.Sprintf("INSERT INTO %s VALUES (%s)", quoteIdent(name), strings.Join(marks, ", ")))
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		for row := 0; row < int(rec.NumRows()); row++ {
			for c := 0; c < int(rec.NumCols()); c++ {
				if err := bindCell(st, c+1, rec.Column(c), row); err != nil {
					return fmt.Errorf("column %s: %w", schema.Field(c).Name, err)
				}
			}
			if _, err := st.Step(); err != nil {
				return err
			}
			if err := st.Reset(); err != nil {
				return err
			}
		}
	}
	return rr.Err()
}

func sqlType(t arrow.DataType) string {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.BOOL:
		return "INTEGER"
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return "REAL"
	}
	return "TEXT"
}

// bindCell binds one Arrow cell to parameter i of st.
func bindCell(st *sqlite.Stmt, i int, col arrow.Array, row int) error {
	if col.IsNull(row) {
		st.BindNull(i)
		return nil
	}
	switch a := col.(type) {
	case *array.Int64:
		st.BindInt64(i, a.Value(row))
	case *array.Int32:
		st.BindInt64(i, int64(a.Value(row)))
	case *array.Int16:
		st.BindInt64(i, int64(a.Value(row)))
	case *array.Int8:
		st.BindInt64(i, int64(a.Value(row)))
	case *array.Uint64:
		st.BindInt64(i, int64(a.Value(row))) // SQLite integers are int64; the export's are too
	case *array.Uint32:
		st.BindInt64(i, int64(a.Value(row)))
	case *array.Uint16:
		st.BindInt64(i, int64(a.Value(row)))
	case *array.Uint8:
		st.BindInt64(i, int64(a.Value(row)))
	case *array.Boolean:
		st.BindBool(i, a.Value(row))
	case *array.Float64:
		st.BindFloat(i, a.Value(row))
	case *array.Float32:
		st.BindFloat(i, float64(a.Value(row)))
	case *array.String:
		st.BindText(i, a.Value(row))
	case *array.LargeString:
		st.BindText(i, a.Value(row))
	case *array.Binary:
		st.BindBytes(i, a.Value(row))
	case *array.Dictionary:
		return bindCell(st, i, a.Dictionary(), a.GetValueIndex(row))
	default:
		return fmt.Errorf("unsupported Arrow type %s", col.DataType())
	}
	return nil
}
