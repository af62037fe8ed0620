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
// the int64 metrics of DESIGN.md: wall time split into six exclusive parts
// (cpu_other, launch, sync, memcpy_api, alloc, other_api) that sum to wall
// exactly; GPU work joined on (pid, correlationId) — kernel sum, busy union,
// projected span, copies by direction, memsets, queueing delay, overlap with
// other processes on the same GPU, and work that other threads of the process
// launched during the range. Warnings and exclusions travel with the result.
//
// VendorProjection reproduces `nsys stats -r nvtx_gpu_proj_sum` exactly, blind
// spots included, for reconciling with existing workflows.
//
// The activity tables are streamed once, decoded in rowid parts on all
// cores, and attributed window by window (sweep.go): nsys writes them in
// start order, so a window of a few seconds of steps needs only the calls
// and GPU ops of those seconds plus a margin, and memory follows the
// trace's density rather than its length. The sweep checks the order it
// relies on row by row; an export that breaks it is loaded whole instead
// (loadActivity), with identical results. phases imports only nsys.
package phases
