package report

// SchemaNotes is the part of docs/schema.md that defines what the columns
// measure, the warning codes and the vendor-compatible view: the code's doc
// comments and the tables' descriptions cite these sections.
const SchemaNotes = `## What each number means

A phase instance is one NVTX range instance that a phase rule matched, on one
thread, inside one step instance, inside one arm block. All durations are int64 ns.

- ` + "`wall`" + `: range end − range start.
- CUDA API time on the range's thread inside the range, by category, counting
  nested calls once: ` + "`launch`" + ` (kernel and graph launches), ` + "`sync`" + ` (stream,
  device, event and context synchronize, and the blocking part of synchronous
  copies), ` + "`memcpy_api`" + `, ` + "`alloc`" + ` (malloc/free of device, host-pinned and pool
  memory), ` + "`other_api`" + `.
- ` + "`cpu_other`" + ` = wall − union of top-level API calls: Python and framework
  dispatch, host work. Always ≥ 0; the six parts sum to ` + "`wall`" + ` exactly.
- GPU work attributed by (pid, correlationId) to API calls on the range's thread
  inside the range: ` + "`kernel_sum`" + ` (sum of kernel durations), ` + "`gpu_busy`" + ` (union
  of their intervals), ` + "`proj`" + ` (first start to last end, the vendor's "projected"
  time), op counts, and the same for memcpy (H2D, D2H, D2D, P2P: count, bytes,
  time) and memset. GPU work launched during the range by other threads of the
  same process (PyTorch's autograd thread) is reported beside it, never mixed
  in: ` + "`other_thread_kernel_ns`" + `, ` + "`other_thread_ops`" + `.
- ` + "`queue`" + `: for each GPU op, its start − the end of the API call that launched
  it; sum, mean and max per instance.
- ` + "`overlap_other_process`" + `: GPU time during the range in which another process
  had work running on the same GPU.
- What the process's GPUs ran during the range. The process's GPUs are the
  GPUs on which its own GPU work (kernels, copies, memsets of any of its
  threads) had started by the range's end: in practice every GPU it uses,
  once it has used it (visible but unused devices do not count). Each time
  below is a union over those GPUs, so it is at most wall:
  ` + "`other_process_gpu_ns`" + ` is time in which other processes' work ran on at
  least one of them (whether or not the process's own work ran too);
  ` + "`gpu_idle_ns`" + ` is time in which none of them ran any recorded work.
- ` + "`sync_ns`" + ` split exactly by what those GPUs ran while the host waited
  (each blocking interval clipped as for ` + "`sync_ns`" + `):
  ` + "`sync_own_gpu_ns`" + ` (the process's own work ran), ` + "`sync_other_gpu_ns`" + `
  (only other processes' work ran), ` + "`sync_no_gpu_ns`" + ` (nothing recorded ran);
  the three sum to ` + "`sync_ns`" + ` for every instance. Without MPS, two
  processes' contexts time-slice the GPU and their work never overlaps
  (` + "`overlap_other_process`" + ` is 0): a wait that is mostly ` + "`sync_no_gpu_ns`" + ` beside
  nonzero ` + "`other_process_gpu_ns`" + ` is the GPU switching between contexts. A
  single process's ` + "`sync_no_gpu_ns`" + ` is usually launch latency: the awaited work
  had not started yet. Recorded work is the trace's kernels, copies and
  memsets that carry a correlation id.
- ` + "`other_thread_sync_ns`" + ` / ` + "`other_thread_syncs`" + `: host syncs made on other threads
  of the same process while the range was open (union of their blocking
  intervals clipped to the range; calls starting inside it), such as XLA
  runtime threads or PyTorch's autograd thread. XLA often waits through host
  callbacks instead, which no CUDA call shows.

Every percentage names its denominator. A measured zero and "not measured" are
different values (null in Parquet and JSON, ` + "`—`" + ` in text, Markdown and HTML). A
metric is null when the table it comes from is absent from the export (no
kernel table: every kernel and GPU metric; no CUDA API table: every host and
GPU metric; no memset or graph-trace table: those metrics), since an absent
table cannot tell "not traced" from "none happened".

## The whole step

A step's depth-1 rows add up to the step: its phases, and an
` + "`(unannotated)`" + ` row per step instance holding the step's time and work outside
every phase (the step minus its phases, metric by metric; its GPU busy time,
projected span and largest queue delay do not split into parts and are null).
Library and framework ranges directly under a program's step (` + "`aten::`" + `,
NCCL, …) are not phases: their time is in ` + "`(unannotated)`" + `. Work other threads
of the process did during the step gets rows of its own, flagged
` + "`other_thread`" + `: the span of that thread's top-level ranges inside the step,
measured like any range on that thread (PyTorch's autograd thread is named
` + "`backward (autograd thread)`" + `). Those rows ran beside the step's phases and are
outside its wall.

## Arms, blocks and steps

An arm is one experimental condition. Arms come from NVTX ranges (default: a
range named like ` + "`arm=<name> block=<i>`" + `), from files (` + "`--arm mps=run_mps_*.sqlite`" + `),
or from a key in a run manifest JSON beside the export. A block is one
contiguous replicate of an arm (one arm range, or one file): the statistics'
unit. Warm-up steps (` + "`--skip-steps`" + `) are excluded and reported as excluded.

## Warning codes

Warnings (the JSON ` + "`warnings`" + ` of every command, and the segmentation warnings kept
in ` + "`nsysphase.context`" + `) carry a ` + "`code`" + ` from this closed set, with their scope
(` + "`file`" + `, ` + "`phase`" + `, ` + "`arm`" + `, ` + "`metric`" + `) and the sentence a person reads (` + "`message`" + `).

Inputs (package nsys, phases): ` + "`schema_minor`" + ` (export schema minor version differs
from the tested one), ` + "`sidecar`" + ` (a -wal/-journal/-shm file beside the export was
ignored), ` + "`skipped_rows`" + ` (rows lacking a required value), ` + "`end_before_start`" + `,
` + "`non_integer_time`" + `, ` + "`unclosed_range`" + `, ` + "`unbalanced_range`" + ` (push/pop ranges overlapping
without nesting), ` + "`other_thread_end`" + `, ` + "`unnamed_range`" + `, ` + "`dangling_text_id`" + `,
` + "`no_thread_range`" + ` (NVTX ranges with a NULL globalTid: in no phase), ` + "`dangling_api_name`" + ` (API
calls whose nameId StringIds lacks: classified by their GPU work or synchronization record, else other_api), ` + "`idle_step_thread`" + ` (a second thread
repeats the step's ranges with no CUDA work: its empty steps are pooled in),
` + "`duplicate_correlation`" + `, ` + "`unmatched_ops`" + ` (GPU operations whose correlationId matches no API
call: in no total), ` + "`correlation_range`" + ` (correlation ids beyond 2^31 left out),
` + "`outside_arm`" + ` (steps outside every arm block left out), ` + "`whole_read`" + ` (activity
tables read whole: memory about the export's size), ` + "`no_metadata`" + ` (no export
metadata table, or one without the version: provenance unknown), ` + "`old_layout`" + ` (an
older export lacks a table or column such as PROCESSES, ThreadNames or callchainId),
` + "`no_kernel_table`" + ` (launch calls but no kernel table: GPU activity not recorded),
` + "`nvtx_domain_rows`" + ` (NVTX domain-create rows with a negative start), ` + "`no_nvtx`" + ` (no NVTX
ranges: each process analysed as one phase), ` + "`single_shot`" + ` (no range repeats: every
range is one measured value, n = 1), ` + "`few_steps`" + ` (a process holds no more steps than
--skip-steps: they are kept), ` + "`input`" + ` (an input warning
read from a dataset written before codes existed).

Merging and commands: ` + "`step_differs`" + `, ` + "`dataset_without_context`" + `,
` + "`dataset_hardware`" + ` (a dataset holds GPU metrics or CPU samples, which ` + "`--from`" + ` does not
read back: no hardware section),
` + "`skip_steps_differ`" + `, ` + "`no_kept_steps`" + `, ` + "`phases_folded`" + ` (more than 500
distinct phases: the 500 with the most wall time are kept, the rest are one
phase ` + "`(other phases)`" + `), ` + "`arms_folded`" + ` (more than 64 arms: the 64
that start first, the baseline among them, are kept, the rest are one arm
` + "`(other arms)`" + `), ` + "`within_run_one_arm`" + ` (` + "`analyze --within-run`" + ` on inputs of
one arm: nothing to compare, no within-run rows).

Statistics (package stats; see [statistics.md](statistics.md) §7):
` + "`tail_limited_mean`" + `, ` + "`autocorrelation`" + `, ` + "`head_effect`" + `, ` + "`drift`" + `,
` + "`non_interleaved`" + `, ` + "`unequal_units`" + `, ` + "`low_replication`" + `, ` + "`no_replication`" + `,
` + "`quantile_ci_omitted`" + `, ` + "`ci_excludes_run_to_run_variance`" + `, ` + "`conditional_on_profiles`" + `,
` + "`skewed_or_tail_limited`" + `, ` + "`unmatched_unit`" + `, ` + "`approximate_quantile_ci`" + `,
` + "`undefined_resamples`" + `, ` + "`metric_absent`" + `, ` + "`unbounded_ci`" + `, ` + "`not_requested`" + `.

History (` + "`--history`" + `; see [statistics.md](statistics.md) §11): ` + "`few_history_runs`" + ` (fewer
than 5 history runs: the false-alarm rate is not the stated one), ` + "`history_steps_differ`" + ` (a
candidate run's steps differ from the history's median by more than 2×),
` + "`history_trend`" + ` (the history runs drift in time), ` + "`candidate_in_history`" + ` (a candidate
run was also a history run: left out of the history).

Ranks (the ` + "`ranks`" + ` section): ` + "`ranks_unaligned`" + ` (per-rank exports without session start
times: no stragglers), ` + "`ranks_multi_host`" + ` (ranks on different hosts: their session clocks
are not corrected), ` + "`ranks_not_one_job`" + ` (exports claim the same rank, or their timelines
do not overlap: no rank view), ` + "`ranks_one_run`" + ` (the ranks of one run are pooled in one
unit per block, never one unit per rank), ` + "`collective_counts`" + ` (the ranks ran different
numbers of collectives in a matched step), ` + "`collectives_mismatched`" + ` (collectives matched by
order ran different operations on different ranks: a subgroup's collectives, or one a trace lacks).

Sampling (GPU metrics and CPU samples): ` + "`gpu_metrics`" + ` (GPU metrics sampled too coarsely for
some phases, on a GPU that several traced processes shared, or rows out of time order), ` + "`cpu_samples`" + ` (too few CPU samples in a phase to
rank its functions), ` + "`samples_only`" + ` (no CUDA or NVTX trace: each sampled process is
analysed as one phase).

## The vendor-compatible view

` + "`nsysphase ranges`" + ` reproduces ` + "`nsys stats -r nvtx_gpu_proj_sum`" + ` exactly, its blind
spots included, so users can reconcile nsysphase with their nsys workflow:

1. Ranges: NVTX rows of types 59, 60, 70, 71 that did not end on another thread
   (` + "`endGlobalTid`" + ` NULL). A NULL ` + "`end`" + ` becomes the largest start/end among those
   rows. Marks and domain rows are not ranges.
2. Name: ` + "`<domain>:<text>`" + `, the domain's name from its type-75 row of the same
   process, empty for the default domain (so ` + "`:collector_step`" + `). Grouped by
   (name, style).
3. GPU ops: kernels, memcpy and memset rows (not graph-trace, sync or event
   rows), joined to API calls on correlationId and process.
4. Containment: the launching API call lies inside the range, inclusive at both
   ends, on the same thread; an op counts in every enclosing range; driver-API
   launches count.
5. Per instance: projected duration = last op end − first op start (it can exceed
   the CPU range); op count = distinct correlation ids (a graph launch counts
   once). Ranges with no ops are left out.
6. Summary per (name, style): totals of projected and range time, instances,
   average, median, min, max, sample standard deviation (n−1), GPU ops.

` + "`analyze`" + ` does not share these blind spots: it uses busy time as well as span,
both graph-trace modes, and reports other-thread work.
`
