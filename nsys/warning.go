package nsys

import "fmt"

// Warning is one diagnostic that does not stop an analysis: an oddity of an
// input (nsys), of its segmentation (phases) or of the statistics (stats),
// with its scope. Every stage reports this one type, so a JSON consumer
// filters by Code and scope whatever stage spoke.
//
// Message is the whole sentence a person reads, naming the file when there
// is one; the other fields repeat its scope for programs.
type Warning struct {
	Code    string             `json:"code"` // one of the Warn* codes
	File    string             `json:"file,omitempty"`
	Phase   string             `json:"phase,omitempty"`
	Arm     string             `json:"arm,omitempty"`
	Metric  string             `json:"metric,omitempty"`
	Message string             `json:"message"`
	Values  map[string]float64 `json:"values,omitempty"` // the numbers behind the message, when useful
}

func (w Warning) Error() string  { return w.Message }
func (w Warning) String() string { return w.Message }

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
	WarnInput                = "input"                 // an input warning of unknown kind (read from a dataset of nsysphase before codes)
)

// WarningMessages returns the messages of ws, in order.
func WarningMessages(ws []Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Message
	}
	return out
}

// FileWarning is a warning about file: its message starts with the file's
// name, as every input diagnostic does.
func FileWarning(code, file, format string, args ...any) Warning {
	return Warning{Code: code, File: file, Message: file + ": " + fmt.Sprintf(format, args...)}
}
