// Package phases is the second pipeline stage: segmentation and attribution.
//
// Input: an opened export (package nsys) and Options (step name, depth, arm
// pattern, warm-up, rules file, file-level arm). Segment builds per-thread
// NVTX range trees (push/pop and start/end, domains, registered strings),
// finds arm blocks (ranges named like "arm=<name> block=<i>"), the step (the
// range name or numbered family, "ProfilerStep#N", that repeats most among
// the children of arm blocks, or at the top of a thread's tree; PyTorch's
// seq/op_id suffixes stripped), and the phases (the step's children, down to
// Depth), then measures every step and phase instance. Without a repeated
// range each thread's ranges go under one "whole process" step (single shot,
// n = 1); without NVTX ranges each process's CUDA activity is that step.
// Result.StepChoice says which rule chose the step.
//
// Output: a Result with one Instance per step and phase instance, each with
// the int64 metrics that docs/schema.md ("What each number means") defines: wall time split into six exclusive parts
// (cpu_other, launch, sync, memcpy_api, alloc, other_api) that sum to wall
// exactly; GPU work joined on (pid, correlationId) — kernel sum, busy union,
// projected span, copies by direction, memsets, queueing delay, overlap with
// other processes on the same GPU, and work that other threads of the process
// launched during the range; what the process's GPUs ran during the range
// (other processes' work, nothing) with sync time split by it exactly; host
// syncs on the process's other threads. Warnings and exclusions travel with the result.
// Each metric is declared once (metrics.go: MetricInfo — unit, source
// tables, additivity, its columns in the default and --wide tables): which
// metrics an absent table leaves null, which the (unannotated) row leaves
// null, and both breakdown tables derive from the declarations, and
// Declare adds a metric with its Measure (package internal/metricproof
// shows one added in three files).
// The instances are kept compactly in Result.Store (store.go: ~110 bytes an
// instance, pointer-free) and, unless Options.Compact, also decoded in
// Result.Instances.
//
// The vendor's `nsys stats -r nvtx_gpu_proj_sum`, reproduced exactly for
// reconciling with existing workflows, is package projection, beside this
// one on the same reader and part decoder.
//
// Before the engine, the NVTX side (load.go; segment.go, with its ranges
// in segment_ranges.go, its arms in segment_arms.go and the step's choice
// in stepchoice.go) — the serial part of an analysis: the head (NVTX
// events in parts along the table's B-tree, strings, thread names) is read
// concurrently, before anything else; each
// distinct range name is resolved once (rangeName: display name, family,
// arm match, warm-up), not once per range; then every instance is laid out
// (layout), its place known, and its key written to the store concurrently
// before any is measured; the engine decodes a window's instances, measures
// them and stores their measurements.
//
// Structure, reader → source → engine:
//   - the reader (activity.go) decodes each activity table's rows once:
//     opRows and decodeOpPart for the GPU-op tables, decodeAPIPart (calls
//     by nsys.IsCallClass) for the API table;
//   - a source (source.go) hands the decoded rows to the engine in start
//     order, part by part: the stream source decodes rowid parts on all
//     cores ahead of the engine (package internal/base/parts); the memory source holds the whole export,
//     sorted by start;
//   - the engine (sweep.go; its calls, ops, busy time and letting go in
//     sweep_calls.go, sweep_ops.go, sweep_busy.go, sweep_evict.go)
//     attributes instances window by window and
//     accounts GPU busy time and cross-process overlap as ops pass (one way
//     to compute each). On the stream source a window is a few seconds of
//     steps plus a margin, so memory follows the trace's density rather
//     than its length; the engine checks the order it relies on row by row,
//     and on a breach starts over, with a warning, on the memory source,
//     whose single window is unlimited. Results are identical either way.
//     Tuning (window, margin, part size, memory source) is an unexported
//     engineConfig carried by Options.
//
// phases imports only nsys and internal/base.
package phases
