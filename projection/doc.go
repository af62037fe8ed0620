// Package projection reproduces `nsys stats -r nvtx_gpu_proj_sum`, the
// vendor's NVTX GPU projection, exactly — blind spots included — so that
// nsysphase's numbers can be reconciled with an nsys workflow; it is
// `nsysphase ranges`.
//
// Project computes the report's rows for an export (package nsys): per NVTX
// range name and style, the instances that launched GPU work from their own
// thread, their CPU time, and their projection onto the GPU (first op start
// to last op end, idle gaps included), with the vendor's statistics
// (Range). Trace adds the per-instance rows of nvtx_gpu_proj_trace
// (Instance). The rules are those of the vendor's SQL, written out on
// Project and in docs/schema.md, "The vendor-compatible view"; every
// fixture's numbers equal the vendor's CSVs (vendor_test.go), and a
// reference SQL query checks edited exports with what the recordings lack
// (sql_test.go).
//
// The vendor answers with correlated SQL over an R-tree (11.6 s on the
// large fixture). Here the API and GPU-op tables stream in parts decoded on
// all cores (stream.go, on package parts), calls are joined to their ops by
// (process, correlationId) as the rows come, and each thread's ranges and
// launching calls are swept in start order (sweep.go). When the export is
// not in the order the stream relies on, the projection starts over on the
// whole tables (read.go), with the same answer for any input.
//
// What nsysphase measures instead — GPU busy time, graph work, other
// threads' work — is package phases; projection imports only nsys and
// internal/base.
package projection
