// Command scaleexport makes an N× larger export from a real one, for scale
// benchmarks: every timed table is replicated N−1 times with timestamps
// shifted past the previous copy and correlation ids offset so that they stay
// unique per process; arm block numbers are renumbered so that each copy's
// blocks are new blocks. The input is opened read-only and never modified.
//
//	go run ./internal/cmd/scaleexport -n 10 in.sqlite out.sqlite
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

func main() {
	n := flag.Int("n", 10, "scale factor: the output holds n copies of the activity")
	flag.Parse()
	if flag.NArg() != 2 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: scaleexport -n N in.sqlite out.sqlite")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *n); err != nil {
		fmt.Fprintln(os.Stderr, "scaleexport:", err)
		os.Exit(1)
	}
}

func run(in, out string, n int) error {
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists; remove it first", out)
	}
	src, err := sqlite.OpenConn("file:"+in+"?mode=ro&immutable=1", sqlite.OpenReadOnly|sqlite.OpenURI)
	if err != nil {
		return err
	}
	if err := sqlitex.ExecuteTransient(src, "VACUUM INTO "+quote(out), nil); err != nil {
		src.Close()
		return fmt.Errorf("copy: %w", err)
	}
	src.Close()
	db, err := sqlite.OpenConn(out, sqlite.OpenReadWrite)
	if err != nil {
		return err
	}
	defer db.Close()
	tables, err := timedTables(db)
	if err != nil {
		return err
	}
	var lo, hi, maxCorr int64
	lo = 1 << 62
	for t, cols := range tables {
		if err := sqlitex.ExecuteTransient(db, fmt.Sprintf("SELECT min(start), max(coalesce(end, start)) FROM %q", t), &sqlitex.ExecOptions{
			ResultFunc: func(st *sqlite.Stmt) error {
				if st.ColumnType(0) != sqlite.TypeNull {
					lo, hi = min(lo, st.ColumnInt64(0)), max(hi, st.ColumnInt64(1))
				}
				return nil
			}}); err != nil {
			return err
		}
		if has(cols, "correlationId") {
			if err := sqlitex.ExecuteTransient(db, fmt.Sprintf("SELECT max(correlationId) FROM %q", t), &sqlitex.ExecOptions{
				ResultFunc: func(st *sqlite.Stmt) error { maxCorr = max(maxCorr, st.ColumnInt64(0)); return nil }}); err != nil {
				return err
			}
		}
	}
	span := hi - lo + 1_000_000_000 // copies are separated by a second
	corrStride := maxCorr + 1
	if err := sqlitex.ExecuteTransient(db, "BEGIN", nil); err != nil {
		return err
	}
	for t, cols := range tables {
		for k := 1; k < n; k++ {
			exprs := make([]string, len(cols))
			for i, c := range cols {
				q := fmt.Sprintf("%q", c)
				switch c {
				case "start", "end":
					exprs[i] = fmt.Sprintf("%s + %d", q, int64(k)*span)
				case "correlationId":
					exprs[i] = fmt.Sprintf("CASE WHEN %s IS NULL THEN NULL ELSE %s + %d END", q, q, int64(k)*corrStride)
				case "text":
					if t == "NVTX_EVENTS" {
						// "arm=X block=B" → block B + 1000·k: each copy's blocks are new.
						exprs[i] = fmt.Sprintf("CASE WHEN %[1]s LIKE 'arm=%% block=%%' THEN substr(%[1]s, 1, instr(%[1]s, 'block=') + 5) || (CAST(substr(%[1]s, instr(%[1]s, 'block=') + 6) AS INTEGER) + %[2]d) ELSE %[1]s END", q, 1000*k)
					} else {
						exprs[i] = q
					}
				default:
					exprs[i] = q
				}
			}
			quoted := make([]string, len(cols))
			for i, c := range cols {
				quoted[i] = fmt.Sprintf("%q", c)
			}
			where := ""
			if t == "NVTX_EVENTS" {
				where = " WHERE eventType NOT IN (75, 76)" // a domain is created once
			}
			q := fmt.Sprintf("INSERT INTO %q (%s) SELECT %s FROM %q%s", t, strings.Join(quoted, ", "), strings.Join(exprs, ", "), t, where)
			if k == 1 {
				// Copy only the original rows: the source of every copy is rows with start < lo + span.
				q += map[bool]string{true: " AND", false: " WHERE"}[where != ""] + fmt.Sprintf(" start < %d", lo+span)
			} else {
				q += map[bool]string{true: " AND", false: " WHERE"}[where != ""] + fmt.Sprintf(" start < %d", lo+span)
			}
			if err := sqlitex.ExecuteTransient(db, q, nil); err != nil {
				return fmt.Errorf("%s copy %d: %w", t, k, err)
			}
		}
	}
	return sqlitex.ExecuteTransient(db, "COMMIT", nil)
}

// timedTables lists the tables with a start column, and their columns.
func timedTables(db *sqlite.Conn) (map[string][]string, error) {
	var names []string
	err := sqlitex.ExecuteTransient(db, "SELECT name FROM sqlite_master WHERE type='table'", &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error { names = append(names, st.ColumnText(0)); return nil }})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, t := range names {
		var cols []string
		err := sqlitex.ExecuteTransient(db, fmt.Sprintf("SELECT name FROM pragma_table_info(%s)", quote(t)), &sqlitex.ExecOptions{
			ResultFunc: func(st *sqlite.Stmt) error { cols = append(cols, st.ColumnText(0)); return nil }})
		if err != nil {
			return nil, err
		}
		if has(cols, "start") && (strings.HasPrefix(t, "CUPTI_ACTIVITY_KIND_") || t == "NVTX_EVENTS" || t == "OSRT_API" || strings.HasPrefix(t, "CUDA_GRAPH")) {
			out[t] = cols
		}
	}
	return out, nil
}

func has(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
