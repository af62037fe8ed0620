package export

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Format is an output format.
type Format int

// Output formats. The zero Format is invalid so a forgotten field is caught.
const (
	FormatText Format = iota + 1
	FormatCSV
	FormatJSON
	FormatMarkdown
	FormatParquet
	FormatArrow
	// FormatHTML is a report format: a document (internal/report renders
	// it), not a rendering of one table; Write refuses it.
	FormatHTML
)

var formatNames = []struct {
	f       Format
	name    string
	aliases []string
	ext     string
}{
	{FormatText, "table", []string{"text", "txt"}, ".txt"},
	{FormatCSV, "csv", nil, ".csv"},
	{FormatJSON, "json", nil, ".json"},
	{FormatMarkdown, "markdown", []string{"md"}, ".md"},
	{FormatParquet, "parquet", []string{"pq"}, ".parquet"},
	{FormatArrow, "arrow", []string{"feather", "ipc"}, ".arrow"},
	{FormatHTML, "html", nil, ".html"},
}

// FormatNames returns the canonical format names, for help texts.
func FormatNames() []string {
	out := make([]string, len(formatNames))
	for i, n := range formatNames {
		out[i] = n.name
	}
	return out
}

// ParseFormat parses a format name: table (or text), csv, json, markdown
// (or md), parquet, arrow (or feather, ipc), html. Case is ignored.
func ParseFormat(s string) (Format, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	for _, n := range formatNames {
		if l == n.name {
			return n.f, nil
		}
		for _, a := range n.aliases {
			if l == a {
				return n.f, nil
			}
		}
	}
	return 0, fmt.Errorf("unknown output format %q (want one of %s)", s, strings.Join(FormatNames(), ", "))
}

// FormatFromPath picks the format from a file extension (.txt, .csv, .json,
// .md, .parquet, .arrow, .feather).
func FormatFromPath(path string) (Format, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".feather" {
		return FormatArrow, nil
	}
	for _, n := range formatNames {
		if ext == n.ext {
			return n.f, nil
		}
	}
	return 0, fmt.Errorf("no output format for file extension %q of %s", ext, path)
}

// String returns the canonical name, as accepted by ParseFormat.
func (f Format) String() string {
	for _, n := range formatNames {
		if f == n.f {
			return n.name
		}
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Ext returns the file extension for f, with the dot.
func (f Format) Ext() string {
	for _, n := range formatNames {
		if f == n.f {
			return n.ext
		}
	}
	return ""
}

// Binary reports whether f is a binary format that should not go to a
// terminal.
func (f Format) Binary() bool { return f == FormatParquet || f == FormatArrow }

// ArrowCompression selects the body compression of Arrow IPC files.
type ArrowCompression int

const (
	// ArrowUncompressed is the default: every Arrow reader (including
	// arrow-js without codecs) can read it, and writing is fastest.
	ArrowUncompressed ArrowCompression = iota
	ArrowLZ4
	ArrowZstd
)

// Options tunes rendering. The zero Options is a good default.
type Options struct {
	// Metadata is file-level key-value metadata for Parquet and Arrow
	// output: provenance such as MetaSchemaVersion, MetaVersion,
	// MetaInputs, MetaNsysVersion, MetaGPU. Keys are written in sorted
	// order so output bytes do not depend on map iteration. MetaTable,
	// MetaTableDoc, MetaPartitionKeys and "ARROW:*" are reserved.
	Metadata map[string]string

	// HumanUnits renders "ns" columns as durations (1.235 ms) and "bytes"
	// columns as sizes (1.5 MiB) in text and Markdown output. The default
	// prints exact integers, which is what you want when you compare runs.
	HumanUnits bool

	// FloatDigits is the number of significant digits for floats in text
	// and Markdown; 0 means 6. CSV, JSON, Parquet and Arrow are always exact.
	FloatDigits int

	// PartitionBy lists key columns for WriteDataset: each table holding
	// any of them is written Hive-style as
	// <dir>/<table>/<k1>=<v1>/<k2>=<v2>/part.<ext>, with the key columns
	// dropped from the file bodies (their values live in the path, as Hive,
	// Spark, pyarrow and DuckDB expect). Tables with none of the keys are
	// written as <dir>/<table>.<ext>.
	PartitionBy []string

	// Replace lets WriteDataset and DatasetWriter.Commit replace an existing
	// nsysphase dataset at dir as a whole. Without it a non-empty dir is
	// refused (ErrDatasetExists); a non-empty dir that is not an nsysphase
	// dataset is refused either way.
	Replace bool

	// RowGroupRows caps Parquet row group length; 0 means 1Mi rows.
	RowGroupRows int

	// ArrowCompression is the body compression for Arrow IPC output.
	ArrowCompression ArrowCompression

	// partitionKeys is the MetaPartitionKeys value for partition files.
	partitionKeys string
}

// Write renders t to w in format f.
func Write(w io.Writer, t *Table, f Format, opt Options) error {
	if t == nil {
		return errors.New("write: nil table")
	}
	var err error
	switch f {
	case FormatText:
		err = writeBuffered(w, func(bw *bufio.Writer) error { return writeText(bw, t, opt) })
	case FormatCSV:
		err = writeBuffered(w, func(bw *bufio.Writer) error { return writeCSV(bw, t) })
	case FormatJSON:
		err = writeBuffered(w, func(bw *bufio.Writer) error { return writeJSONRows(bw, t) })
	case FormatMarkdown:
		err = writeBuffered(w, func(bw *bufio.Writer) error { return writeMarkdown(bw, t, opt) })
	case FormatParquet:
		err = writeParquet(w, t, opt)
	case FormatArrow:
		err = writeArrowIPC(w, t, opt)
	case FormatHTML:
		return fmt.Errorf("write table %s: html is a report format, not a table format", t.Name)
	default:
		return fmt.Errorf("write table %s: invalid format %v", t.Name, f)
	}
	if err != nil {
		return fmt.Errorf("write table %s as %v: %w", t.Name, f, err)
	}
	return nil
}

// WriteTables renders several tables to one stream. Text and Markdown
// print each table under its name; JSON writes one object mapping table
// names to row arrays, in the given order. CSV, Parquet and Arrow hold a
// single table per file: use WriteDataset for those.
func WriteTables(w io.Writer, tables []*Table, f Format, opt Options) error {
	switch f {
	case FormatText, FormatMarkdown:
		return writeBuffered(w, func(bw *bufio.Writer) error {
			for i, t := range tables {
				if i > 0 {
					bw.WriteByte('\n')
				}
				if f == FormatMarkdown {
					fmt.Fprintf(bw, "### %s\n\n", t.Name)
				} else {
					fmt.Fprintf(bw, "%s\n", t.Name)
				}
				if t.Doc != "" {
					fmt.Fprintf(bw, "%s\n", t.Doc)
				}
				if f == FormatMarkdown {
					bw.WriteByte('\n')
				}
				var err error
				if f == FormatText {
					err = writeText(bw, t, opt)
				} else {
					err = writeMarkdown(bw, t, opt)
				}
				if err != nil {
					return fmt.Errorf("write table %s as %v: %w", t.Name, f, err)
				}
			}
			return nil
		})
	case FormatJSON:
		return writeBuffered(w, func(bw *bufio.Writer) error { return writeJSONTables(bw, tables) })
	case FormatCSV, FormatParquet, FormatArrow:
		if len(tables) == 1 {
			return Write(w, tables[0], f, opt)
		}
		return fmt.Errorf("write %d tables: %v holds one table per file; write a dataset instead", len(tables), f)
	}
	return fmt.Errorf("write tables: invalid format %v", f)
}

func writeBuffered(w io.Writer, fn func(*bufio.Writer) error) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := fn(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteFile writes t to path in format f atomically: it writes a temporary
// file beside path, syncs it and renames it over path, so readers never see
// a partial file.
func WriteFile(path string, t *Table, f Format, opt Options) error {
	return WriteFileAtomic(path, func(w io.Writer) error { return Write(w, t, f, opt) })
}

// WriteFileAtomic writes what fill produces to path the same way: a
// temporary file beside path, synced, then renamed over it; on error path is
// untouched and the temporary file removed.
//
// A symlink is written through (its target is replaced, the link stays);
// a FIFO, device, socket or directory at path is refused, never replaced.
//
// The temporary file is named .BASE.tmp-PID-*: one left by a process that
// no longer runs (killed with SIGKILL) is removed by the next write.
//
// A path that names one of the process's descriptors (/dev/stdout,
// /dev/fd/N) is written in place instead, never replaced (see
// OutputDescriptor).
func WriteFileAtomic(path string, fill func(io.Writer) error) (err error) {
	if fd, ok := OutputDescriptor(path); ok {
		return writeDescriptor(fd, fill)
	}
	path, err = ResolveOutput(path)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	removeStale(dir, base)
	tmp, err := createStaging(dir, stagingPrefix(base, os.Getpid()))
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := fill(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := keepMode(tmp.Name(), path); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename %s into place: %w", path, err)
	}
	return nil
}

// ResolveOutput returns the file an output written to path lands in: path
// itself, or the final target of a symlink. It refuses a path that exists
// and is not a regular file (directory, FIFO, device, socket): replacing
// one would destroy it.
func ResolveOutput(path string) (string, error) {
	for range 40 { // like the kernel's symlink limit
		st, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return path, nil
		case err != nil:
			return "", fmt.Errorf("output %s: %w", path, err)
		case st.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return "", fmt.Errorf("output %s: %w", path, err)
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(path), target)
			}
			path = target
			continue
		case st.Mode().IsRegular():
			return path, nil
		default:
			return "", fmt.Errorf("output %s is %s, not a regular file: choose a file path", path, fileKind(st.Mode()))
		}
	}
	return "", fmt.Errorf("output %s: too many levels of symbolic links", path)
}

// CheckOutput refuses an output path that is one of the inputs (after
// following symlinks), or that ResolveOutput refuses, before any work
// starts: `-o X.sqlite X.sqlite` must never replace the export.
func CheckOutput(path string, inputs []string) error {
	if _, ok := OutputDescriptor(path); ok {
		return checkDescriptorOutput(path, inputs)
	}
	resolved, err := ResolveOutput(path)
	if err != nil {
		return err
	}
	for _, in := range inputs {
		// An input directory (a dataset read by --from) is read whole: a
		// file written into it would replace or add one of its tables.
		if st, err := os.Stat(in); err == nil && st.IsDir() && Within(resolved, in) {
			return fmt.Errorf("output %s lies inside the input directory %s: choose a path outside it", path, in)
		}
	}
	out, err := os.Stat(resolved)
	if err != nil {
		return nil // a new file cannot be an input
	}
	for _, in := range inputs {
		if st, err := os.Stat(in); err == nil && os.SameFile(st, out) {
			return fmt.Errorf("output %s is the input %s: choose another output path", path, in)
		}
	}
	return nil
}

// checkDescriptorOutput refuses a descriptor output that is open on an
// input (`-o /dev/stdout X.sqlite >> X.sqlite`).
func checkDescriptorOutput(path string, inputs []string) error {
	out, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	for _, in := range inputs {
		if st, err := os.Stat(in); err == nil && os.SameFile(st, out) {
			return fmt.Errorf("output %s is the input %s: choose another output path", path, in)
		}
	}
	return nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}
