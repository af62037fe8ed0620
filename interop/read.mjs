// read.mjs reads a Parquet file, or a directory holding a (Hive-partitioned)
// Parquet dataset, with DuckDB and prints one JSON object describing it:
//
//   node interop/read.mjs PATH
//
//   {"count": N,
//    "columns": [{"name", "type", "nulls", "distinct", "sum", "min", "max"}],
//    "kv": {key: value},             // file key-value metadata (first file)
//    "chunks": {col: {"encodings": [...], "compression": [...]}}}
//
// Numbers that may exceed 2^53 (sums, min, max) are printed as strings.
// nsysphase's Go tests (export/duckdb_test.go) use it as an independent
// reader of what package export writes.
import { DuckDBInstance } from '@duckdb/node-api';
import { statSync } from 'node:fs';

const path = process.argv[2];
if (!path) {
  console.error('usage: node read.mjs PARQUET_FILE_OR_DATASET_DIR');
  process.exit(2);
}
const quote = (s) => "'" + String(s).replaceAll("'", "''") + "'";
const ident = (s) => '"' + String(s).replaceAll('"', '""') + '"';

const isDir = statSync(path).isDirectory();
const files = isDir ? path.replace(/\/+$/, '') + '/**/*.parquet' : path;
const source = `read_parquet(${quote(files)}, hive_partitioning = ${isDir})`;

const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
const rows = async (sql) => (await conn.runAndReadAll(sql)).getRowObjectsJson();

const out = { count: null, columns: [], kv: {}, chunks: {} };
out.count = Number((await rows(`SELECT count(*) AS n FROM ${source}`))[0].n);

for (const c of await rows(`DESCRIBE SELECT * FROM ${source}`)) {
  const col = { name: c.column_name, type: c.column_type };
  const q = ident(c.column_name);
  const numeric = /^(BIGINT|INTEGER|SMALLINT|TINYINT|HUGEINT|DOUBLE|FLOAT|DECIMAL)/.test(c.column_type);
  const aggs = [
    `count(*) - count(${q}) AS nulls`,
    `count(DISTINCT ${q}) AS distinct`,
    `CAST(min(${q}) AS VARCHAR) AS min`,
    `CAST(max(${q}) AS VARCHAR) AS max`,
  ];
  if (numeric) aggs.push(`CAST(sum(${q}) AS VARCHAR) AS sum`);
  const r = (await rows(`SELECT ${aggs.join(', ')} FROM ${source}`))[0];
  col.nulls = Number(r.nulls);
  col.distinct = Number(r.distinct);
  col.min = r.min;
  col.max = r.max;
  if (numeric) col.sum = r.sum;
  out.columns.push(col);
}

const first = (await rows(`SELECT file FROM glob(${quote(files)}) ORDER BY file LIMIT 1`))[0].file;
for (const r of await rows(
  `SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata(${quote(first)})`)) {
  if (r.key !== 'ARROW:schema') out.kv[r.key] = r.value;
}
for (const r of await rows(
  `SELECT path_in_schema AS col, encodings, compression FROM parquet_metadata(${quote(files)})`)) {
  const e = (out.chunks[r.col] ??= { encodings: [], compression: [] });
  for (const enc of String(r.encodings).split(',').map((s) => s.trim())) {
    if (!e.encodings.includes(enc)) e.encodings.push(enc);
  }
  if (!e.compression.includes(r.compression)) e.compression.push(r.compression);
}
for (const e of Object.values(out.chunks)) {
  e.encodings.sort();
  e.compression.sort();
}

console.log(JSON.stringify(out));
