// Package nsysphase turns Nsight Systems exports into per-phase breakdowns,
// statistics and Parquet: the analysis of `nsysphase analyze`, as a library.
//
// Analyze reads one or more exports (FILE.sqlite, FILE.sqlite.xz, or a
// directory written by `nsys export --type parquetdir`), cuts each into steps
// and phases by its NVTX ranges, measures every step and phase instance
// (wall time split into exclusive parts, GPU work joined to the launching
// calls), groups the instances into arms and blocks, and computes each arm's
// summaries and the comparisons against a baseline arm with confidence
// intervals whose unit of replication is the block, never the step.
//
// What a Go program can do is what the command line does:
//
//   - analyze: Analyze gives an *Analysis, read as Go values (Summary,
//     Comparisons, Decomposition, Instances, Provenance, Warnings), as the
//     JSON document (MarshalJSON), or as the Parquet dataset of `analyze
//     --out` (WriteDataset, Tables);
//   - analyze --from: AnalyzeDatasets reads such datasets back;
//   - analyze --history: Analysis.CompareWithHistory;
//   - check and check --history: Analysis.Check and Analysis.CheckHistory;
//   - inventory, boundary and verdict: Inventory, Boundary and Verdict;
//   - --format: Render writes any of these results in any format its command
//     offers, the bytes the command prints.
//
// Durations are nanoseconds throughout. A value that was not measured, or
// does not apply, is a nil pointer or a nil map entry (null in JSON and
// Parquet), never a zero: a measured zero and "not measured" differ. Every
// share names its denominator.
//
// The metrics are defined in docs/schema.md ("What each number means", and
// Metrics), the statistics in docs/statistics.md. The stage packages (nsys,
// phases, stats, export) are usable on their own, as is projection
// (`nsysphase ranges`: the vendor's nvtx_gpu_proj_sum, reproduced exactly);
// this package joins the stages.
package nsysphase
