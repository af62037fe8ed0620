// Package export is the last stage of the nsysphase pipeline: it renders
// result tables to the formats people and tools read.
//
// Input: a [Table], a small in-memory columnar table model (int64, float64,
// string and bool columns with first-class nulls, units and docs). Lower
// stages (nsys, phases, stats) build Tables; this package imports none of
// them, so it stays reusable and the dependency order stays one-way.
//
// Outputs, all from the same Table:
//   - text: aligned columns for terminals (null prints as "-")
//   - csv: RFC 4180 quoting, header row, null is an empty field
//   - json: an array of objects, null is JSON null, int64 stays an integer
//   - markdown: a GitHub table (for CI comments)
//   - parquet: zstd, dictionary-encoded string columns, ARROW:schema,
//     provenance key-value metadata ([Options.Metadata]); the columns of
//     each row group are encoded concurrently (the bytes are those
//     pqarrow.FileWriter writes, in 64 KiB pages)
//   - arrow: the Arrow IPC file format (Feather v2)
//
// [WriteDataset] writes one Parquet (or other) file per table into a
// directory, optionally Hive-partitioned, and never leaves half a dataset
// behind. [ReadParquet], [ReadArrow] and [ReadDataset] load tables back
// (partition keys included), so later commands can work from a written
// dataset without the original profiles.
//
// Interop is tested against an independent reader: DuckDB through
// interop/read.mjs (npm ci --prefix interop); the test skips without it.
//
// Output bytes are a function of the table and options only: no clocks, no
// map iteration order, no host names.
package export
