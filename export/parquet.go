package export

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"github.com/nsysphase/nsysphase/internal/base/marks"
	"github.com/nsysphase/nsysphase/internal/base/regular"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

const defaultRowGroupRows = 1 << 20

// writeOnly hides Close (and everything else) from the Parquet and Arrow
// writers, which close an io.Closer they write to: the caller owns w.
type writeOnly struct{ io.Writer }

// parquetProperties: zstd everywhere; dictionary encoding only on string
// columns, because dictionary-encoding int64 timestamps and durations
// costs time and rarely saves space (measured: 0.90 s → 0.59 s for
// 1M rows). zstd level 1 stays although it is most of the encoding CPU:
// phase_instances of large_interleaved (48,000 × 70) encodes in ~100 ms
// CPU to 2.6 MB with it, ~65 ms to 4.4 MB with snappy, ~63 ms to 3.8 MB
// with lz4_raw and ~50 ms to 21 MB uncompressed, and its columns are
// encoded concurrently.
// dataPageSize is the size at which a column's page is cut (1 MiB by
// default). The columns of a row group are encoded concurrently into one
// buffered row group, whose column writers all live until it is closed,
// each keeping page-sized scratch buffers: with 1 MiB pages phase_instances
// of large_interleaved (70 int64 columns of 375 KiB) held ~55 MB more at
// once and analyze's peak RSS went from 150 to 205 MB; 64 KiB pages keep it
// at 150 MB, cost 14% less CPU (less to allocate and clear) and make the
// file 3.6% larger (more page headers and statistics).
const dataPageSize = 64 << 10

func parquetProperties(t *Table, opt Options) *parquet.WriterProperties {
	rg := int64(opt.RowGroupRows)
	if rg <= 0 {
		rg = defaultRowGroupRows
	}
	props := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1),
		parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(rg),
		parquet.WithStats(true),
		parquet.WithDataPageSize(dataPageSize),
		parquet.WithAllocator(memory.DefaultAllocator),
	}
	for _, c := range t.cols {
		if c.Type == TypeString {
			// A ColumnPath, not WithDictionaryFor: that one splits names on '.'.
			props = append(props, parquet.WithDictionaryPath(parquet.ColumnPath{c.Name}, true))
		}
	}
	return parquet.NewWriterProperties(props...)
}

func writeParquet(w io.Writer, t *Table, opt Options) error {
	return writeParquetChunks(w, t, nil, opt)
}

// writeParquetChunks writes first and then every table of rest (same
// columns) as the row groups of one Parquet file. Each chunk becomes Arrow
// data only while it is encoded.
func writeParquetChunks(w io.Writer, first *Table, rest iter.Seq[*Table], opt Options) error {
	if len(first.cols) == 0 {
		return fmt.Errorf("parquet needs at least one column")
	}
	schema, err := arrowSchema(first, opt)
	if err != nil {
		return err
	}
	pw, err := newParquetWriter(writeOnly{w}, schema, parquetProperties(first, opt))
	if err != nil {
		return fmt.Errorf("create parquet writer: %w", err)
	}
	isFirst := true
	write := func(t *Table) error {
		if !isFirst {
			s, err := arrowSchema(t, opt)
			if err != nil {
				return err
			}
			if !s.Equal(schema) {
				return fmt.Errorf("table %s: chunk schema %s differs from the file's %s", t.Name, s, schema)
			}
		}
		cols, err := arrowColumns(t)
		if err != nil {
			return err
		}
		defer func() {
			for _, c := range cols {
				c.Release()
			}
		}()
		if err := pw.write(cols, int64(t.rows)); err != nil {
			return fmt.Errorf("write parquet rows: %w", err)
		}
		return nil
	}
	err = write(first)
	first, isFirst = nil, false // not held while the rest is written
	if err != nil {
		_ = pw.close() // the write's error is the one to report
		return err
	}
	if rest != nil {
		for t := range rest {
			if err := write(t); err != nil {
				_ = pw.close()
				return err
			}
		}
	}
	if err := pw.close(); err != nil {
		return fmt.Errorf("finish parquet file: %w", err)
	}
	return nil
}

// parquetWriter writes flat Arrow columns as a Parquet file, the columns of
// each row group encoded and compressed concurrently (at most GOMAXPROCS at
// once): pqarrow.FileWriter encodes them one after the other, which left
// the biggest table on one core at the end of a run. The file holds the
// same bytes as pqarrow.FileWriter with WithStoreSchema writes (the writer
// tests compare the two).
//
// Each column of a buffered row group has its own column writer, page
// writer and in-memory sink; a goroutine writes one column at a time
// through its own Arrow write context (pqarrow's must not be shared by
// concurrent columns) and encodes and compresses the column's last page.
// Closing the row group then copies the columns to the file in order.
type parquetWriter struct {
	fw       *file.Writer
	nullable []bool
	arrProps pqarrow.ArrowWriterProperties
	maxRows  int64
}

func newParquetWriter(w io.Writer, schema *arrow.Schema, props *parquet.WriterProperties) (*parquetWriter, error) {
	// ARROW:schema lets pyarrow, pandas and polars restore the dictionary
	// types and our field metadata (units, docs).
	arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	pqSchema, err := pqarrow.ToParquet(schema, props, arrProps)
	if err != nil {
		return nil, err
	}
	// As pqarrow.NewFileWriter: the schema's metadata, then ARROW:schema
	// (the flat schema needs none of its list renaming). Append refuses
	// invalid UTF-8, which pqarrow ignores too.
	md := schema.Metadata()
	kv := make(metadata.KeyValueMetadata, 0, md.Len()+1)
	for i, k := range md.Keys() {
		_ = kv.Append(k, md.Values()[i])
	}
	_ = kv.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(schema, props.Allocator())))
	fw, err := file.NewParquetWriterWithError(w, pqSchema.Root(), file.WithWriterProps(props), file.WithWriteMetadata(kv))
	if err != nil {
		return nil, err
	}
	nullable := make([]bool, schema.NumFields())
	for i, f := range schema.Fields() {
		nullable[i] = f.Nullable
	}
	return &parquetWriter{fw: fw, nullable: nullable, arrProps: arrProps, maxRows: props.MaxRowGroupLength()}, nil
}

// write adds n rows: one row group, or row groups of maxRows rows (as
// pqarrow.FileWriter.Write splits a record batch).
func (p *parquetWriter) write(cols []arrow.Array, n int64) error {
	if n <= p.maxRows {
		return p.writeRowGroup(cols)
	}
	part := make([]arrow.Array, len(cols))
	for lo := int64(0); lo < n; lo += p.maxRows {
		hi := min(n, lo+p.maxRows)
		for i, c := range cols {
			part[i] = array.NewSlice(c, lo, hi)
		}
		err := p.writeRowGroup(part)
		for _, c := range part {
			c.Release()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// maxColumnEncoders caps the columns encoded at once: each holds a zstd
// encoder (a 256 KiB history: smallWindowZstd) and its column's pages. 16
// made the encoding of phase_instances slower on the GPU host's 16 cores
// (~66 ms against ~35, beside the statistics).
const maxColumnEncoders = 8

// writeRowGroup encodes one row group, its columns concurrently.
func (p *parquetWriter) writeRowGroup(cols []arrow.Array) error {
	if cols[0].Len() == 0 {
		// As pqarrow writes an empty table: serial column chunks, whose
		// offsets stay 0 (buffered ones would record their position).
		rgw, err := p.fw.AppendRowGroupChecked()
		if err != nil {
			return err
		}
		for range cols {
			if _, err := rgw.NextColumn(); err != nil {
				return err
			}
		}
		return rgw.Close()
	}
	rgw, err := p.fw.AppendBufferedRowGroupChecked()
	if err != nil {
		return err
	}
	errs := make([]error, len(cols))
	encoded := make([]chan struct{}, len(cols)) // closed when column i is encoded
	for i := range encoded {
		encoded[i] = make(chan struct{})
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(cols), runtime.GOMAXPROCS(0), maxColumnEncoders) {
		wg.Go(func() {
			ctx := pqarrow.NewArrowWriteContext(context.Background(), &p.arrProps)
			var levels []int16
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cols) {
					return
				}
				levels, errs[i] = p.writeColumn(ctx, rgw, i, cols[i], levels)
				close(encoded[i])
			}
		})
	}
	// Meanwhile close the encoded columns here, in order: a column's Close
	// copies it to the file (and for a dictionary column writes its
	// dictionary and pages), so copying overlaps encoding and each
	// column's page buffers are freed early; rgw.Close then finds them
	// closed and only finishes the row group's metadata.
	for i := range cols {
		<-encoded[i]
		if err = errs[i]; err == nil {
			var cw file.ColumnChunkWriter
			if cw, err = rgw.Column(i); err == nil {
				err = cw.Close()
			}
		}
		if err != nil {
			err = fmt.Errorf("column %s: %w", p.fw.Schema.Column(i).Name(), err)
			break
		}
	}
	wg.Wait()
	marks.Markf("row group of %d columns encoded", len(cols))
	if err != nil {
		return err
	}
	return rgw.Close()
}

// writeColumn writes column i of a row group; levels is scratch space for
// the definition levels, returned for the next column.
func (p *parquetWriter) writeColumn(ctx context.Context, rgw file.BufferedRowGroupWriter, i int, arr arrow.Array, levels []int16) ([]int16, error) {
	cw, err := rgw.Column(i)
	if err != nil {
		return levels, err
	}
	if arr.Len() == 0 {
		return levels, nil // pqarrow writes nothing either
	}
	def, leafNullable, levels := flatDefLevels(arr, p.nullable[i], levels)
	if err := pqarrow.WriteArrowToColumn(ctx, cw, arr, def, nil, leafNullable); err != nil {
		return levels, err
	}
	// Encode and compress the last page now, in parallel, rather than in
	// rgw.Close. Not while dictionary-encoding: those pages wait for Close
	// to write the dictionary page ahead of them.
	if enc := cw.CurrentEncoder().Encoding(); enc != parquet.Encodings.PlainDict && enc != parquet.Encodings.RLEDict {
		if f, ok := cw.(interface{ FlushBufferedDataPages() error }); ok {
			return levels, f.FlushBufferedDataPages()
		}
	}
	return levels, nil
}

// flatDefLevels returns the definition levels and leaf nullability that
// pqarrow's path builder gives WriteArrowToColumn for a top-level column:
// none for a required field; for an optional one, 1 per present value and 0
// per null, with the leaf nullable only when there are nulls. scratch is
// reused for the levels; the third result is it, grown.
func flatDefLevels(arr arrow.Array, nullable bool, scratch []int16) ([]int16, bool, []int16) {
	if !nullable {
		return nil, false, scratch
	}
	n := arr.Len()
	if cap(scratch) < n {
		scratch = make([]int16, n)
	}
	def := scratch[:n]
	nulls := arr.NullN()
	switch {
	case nulls == 0:
		for i := range def {
			def[i] = 1
		}
		return def, false, scratch
	case nulls == n:
		clear(def)
	default:
		for i := range def {
			def[i] = 0
			if arr.IsValid(i) {
				def[i] = 1
			}
		}
	}
	return def, true, scratch
}

// close finishes the file (footer) and reports the first error.
func (p *parquetWriter) close() error { return p.fw.Close() }

func writeArrowIPC(w io.Writer, t *Table, opt Options) error {
	rec, err := arrowRecord(t, opt)
	if err != nil {
		return err
	}
	defer rec.Release()
	opts := []ipc.Option{ipc.WithSchema(rec.Schema()), ipc.WithAllocator(memory.DefaultAllocator)}
	switch opt.ArrowCompression {
	case ArrowUncompressed:
	case ArrowLZ4:
		opts = append(opts, ipc.WithLZ4())
	case ArrowZstd:
		opts = append(opts, ipc.WithZstd())
	default:
		return fmt.Errorf("invalid arrow compression %d", opt.ArrowCompression)
	}
	fw, err := ipc.NewFileWriter(writeOnly{w}, opts...)
	if err != nil {
		return fmt.Errorf("create arrow writer: %w", err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("write arrow record batch: %w", err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("finish arrow file: %w", err)
	}
	return nil
}

// tableStem is the name used for a table read from a file without
// nsysphase.table metadata.
func tableStem(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// ReadParquet loads a Parquet file written by Write (or any flat Parquet
// file of integer, float, string and bool columns) back into a Table.
// Table name, doc and column units and docs come from the file metadata.
func ReadParquet(path string) (*Table, error) { return readParquet(path, false) }

// readParquet is ReadParquet; lean reads a flat file of nsysphase's own
// column types without its columns' units and docs (see leanSchema).
func readParquet(path string, lean bool) (*Table, error) {
	if err := regular.Check(path); err != nil {
		return nil, fmt.Errorf("read parquet %s: %w", path, err)
	}
	rdr, err := openParquet(path)
	if err != nil {
		return nil, fmt.Errorf("open parquet %s: %w", path, err)
	}
	defer rdr.Close()
	kv := rdr.MetaData().KeyValueMetadata()
	fileMeta := make(map[string]string, kv.Len())
	for i, k := range kv.Keys() {
		fileMeta[k] = kv.Values()[i]
	}
	props := pqarrow.ArrowReadProperties{BatchSize: 64 << 10}
	// pqarrow keeps field metadata but not the file's key-value metadata,
	// which holds the table name and doc.
	md := arrow.NewMetadata(kv.Keys(), kv.Values())
	name := tableStem(path)
	if i := md.FindKey(MetaTable); i >= 0 {
		name = md.Values()[i]
	}
	sc, ok := (*arrow.Schema)(nil), false
	if lean {
		sc, ok = leanSchema(rdr.MetaData().Schema, md)
	}
	if !ok {
		if full, err := pqarrow.FromParquet(rdr.MetaData().Schema, &props, kv); err == nil {
			sc, ok = arrow.NewSchema(full.Fields(), &md), true
		}
	}
	if ok {
		t, ok, err := readParquetDirect(rdr, sc, name)
		if err != nil {
			return nil, fmt.Errorf("read parquet %s: %w", path, err)
		}
		if ok {
			t.fileMeta = fileMeta
			return t, nil
		}
	}
	t, err := readParquetArrow(rdr, props, md, path)
	if err != nil {
		return nil, fmt.Errorf("read parquet %s: %w", path, err)
	}
	t.fileMeta = fileMeta
	return t, nil
}

// wholeParquet is the largest Parquet file openParquet reads whole.
const wholeParquet = 16 << 20

// openParquet opens a Parquet file; one of at most wholeParquet bytes is
// read whole first, in one read instead of one per column chunk and two
// for the footer (a reduce over a thousand datasets reads ~3,000 small
// files of ~80 columns).
func openParquet(path string) (*file.Reader, error) {
	if st, err := os.Stat(path); err == nil && st.Size() <= wholeParquet {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return file.NewParquetReader(bytes.NewReader(data))
	}
	return file.OpenParquetFile(path, false)
}

// readParquetArrow reads rdr through pqarrow's Arrow arrays: the path for
// files readParquetDirect does not decode.
func readParquetArrow(rdr *file.Reader, props pqarrow.ArrowReadProperties, md arrow.Metadata, path string) (*Table, error) {
	fr, err := pqarrow.NewFileReader(rdr, props, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	schema := arrow.NewSchema(tbl.Schema().Fields(), &md)
	cols := make([][]arrow.Array, tbl.NumCols())
	for i := range cols {
		cols[i] = tbl.Column(i).Data().Chunks()
	}
	return tableFromArrow(schema, cols, tableStem(path))
}

// ReadParquetMetadata returns the file-level key-value metadata of a
// Parquet file (provenance, table name; ARROW:schema included) without
// reading any rows.
func ReadParquetMetadata(path string) (map[string]string, error) {
	if err := regular.Check(path); err != nil {
		return nil, fmt.Errorf("read parquet %s: %w", path, err)
	}
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("open parquet %s: %w", path, err)
	}
	defer rdr.Close()
	kv := rdr.MetaData().KeyValueMetadata()
	out := make(map[string]string, kv.Len())
	for i, k := range kv.Keys() {
		out[k] = kv.Values()[i]
	}
	return out, nil
}

// ReadArrow loads an Arrow IPC file (Feather v2) back into a Table.
func ReadArrow(path string) (*Table, error) {
	if err := regular.Check(path); err != nil {
		return nil, fmt.Errorf("read arrow %s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open arrow %s: %w", path, err)
	}
	defer f.Close()
	rdr, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, fmt.Errorf("read arrow %s: %w", path, err)
	}
	defer rdr.Close()
	schema := rdr.Schema()
	cols := make([][]arrow.Array, schema.NumFields())
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for i := range rdr.NumRecords() {
		rec, err := rdr.RecordBatchAt(i)
		if err != nil {
			return nil, fmt.Errorf("read arrow %s: record batch %d: %w", path, i, err)
		}
		recs = append(recs, rec) // RecordBatchAt hands over ownership
		for c := range cols {
			cols[c] = append(cols[c], rec.Column(c))
		}
	}
	t, err := tableFromArrow(schema, cols, tableStem(path))
	if err != nil {
		return nil, fmt.Errorf("read arrow %s: %w", path, err)
	}
	return t, nil
}
