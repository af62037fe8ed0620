// Package badgen builds the robustness corpus: damaged, unusual and
// pathological inputs derived from a real Nsight Systems export. The small
// hand-made inputs are committed under testdata/bad; everything derived from
// a real export (megabytes each) is generated here, into a directory the
// caller owns, so no large binary is committed.
//
// Every generator copies the real export first and alters only the copy,
// through a read-write connection opened on that copy. The base export is
// only read.
//
// testdata/bad/cases.json names each case's input (a committed file or a
// generator of this package) and its expected outcome; the robustness tests
// of nsys and internal/cli run every case. `go run ./internal/badgen/cmd/badgen
// -o DIR` writes the whole corpus to DIR for reproducing a case by hand.
package badgen

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ulikunitz/xz"
	"zombiezen.com/go/sqlite"
)

// BaseFixture is the bundled real export the generators derive from: the
// smallest one that has every activity table the reader knows (kernels,
// memcpy, sync, graph trace, NVTX push/pop ranges with registered strings).
const BaseFixture = "eager_graph_small"

// Generator writes one input into dir, deriving it from the real export at
// base, and returns the path to pass to a command. The path need not exist
// (a missing file is a case).
type Generator struct {
	Name string
	Doc  string
	// Slow generators build pathological sizes (seconds, hundreds of MB);
	// tests run them only when not in -short mode.
	Slow  bool
	Build func(dir, base string) (string, error)
}

// Generators lists every generator, in corpus order.
func Generators() []Generator { return slices.Clone(generators) }

// Lookup returns the generator called name.
func Lookup(name string) (Generator, bool) {
	for _, g := range generators {
		if g.Name == name {
			return g, true
		}
	}
	return Generator{}, false
}

// Build runs the generator called name.
func Build(name, dir, base string) (string, error) {
	g, ok := Lookup(name)
	if !ok {
		return "", fmt.Errorf("badgen: no generator %q", name)
	}
	p, err := g.Build(dir, base)
	if err != nil {
		return "", fmt.Errorf("badgen %s: %w", name, err)
	}
	return p, nil
}

// The tables the generators alter (the reader's names, repeated here so that
// badgen does not depend on the package it tests).
const (
	tKernel  = "CUPTI_ACTIVITY_KIND_KERNEL"
	tRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME"
	tMemcpy  = "CUPTI_ACTIVITY_KIND_MEMCPY"
	tMemset  = "CUPTI_ACTIVITY_KIND_MEMSET"
	tNVTX    = "NVTX_EVENTS"
)

var generators = []Generator{
	// Files that are not usable exports.
	{Name: "missing", Doc: "a path where no file exists", Build: func(dir, _ string) (string, error) {
		return filepath.Join(dir, "does-not-exist.sqlite"), nil
	}},
	{Name: "missing_xz", Doc: "a .sqlite.xz path where no file exists", Build: func(dir, _ string) (string, error) {
		return filepath.Join(dir, "does-not-exist.sqlite.xz"), nil
	}},
	{Name: "broken_symlink", Doc: "a symbolic link to a file that does not exist", Build: func(dir, _ string) (string, error) {
		p := filepath.Join(dir, "link.sqlite")
		return p, os.Symlink(filepath.Join(dir, "gone.sqlite"), p)
	}},
	{Name: "directory", Doc: "a directory named like an export", Build: func(dir, _ string) (string, error) {
		p := filepath.Join(dir, "export.sqlite")
		return p, os.Mkdir(p, 0o755)
	}},
	{Name: "directory_xz", Doc: "a directory named like a compressed export", Build: func(dir, _ string) (string, error) {
		p := filepath.Join(dir, "export.sqlite.xz")
		return p, os.Mkdir(p, 0o755)
	}},
	{Name: "header_only", Doc: "the 100-byte SQLite header of a real export and nothing else", Build: func(dir, base string) (string, error) {
		return cut(dir, "header_only.sqlite", base, func(int64) int64 { return 100 })
	}},
	{Name: "first_page_only", Doc: "the first page of a real export (header and part of the schema)", Build: func(dir, base string) (string, error) {
		return cut(dir, "first_page_only.sqlite", base, func(int64) int64 { return 4096 })
	}},
	{Name: "truncated_half", Doc: "a real export cut in half (an interrupted copy)", Build: func(dir, base string) (string, error) {
		return cut(dir, "truncated_half.sqlite", base, func(n int64) int64 { return n / 2 })
	}},
	{Name: "truncated_tail", Doc: "a real export missing its last 100 bytes: SQLite alone reads the lost bytes as zeros without an error", Build: func(dir, base string) (string, error) {
		return cut(dir, "truncated_tail.sqlite", base, func(n int64) int64 { return n - 100 })
	}},
	{Name: "bad_page_size", Doc: "a real export whose header declares an impossible page size", Build: func(dir, base string) (string, error) {
		p, err := copyBase(dir, "bad_page_size.sqlite", base)
		if err != nil {
			return "", err
		}
		return p, patch(p, 16, []byte{0x03, 0x00}) // 768: not a power of two
	}},
	{Name: "zeroed_schema_page", Doc: "a real export whose first page after the header is zeros (damaged schema)", Build: func(dir, base string) (string, error) {
		p, err := copyBase(dir, "zeroed_schema_page.sqlite", base)
		if err != nil {
			return "", err
		}
		return p, patch(p, 100, make([]byte, 4096-100))
	}},
	{Name: "not_nsys", Doc: "a valid SQLite database that is not an Nsight Systems export", Build: func(dir, _ string) (string, error) {
		p := filepath.Join(dir, "not_nsys.sqlite")
		return p, create(p, `PRAGMA page_size=512;
CREATE TABLE measurements(id INTEGER PRIMARY KEY, start INTEGER, "end" INTEGER, text TEXT);
INSERT INTO measurements(start, "end", text) VALUES (1, 2, 'a'), (3, 4, 'b');`)
	}},
	{Name: "no_meta_export", Doc: "a real export without META_DATA_EXPORT", Build: derive("no_meta_export", `DROP TABLE META_DATA_EXPORT;`)},
	{Name: "no_schema_version", Doc: "META_DATA_EXPORT without EXPORT_SCHEMA_VERSION", Build: derive("no_schema_version",
		`DELETE FROM META_DATA_EXPORT WHERE name LIKE 'EXPORT_SCHEMA_VERSION%';`)},
	{Name: "schema_major_4", Doc: "an export claiming schema 4.0.0 (a future major version)", Build: derive("schema_major_4",
		`UPDATE META_DATA_EXPORT SET value = '4.0.0' WHERE name = 'EXPORT_SCHEMA_VERSION';
UPDATE META_DATA_EXPORT SET value = '4' WHERE name = 'EXPORT_SCHEMA_VERSION_MAJOR';`)},
	{Name: "schema_unreadable", Doc: "an EXPORT_SCHEMA_VERSION that is not a version", Build: derive("schema_unreadable",
		`UPDATE META_DATA_EXPORT SET value = 'three.twenty' WHERE name = 'EXPORT_SCHEMA_VERSION';`)},
	{Name: "no_string_ids", Doc: "an export without StringIds (every name lives there)", Build: derive("no_string_ids", `DROP TABLE StringIds;`)},
	{Name: "missing_required_column", Doc: "the kernel table without its streamId column", Build: derive("missing_required_column",
		`ALTER TABLE `+tKernel+` DROP COLUMN streamId;`)},

	// Usable exports with odd content.
	{Name: "no_nvtx_table", Doc: "no NVTX_EVENTS table (recorded without -t nvtx)", Build: derive("no_nvtx_table", `DROP TABLE `+tNVTX+`;`)},
	{Name: "no_kernel_table", Doc: "no kernel table (no kernel ran, or CUDA was not traced)", Build: derive("no_kernel_table", `DROP TABLE `+tKernel+`;`)},
	{Name: "only_metadata", Doc: "every activity table absent: a capture that recorded nothing", Build: derive("only_metadata",
		dropAll(tKernel, tRuntime, tMemcpy, tMemset, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", tNVTX, "OSRT_API"))},
	{Name: "empty_activity_tables", Doc: "activity tables present but holding no rows", Build: derive("empty_activity_tables",
		`DELETE FROM `+tKernel+`; DELETE FROM `+tRuntime+`; DELETE FROM `+tMemcpy+`; DELETE FROM `+tNVTX+`;`)},
	{Name: "zero_steps", Doc: "NVTX_EVENTS holds no range at all (only the domain row): 0 steps", Build: derive("zero_steps",
		`DELETE FROM `+tNVTX+` WHERE eventType <> 75;`)},
	{Name: "nvtx_null_end", Doc: "5 push/pop ranges with a NULL end (never closed)", Build: derive("nvtx_null_end",
		`UPDATE `+tNVTX+` SET "end" = NULL WHERE rowid IN (SELECT rowid FROM `+tNVTX+` WHERE eventType = 59 ORDER BY start DESC LIMIT 5);`)},
	{Name: "end_before_start", Doc: "3 kernels, 4 API calls and 2 NVTX ranges that end before they start", Build: derive("end_before_start",
		`UPDATE `+tKernel+` SET "end" = start - 1000 WHERE rowid IN (SELECT rowid FROM `+tKernel+` ORDER BY start LIMIT 3);
UPDATE `+tRuntime+` SET "end" = start - 7 WHERE rowid IN (SELECT rowid FROM `+tRuntime+` ORDER BY start LIMIT 4 OFFSET 10);
UPDATE `+tNVTX+` SET "end" = start - 1 WHERE rowid IN (SELECT rowid FROM `+tNVTX+` WHERE eventType = 59 AND text = 'metrics' ORDER BY start LIMIT 2);`)},
	{Name: "text_timestamps", Doc: "2 kernels whose start is stored as text", Build: derive("text_timestamps",
		`UPDATE `+tKernel+` SET start = 'not a time' WHERE rowid IN (SELECT rowid FROM `+tKernel+` ORDER BY start LIMIT 2);`)},
	{Name: "null_required_values", Doc: "3 API calls with a NULL globalTid (unusable rows, skipped and counted)", Build: derive("null_required_values",
		`UPDATE `+tRuntime+` SET globalTid = NULL WHERE rowid IN (SELECT rowid FROM `+tRuntime+` ORDER BY start LIMIT 3);`)},
	{Name: "unbalanced_push_pop", Doc: "push/pop ranges that do not nest: 2 pushes never popped, and a child range that outlives its parent", Build: derive("unbalanced_push_pop",
		// The last two ranges of the capture lose their pop; the first
		// reward range is stretched 1 ns past the end of its step.
		`UPDATE `+tNVTX+` SET "end" = NULL WHERE rowid IN (SELECT rowid FROM `+tNVTX+` WHERE eventType = 59 ORDER BY start DESC LIMIT 2);
UPDATE `+tNVTX+` SET "end" = (SELECT p."end" + 1 FROM `+tNVTX+` p WHERE p.eventType = 59 AND p.text = 'collector_step' AND p.globalTid = `+tNVTX+`.globalTid AND p.start <= `+tNVTX+`.start AND p."end" >= `+tNVTX+`."end" ORDER BY p.start DESC LIMIT 1)
 WHERE rowid = (SELECT rowid FROM `+tNVTX+` WHERE eventType = 59 AND text = 'reward' ORDER BY start LIMIT 1);`)},
	{Name: "other_thread_end", Doc: "10 start/end ranges (type 60) that end on another thread", Build: derive("other_thread_end",
		`INSERT INTO `+tNVTX+`(start, "end", eventType, rangeId, text, globalTid, endGlobalTid, domainId)
 SELECT start, "end", 60, rowid, 'async_step', globalTid, globalTid + 1, 0 FROM `+tNVTX+` WHERE eventType = 59 AND text = 'collector_step' ORDER BY start LIMIT 10;`)},
	{Name: "duplicate_correlation", Doc: "5 CUDA API calls that reuse the correlationId of another call of their process", Build: derive("duplicate_correlation",
		`UPDATE `+tRuntime+` SET correlationId = (SELECT correlationId FROM `+tRuntime+` ORDER BY correlationId LIMIT 1 OFFSET 50)
 WHERE rowid IN (SELECT rowid FROM `+tRuntime+` ORDER BY correlationId LIMIT 5 OFFSET 100);`)},
	{Name: "textid_only", Doc: "every range named only by textId (registered strings), no text", Build: derive("textid_only",
		`INSERT INTO StringIds(id, value)
 SELECT (SELECT max(id) FROM StringIds) + row_number() OVER (ORDER BY t), t FROM (SELECT DISTINCT text AS t FROM `+tNVTX+` WHERE text IS NOT NULL AND eventType IN (59, 60));
UPDATE `+tNVTX+` SET textId = (SELECT max(id) FROM StringIds WHERE value = text), text = NULL WHERE text IS NOT NULL AND eventType IN (59, 60);`)},
	{Name: "textid_dangling", Doc: "3 ranges whose textId is not in StringIds", Build: derive("textid_dangling",
		`UPDATE `+tNVTX+` SET textId = 999999999, text = NULL WHERE rowid IN (SELECT rowid FROM `+tNVTX+` WHERE eventType = 59 ORDER BY start LIMIT 3);`)},
	{Name: "unnamed_ranges", Doc: "4 ranges with neither text nor textId", Build: derive("unnamed_ranges",
		`UPDATE `+tNVTX+` SET textId = NULL, text = NULL WHERE rowid IN (SELECT rowid FROM `+tNVTX+` WHERE eventType = 59 ORDER BY start LIMIT 4 OFFSET 20);`)},
	{Name: "huge_strings", Doc: "a 16 MiB NVTX range name, a 4 MiB kernel name and a 1 MiB thread name", Build: derive("huge_strings",
		// hex(zeroblob(n)) is 2n characters of '0'.
		`UPDATE `+tNVTX+` SET text = 'huge_' || hex(zeroblob(8388608)), textId = NULL WHERE rowid = (SELECT rowid FROM `+tNVTX+` WHERE eventType = 59 ORDER BY start LIMIT 1 OFFSET 30);
UPDATE StringIds SET value = value || hex(zeroblob(2097152)) WHERE id = (SELECT demangledName FROM `+tKernel+` ORDER BY start LIMIT 1);
UPDATE StringIds SET value = value || hex(zeroblob(524288)) WHERE id IN (SELECT nameId FROM ThreadNames LIMIT 1);`)},
	{Name: "no_green_context_id", Doc: "the kernel table without greenContextId (exports before 2025)", Build: derive("no_green_context_id",
		`ALTER TABLE `+tKernel+` DROP COLUMN greenContextId;`)},
	{Name: "no_graph_node_id", Doc: "kernel and memcpy tables without graphNodeId (older exporters)", Build: deriveFn("no_graph_node_id", func(c *sqlite.Conn) error {
		return dropColumnsIfPresent(c, "graphNodeId", tKernel, tMemcpy, tMemset)
	})},
	{Name: "schema_3_11", Doc: "an older schema: EXPORT_SCHEMA_VERSION 3.11.0, kernels without greenContextId, graphNodeId and sharedMemoryLimitConfig, NVTX without the JSON and binary payload columns", Build: schema311},
	{Name: "wal_mode", Doc: "an export switched to WAL journal mode, no -wal file beside it", Build: deriveFn("wal_mode", func(c *sqlite.Conn) error {
		return execScript(c, `PRAGMA journal_mode=wal;`)
	})},
	{Name: "stale_wal", Doc: "a WAL-mode export with the -wal and -shm files of an unfinished session beside it (the session deleted every NVTX row; the export is read without it)", Build: staleWAL},
	{Name: "hot_journal", Doc: "an export with the -journal of an interrupted transaction beside it", Build: hotJournal},
	{Name: "odd_file_name", Doc: "a real export under a name with spaces, ?, #, % and non-ASCII letters", Build: func(dir, base string) (string, error) {
		return copyBase(dir, "run 1 ?#%41 ünï.sqlite", base)
	}},

	// Compressed inputs (the CLI decompresses .xz to a private temp file).
	{Name: "xz_garbage", Doc: "random bytes named .sqlite.xz", Build: func(dir, _ string) (string, error) {
		p := filepath.Join(dir, "garbage.sqlite.xz")
		return p, os.WriteFile(p, randomBytes(4096, 7), 0o644)
	}},
	{Name: "xz_truncated", Doc: "a compressed real export cut in half", Build: func(dir, base string) (string, error) {
		data, err := os.ReadFile(base)
		if err != nil {
			return "", err
		}
		z, err := compress(data)
		if err != nil {
			return "", err
		}
		p := filepath.Join(dir, "truncated.sqlite.xz")
		return p, os.WriteFile(p, z[:len(z)/2], 0o644)
	}},
	{Name: "xz_of_garbage", Doc: "a valid .xz file holding random bytes, not SQLite", Build: func(dir, _ string) (string, error) {
		z, err := compress(randomBytes(8192, 11))
		if err != nil {
			return "", err
		}
		p := filepath.Join(dir, "garbage_inside.sqlite.xz")
		return p, os.WriteFile(p, z, 0o644)
	}},
	{Name: "xz_of_truncated", Doc: "a valid .xz file holding a real export that lost its last 100 bytes", Build: func(dir, base string) (string, error) {
		data, err := os.ReadFile(base)
		if err != nil {
			return "", err
		}
		z, err := compress(data[:len(data)-100])
		if err != nil {
			return "", err
		}
		p := filepath.Join(dir, "truncated_inside.sqlite.xz")
		return p, os.WriteFile(p, z, 0o644)
	}},

	{Name: "xz_of_schema_3_11", Doc: "a valid .xz file holding the schema_3_11 export (usable, with a warning)", Build: func(dir, base string) (string, error) {
		scratch, err := os.MkdirTemp(dir, "scratch-*")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(scratch)
		inner, err := schema311(scratch, base)
		if err != nil {
			return "", err
		}
		data, err := os.ReadFile(inner)
		if err != nil {
			return "", err
		}
		z, err := compress(data)
		if err != nil {
			return "", err
		}
		p := filepath.Join(dir, "schema_3_11.sqlite.xz")
		return p, os.WriteFile(p, z, 0o644)
	}},

	// Pathological sizes.
	{Name: "million_unclosed", Slow: true, Doc: "1,000,000 extra push/pop ranges that are never closed, all on one thread", Build: derive("million_unclosed",
		`INSERT INTO `+tNVTX+`(start, "end", eventType, text, globalTid, domainId)
 WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999999)
 SELECT (SELECT min(start) FROM `+tNVTX+`) + i, NULL, 59, 'unclosed', (SELECT globalTid FROM `+tNVTX+` WHERE eventType = 59 LIMIT 1), 0 FROM n;`)},
	{Name: "whole_file_range", Doc: "one extra push/pop range that spans the whole capture and encloses every other range", Build: derive("whole_file_range",
		`INSERT INTO `+tNVTX+`(start, "end", eventType, text, globalTid, domainId)
 SELECT min(start) - 1, max(coalesce("end", start)) + 1, 59, 'everything', (SELECT globalTid FROM `+tNVTX+` WHERE eventType = 59 LIMIT 1), 0 FROM `+tNVTX+`;`)},
}

// schema311 derives an export that looks written by an older exporter.
var schema311 = deriveFn("schema_3_11", func(c *sqlite.Conn) error {
	if err := execScript(c, `UPDATE META_DATA_EXPORT SET value = '3.11.0' WHERE name = 'EXPORT_SCHEMA_VERSION';
UPDATE META_DATA_EXPORT SET value = '11' WHERE name = 'EXPORT_SCHEMA_VERSION_MINOR';
UPDATE META_DATA_EXPORT SET value = '0' WHERE name = 'EXPORT_SCHEMA_VERSION_MICRO';
UPDATE META_DATA_EXPORT SET value = '2023.4.1.97' WHERE name = 'EXPORT_PRODUCT_VERSION';`); err != nil {
		return err
	}
	for _, col := range []string{"greenContextId", "graphNodeId", "sharedMemoryLimitConfig"} {
		if err := dropColumnsIfPresent(c, col, tKernel); err != nil {
			return err
		}
	}
	for _, col := range []string{"jsonTextId", "jsonText", "binaryData"} {
		if err := dropColumnsIfPresent(c, col, tNVTX); err != nil {
			return err
		}
	}
	return dropColumnsIfPresent(c, "graphNodeId", tMemcpy, tMemset)
})

// Tiny writes a small real-derived export (about 34 KiB): the tables the
// reader uses, a few rows each, 512-byte pages. It seeds the fuzzers.
func Tiny(dir, base string) (string, error) {
	p, err := copyBase(dir, "tiny.sqlite", base)
	if err != nil {
		return "", err
	}
	keep := map[string]string{
		"META_DATA_EXPORT":                    "",
		"META_DATA_CAPTURE":                   " WHERE rowid > 8",
		"TARGET_INFO_SYSTEM_ENV":              " WHERE rowid > 4",
		"TARGET_INFO_GPU":                     "",
		"PROCESSES":                           " WHERE rowid > 3",
		"ThreadNames":                         " WHERE rowid > 3",
		"ENUM_CUDA_MEMCPY_OPER":               "",
		"ENUM_CUPTI_SYNC_TYPE":                "",
		"StringIds":                           " WHERE id NOT IN (SELECT textId FROM NVTX_EVENTS WHERE textId IS NOT NULL) AND id NOT IN (SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME) AND id NOT IN (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL) AND id NOT IN (SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL) AND id NOT IN (SELECT nameId FROM ThreadNames)",
		tKernel:                               " WHERE rowid > 4",
		tRuntime:                              " WHERE rowid > 8",
		tMemcpy:                               " WHERE rowid > 2",
		"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": " WHERE rowid > 2",
		"CUPTI_ACTIVITY_KIND_GRAPH_TRACE":     " WHERE rowid > 2",
		// The first ranges are the warm-up and arm ranges: keep a few
		// nested ones, a registered-string one and the domain row.
		tNVTX: " WHERE rowid > 6 AND eventType <> 75 AND rowid NOT IN (SELECT rowid FROM NVTX_EVENTS WHERE textId IS NOT NULL LIMIT 1)",
	}
	return p, edit(p, func(c *sqlite.Conn) error {
		tables, err := tableNames(c)
		if err != nil {
			return err
		}
		var script strings.Builder
		// Delete rows before dropping tables: the StringIds filter reads the
		// activity tables as they are after their own deletions.
		order := []string{tKernel, tRuntime, tMemcpy, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", tNVTX, "ThreadNames", "StringIds"}
		for _, t := range order {
			if slices.Contains(tables, t) {
				fmt.Fprintf(&script, "DELETE FROM %s%s;\n", t, keep[t])
			}
		}
		for _, t := range tables {
			w, ok := keep[t]
			switch {
			case !ok:
				fmt.Fprintf(&script, "DROP TABLE %s;\n", t)
			case w != "" && !slices.Contains(order, t):
				fmt.Fprintf(&script, "DELETE FROM %s%s;\n", t, w)
			}
		}
		if err := execScript(c, script.String()); err != nil {
			return err
		}
		return execScript(c, "PRAGMA page_size=512; VACUUM;")
	})
}

// cut writes the first size(n) bytes of base.
func cut(dir, name, base string, size func(int64) int64) (string, error) {
	data, err := os.ReadFile(base)
	if err != nil {
		return "", err
	}
	n := min(max(size(int64(len(data))), 0), int64(len(data)))
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, data[:n], 0o644)
}

// patch overwrites bytes of the file at p from offset off.
func patch(p string, off int64, b []byte) error {
	fh, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := fh.WriteAt(b, off); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

func copyBase(dir, name, base string) (string, error) {
	p := filepath.Join(dir, name)
	return p, copyFile(base, p)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// derive returns a generator that copies base to NAME.sqlite and runs script
// on the copy.
func derive(name, script string) func(dir, base string) (string, error) {
	return deriveFn(name, func(c *sqlite.Conn) error { return execScript(c, script) })
}

func deriveFn(name string, fn func(*sqlite.Conn) error) func(dir, base string) (string, error) {
	return func(dir, base string) (string, error) {
		p, err := copyBase(dir, name+".sqlite", base)
		if err != nil {
			return "", err
		}
		return p, edit(p, fn)
	}
}

// edit opens the copy at p read-write (never the base export) and runs fn.
func edit(p string, fn func(*sqlite.Conn) error) (err error) {
	c, err := sqlite.OpenConn(p, sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		return fmt.Errorf("open copy %s: %w", p, err)
	}
	defer func() {
		if cerr := c.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close copy %s: %w", p, cerr)
		}
	}()
	return fn(c)
}

// create makes a new database at p from script.
func create(p, script string) error {
	return edit(p, func(c *sqlite.Conn) error { return execScript(c, script) })
}

// execScript runs each statement of script outside any transaction (VACUUM
// and journal_mode cannot run inside one).
func execScript(c *sqlite.Conn, script string) error {
	for {
		script = strings.TrimSpace(script)
		if script == "" {
			return nil
		}
		st, trailing, err := c.PrepareTransient(script)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", firstLine(script), err)
		}
		stmt := script[:len(script)-trailing]
		script = script[len(script)-trailing:]
		if st == nil { // a comment or an empty statement
			continue
		}
		for {
			ok, err := st.Step()
			if err != nil {
				st.Finalize()
				return fmt.Errorf("run %q: %w", firstLine(stmt), err)
			}
			if !ok {
				break
			}
		}
		if err := st.Finalize(); err != nil {
			return err
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

func tableNames(c *sqlite.Conn) ([]string, error) {
	var out []string
	st, _, err := c.PrepareTransient("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		return nil, err
	}
	defer st.Finalize()
	for {
		ok, err := st.Step()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, st.ColumnText(0))
	}
}

func columnNames(c *sqlite.Conn, table string) ([]string, error) {
	var out []string
	st, _, err := c.PrepareTransient("SELECT name FROM pragma_table_info('" + strings.ReplaceAll(table, "'", "''") + "')")
	if err != nil {
		return nil, err
	}
	defer st.Finalize()
	for {
		ok, err := st.Step()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, st.ColumnText(0))
	}
}

func dropColumnsIfPresent(c *sqlite.Conn, col string, tables ...string) error {
	for _, t := range tables {
		cols, err := columnNames(c, t)
		if err != nil {
			return err
		}
		if slices.Contains(cols, col) {
			if err := execScript(c, fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s;", t, col)); err != nil {
				return err
			}
		}
	}
	return nil
}

func dropAll(tables ...string) string {
	var b strings.Builder
	for _, t := range tables {
		fmt.Fprintf(&b, "DROP TABLE IF EXISTS %s;\n", t)
	}
	return b.String()
}

// staleWAL switches a scratch copy to WAL mode, deletes every NVTX row in a
// session that is never checkpointed, and snapshots the database file with
// its -wal and -shm files while that session is open: what a reader finds
// when a writer crashed or the files were copied mid-write.
func staleWAL(dir, base string) (string, error) {
	return snapshotMidWrite(dir, base, "stale_wal.sqlite",
		"PRAGMA journal_mode=wal; PRAGMA wal_autocheckpoint=0; DELETE FROM "+tNVTX+";", []string{"-wal", "-shm"}, "")
}

// hotJournal snapshots a scratch copy and its rollback journal in the middle
// of a transaction that deletes every NVTX row.
func hotJournal(dir, base string) (string, error) {
	return snapshotMidWrite(dir, base, "hot_journal.sqlite",
		"PRAGMA journal_mode=delete; BEGIN IMMEDIATE; DELETE FROM "+tNVTX+";", []string{"-journal"}, "ROLLBACK;")
}

// snapshotMidWrite runs script on a scratch copy of base and, with that
// session still open, copies the database and its sidecar files (each must
// exist) to dir/name; then it runs after, if any, and closes the session.
func snapshotMidWrite(dir, base, name, script string, sidecars []string, after string) (string, error) {
	scratchDir, err := os.MkdirTemp(dir, "scratch-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(scratchDir)
	scratch, err := copyBase(scratchDir, "scratch.sqlite", base)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	err = edit(scratch, func(c *sqlite.Conn) error {
		if err := execScript(c, script); err != nil {
			return err
		}
		for _, suf := range append([]string{""}, sidecars...) {
			if err := copyFile(scratch+suf, p+suf); err != nil {
				return fmt.Errorf("snapshot %s mid-write: %w", suf, err)
			}
		}
		if after == "" {
			return nil
		}
		return execScript(c, after)
	})
	return p, err
}

// randomBytes returns n deterministic pseudo-random bytes.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func compress(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Committed are the small hand-made inputs committed under testdata/bad, by
// file name. WriteCommitted regenerates them; a test checks they match.
var Committed = map[string][]byte{
	"empty.sqlite":       {},
	"random.sqlite":      randomBytes(4096, 1),
	"text.sqlite":        []byte("this is a text file, not an Nsight Systems export\n"),
	"short_magic.sqlite": []byte("SQLite format 3\x00"),
}

// WriteCommitted writes the Committed files into dir.
func WriteCommitted(dir string) error {
	for name, data := range Committed {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Derive copies base to dir/NAME.sqlite and runs the SQL script on the copy:
// for tests that build an input of their own from a real export.
func Derive(dir, base, name, script string) (string, error) {
	return derive(name, script)(dir, base)
}
