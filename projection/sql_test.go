package projection

import (
	"cmp"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// vendorEdits turn a real export into one with every NVTX case the recorded
// fixtures lack: start/end and NVTXT ranges, start/end ranges overlapping
// push/pop ones, identical twins, ranges ended on another thread, unclosed
// ranges, registered strings (present and dangling), a named domain created
// twice, and NULL text.
var vendorEdits = []string{
	`INSERT INTO StringIds (id, value) VALUES (9000001, 'registered text'), (9000003, 'RegDomain')`,
	`INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
		SELECT start + (end - start) / 2, end + (end - start) / 2, 60, 'shifted', globalTid, 0
		FROM NVTX_EVENTS WHERE eventType = 59 AND rowid % 9 = 0`,
	`INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
		SELECT start, end, 60, 'twin', globalTid, domainId FROM NVTX_EVENTS WHERE eventType = 59 AND rowid % 13 = 0`,
	`INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId)
		SELECT min(start) - 10, NULL, 75, 9000003, globalTid, 7 FROM NVTX_EVENTS WHERE eventType = 59 GROUP BY globalTid`,
	`INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
		SELECT min(start) - 5, NULL, 75, 'LaterName', globalTid, 7 FROM NVTX_EVENTS WHERE eventType = 59 GROUP BY globalTid`,
	`UPDATE NVTX_EVENTS SET eventType = 60 WHERE eventType = 59 AND rowid % 5 = 0`,
	`UPDATE NVTX_EVENTS SET eventType = 70 WHERE eventType = 59 AND rowid % 7 = 0`,
	`UPDATE NVTX_EVENTS SET eventType = 71 WHERE eventType = 59 AND rowid % 11 = 0`,
	`UPDATE NVTX_EVENTS SET endGlobalTid = globalTid + 1 WHERE eventType IN (59, 60) AND rowid % 17 = 0`,
	`UPDATE NVTX_EVENTS SET end = NULL WHERE eventType IN (59, 60) AND rowid % 211 = 0`,
	`UPDATE NVTX_EVENTS SET textId = 9000001 WHERE eventType = 59 AND rowid % 23 = 0`,
	`UPDATE NVTX_EVENTS SET textId = 9000002 WHERE eventType = 59 AND rowid % 29 = 0`,
	`UPDATE NVTX_EVENTS SET domainId = 7 WHERE eventType IN (59, 60) AND rowid % 31 = 0`,
	`UPDATE NVTX_EVENTS SET text = NULL WHERE eventType = 59 AND textId IS NULL AND rowid % 37 = 0`,
}

// vendorReferenceSQL is the projection written directly as SQL from the
// vendor's rules (names, kept ranges, open ends, the (process,
// correlationId) join, inclusive same-thread containment), with indexes on
// temporary tables so it runs in seconds. {OPS} is the union of the op tables.
const vendorReferenceSQL = `
CREATE TEMP TABLE ref_ops AS {OPS};
CREATE INDEX temp.ref_ops_key ON ref_ops (globalPid, correlationId);
CREATE TEMP TABLE ref_launch AS
	SELECT r.globalTid AS tid, r.start AS s, r.end AS e, r.correlationId AS corr, min(o.start) AS os, max(o.end) AS oe
	FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
	JOIN ref_ops AS o ON o.correlationId = r.correlationId AND o.globalPid = (r.globalTid & ~16777215)
	GROUP BY r.rowid;
CREATE INDEX temp.ref_launch_ts ON ref_launch (tid, s);
CREATE TEMP TABLE ref_lim AS
	SELECT max(max(start), max(end)) AS mx FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, 71);
CREATE TEMP TABLE ref_rng AS
	WITH dom AS (
		SELECT e.domainId AS id, (e.globalTid >> 24) & 16777215 AS pid, coalesce(s.value, e.text) AS name, min(e.start)
		FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId
		WHERE e.eventType = 75 GROUP BY 1, 2)
	SELECT e.rowid AS rid, e.start AS s, ifnull(e.end, (SELECT mx FROM ref_lim)) AS en, e.globalTid AS tid,
		coalesce(d.name, '') || ':' || coalesce(s.value, e.text, '') AS name,
		CASE WHEN e.eventType IN (59, 70) THEN 'PushPop' ELSE 'StartEnd' END AS style
	FROM NVTX_EVENTS AS e
	LEFT JOIN dom AS d ON d.id = e.domainId AND d.pid = (e.globalTid >> 24) & 16777215
	LEFT JOIN StringIds AS s ON s.id = e.textId
	WHERE e.eventType IN (59, 60, 70, 71) AND e.endGlobalTid IS NULL;
CREATE TEMP TABLE ref_result AS
	SELECT g.name AS name, g.style AS style, g.tid AS tid, g.s AS s, g.en AS en,
		min(l.os) AS os, max(l.oe) AS oe, count(DISTINCT l.corr) AS ops
	FROM ref_rng AS g JOIN ref_launch AS l ON l.tid = g.tid AND l.s >= g.s AND l.s <= g.en AND l.e <= g.en
	GROUP BY g.rid;
`

type vendorRefRow struct {
	name, style                                string
	globalTid, start, end, opStart, opEnd, ops int64
}

func compareVendorRefRows(a, b vendorRefRow) int {
	return cmp.Or(cmp.Compare(a.globalTid, b.globalTid), cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end),
		cmp.Compare(a.name, b.name), cmp.Compare(a.style, b.style), cmp.Compare(a.opStart, b.opStart),
		cmp.Compare(a.opEnd, b.opEnd), cmp.Compare(a.ops, b.ops))
}

// TestVendorTraceMatchesSQLReference edits copies of real exports and
// compares every instance with the reference SQL run on the same copy.
func TestVendorTraceMatchesSQLReference(t *testing.T) {
	for _, name := range []string{"emit_nvtx", "sharing_mps_1"} {
		t.Run(name, func(t *testing.T) {
			src := fixture.Get(t, name).SQLite(t)
			path := filepath.Join(t.TempDir(), name+".sqlite")
			copyVendorFile(t, src, path)

			conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			for _, q := range vendorEdits {
				if err := sqlitex.ExecuteTransient(conn, q, nil); err != nil {
					t.Fatalf("edit %q: %v", q, err)
				}
			}
			var opSelects []string
			for _, tbl := range []string{nsys.TableKernel, nsys.TableMemcpy, nsys.TableMemset} {
				var n int
				err := sqlitex.ExecuteTransient(conn, "SELECT count(*) FROM sqlite_master WHERE name = ?",
					&sqlitex.ExecOptions{Args: []any{tbl}, ResultFunc: func(st *sqlite.Stmt) error { n = st.ColumnInt(0); return nil }})
				if err != nil {
					t.Fatal(err)
				}
				if n > 0 {
					opSelects = append(opSelects, "SELECT start, end, correlationId, globalPid FROM "+tbl)
				}
			}
			script := strings.ReplaceAll(vendorReferenceSQL, "{OPS}", strings.Join(opSelects, " UNION ALL "))
			if err := sqlitex.ExecuteScript(conn, script, nil); err != nil {
				t.Fatalf("reference SQL: %v", err)
			}
			var want []vendorRefRow
			err = sqlitex.ExecuteTransient(conn, "SELECT name, style, tid, s, en, os, oe, ops FROM ref_result", &sqlitex.ExecOptions{
				ResultFunc: func(st *sqlite.Stmt) error {
					want = append(want, vendorRefRow{st.ColumnText(0), st.ColumnText(1), st.ColumnInt64(2), st.ColumnInt64(3),
						st.ColumnInt64(4), st.ColumnInt64(5), st.ColumnInt64(6), st.ColumnInt64(7)})
					return nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			// The edits must have produced what they are for.
			for what, has := range map[string]func(r vendorRefRow) bool{
				"start/end style":   func(r vendorRefRow) bool { return r.style == StartEnd },
				"overlapping range": func(r vendorRefRow) bool { return r.name == ":shifted" },
				"twin":              func(r vendorRefRow) bool { return r.name == ":twin" },
				"registered string": func(r vendorRefRow) bool { return r.name == ":registered text" },
				"named domain":      func(r vendorRefRow) bool { return strings.HasPrefix(r.name, "RegDomain:") },
				"NULL text":         func(r vendorRefRow) bool { return r.name == ":" },
			} {
				if !slices.ContainsFunc(want, has) {
					t.Errorf("the edited export has no instance with a %s", what)
				}
			}
			if err := conn.Close(); err != nil {
				t.Fatal(err)
			}

			f, err := nsys.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rep, err := Trace(f)
			if err != nil {
				t.Fatal(err)
			}
			var got []vendorRefRow
			for _, x := range rep.Trace {
				got = append(got, vendorRefRow{x.Name, x.Style, x.GlobalTid, x.StartNs, x.StartNs + x.RangeNs, x.ProjStartNs, x.ProjStartNs + x.ProjNs, x.GPUOps})
			}
			slices.SortFunc(got, compareVendorRefRows)
			slices.SortFunc(want, compareVendorRefRows)
			if len(got) != len(want) {
				t.Errorf("%d instances, reference SQL %d", len(got), len(want))
			}
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("instance %d: got %+v, reference SQL %+v", i, got[i], want[i])
				}
			}
			t.Logf("%d instances equal the reference SQL", len(want))
		})
	}
}

func copyVendorFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
