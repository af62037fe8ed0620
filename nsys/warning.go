package nsys

import "github.com/nsysphase/nsysphase/diag"

// Warning is the pipeline's one diagnostic type (package diag, a leaf every
// stage imports).
type Warning = diag.Warning

// Warning codes of the inputs and their segmentation: a closed set (the
// statistics add theirs, package stats; the analysis a few more, all listed
// in docs/schema.md).
const (
	WarnSchemaMinor          = "schema_minor"          // export schema minor version differs from the tested one
	WarnSidecar              = "sidecar"               // a -wal/-journal/-shm file beside the export was ignored
	WarnSkippedRows          = "skipped_rows"          // rows lacking a required value were skipped
	WarnEndBeforeStart       = "end_before_start"      // rows end before they start
	WarnNonIntegerTime       = "non_integer_time"      // a start or end stored as text or blob
	WarnUnclosedRange        = "unclosed_range"        // NVTX ranges never closed
	WarnUnbalancedRange      = "unbalanced_range"      // push/pop ranges overlapping without nesting
	WarnOtherThreadEnd       = "other_thread_end"      // start/end ranges ended on another thread
	WarnUnnamedRange         = "unnamed_range"         // NVTX ranges with neither text nor textId
	WarnDanglingTextID       = "dangling_text_id"      // textId missing from StringIds
	WarnNoThreadRange        = "no_thread_range"       // NVTX ranges with a NULL globalTid: in no thread, no phase
	WarnDanglingAPIName      = "dangling_api_name"     // API calls whose nameId StringIds lacks: counted as other_api
	WarnDuplicateCorrelation = "duplicate_correlation" // API calls sharing (process, correlationId)
	WarnCorrelationRange     = "correlation_range"     // correlation ids beyond 2^31 left out
	WarnUnmatchedOps         = "unmatched_ops"         // GPU operations whose correlationId matches no API call
	WarnOutsideArm           = "outside_arm"           // steps outside every arm block were left out
	WarnWholeRead            = "whole_read"            // activity tables read whole (memory ≈ export)
	WarnNoMetadata           = "no_metadata"           // no export metadata table, or one that lacks the version: provenance unknown
	WarnOldLayout            = "old_layout"            // an older export lacks a table or column (PROCESSES, ThreadNames, callchainId, GPU properties)
	WarnNoKernelTable        = "no_kernel_table"       // launch calls but no kernel table: GPU activity was not recorded
	WarnNVTXDomainRows       = "nvtx_domain_rows"      // NVTX domain-create rows with a negative start and no end
	WarnNoNVTX               = "no_nvtx"               // no NVTX ranges: each process analysed as one phase
	WarnSingleShot           = "single_shot"           // no NVTX range repeats: every range is one measured value (n = 1)
	WarnIdleStepThread       = "idle_step_thread"      // a thread repeats the step's ranges with no CUDA work: its empty steps are pooled in
	WarnFewSteps             = "few_steps"             // a process holds no more steps than --skip-steps: they are kept
	WarnGPUMetrics           = "gpu_metrics"           // GPU metrics sampled too coarsely for some phases, on a GPU shared by several processes, or rows out of time order
	WarnCPUSamples           = "cpu_samples"           // too few CPU samples in a phase to rank its functions
	WarnSamplesOnly          = "samples_only"          // no CUDA or NVTX trace: each sampled process analysed as one phase
	WarnInput                = "input"                 // an input warning of unknown kind (read from a dataset of nsysphase before codes)
)

// WarningMessages returns the messages of ws, in order.
func WarningMessages(ws []Warning) []string { return diag.Messages(ws) }

// FileWarning is a warning about file: its message starts with the file's
// name, as every input diagnostic does.
func FileWarning(code, file, format string, args ...any) Warning {
	return diag.FileWarning(code, file, format, args...)
}
