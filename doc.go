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
// The metrics are defined in docs/schema.md ("What each number means"), the
// statistics in docs/statistics.md. The stage packages (nsys, phases, stats,
// export) are usable on their own, as is projection (`nsysphase ranges`: the
// vendor's nvtx_gpu_proj_sum, reproduced exactly); this package joins the
// stages.
package nsysphase
