package nsys

import (
	"iter"
)

// Tables of CUDA backtraces and CUDA contexts.
const (
	TableCallchains   = "CUDA_CALLCHAINS"               // backtraces of API calls (nsys profile --cudabacktrace)
	TableCUDAContexts = "TARGET_INFO_CUDA_CONTEXT_INFO" // each process's CUDA contexts
)

// CallchainFrame is one row of CUDA_CALLCHAINS: one frame of the backtrace
// that an API call's callchainId names.
type CallchainFrame struct {
	ID         int64 // callchain id (CUPTI_ACTIVITY_KIND_RUNTIME.callchainId)
	Depth      int64 // stackDepth: 0 is the innermost frame
	Symbol     int64 // StringIds id
	Module     int64 // StringIds id; -1 when not recorded
	Unresolved bool  // the symbol could not be resolved
}

var callchainCols = []column{req("id"), req("stackDepth"), req("symbol"), optInt("module", -1), optInt("unresolved", 0)}

// Callchains streams CUDA_CALLCHAINS (nothing when the export has no
// backtraces).
func (f *File) Callchains() iter.Seq2[CallchainFrame, error] {
	return seq(f, TableCallchains, callchainCols, "record with `nsys profile --cudabacktrace=all`", func(st row) CallchainFrame {
		return CallchainFrame{ID: st.ColumnInt64(0), Depth: st.ColumnInt64(1), Symbol: st.ColumnInt64(2), Module: st.ColumnInt64(3), Unresolved: st.ColumnInt64(4) != 0}
	})
}

// CUDAContextRow is one row of TARGET_INFO_CUDA_CONTEXT_INFO; DeviceID is
// the process's own device id (see CUDADevices for the GPU).
type CUDAContextRow struct {
	Pid       int64
	DeviceID  int64
	ContextID int64
}

// CUDAContexts returns TARGET_INFO_CUDA_CONTEXT_INFO in table order (empty
// when absent).
func (f *File) CUDAContexts() ([]CUDAContextRow, error) {
	var out []CUDAContextRow
	err := f.scan(TableCUDAContexts, []column{req("processId"), req("deviceId"), req("contextId")}, hintReexport, func(st row) bool {
		out = append(out, CUDAContextRow{Pid: st.ColumnInt64(0), DeviceID: st.ColumnInt64(1), ContextID: st.ColumnInt64(2)})
		return true
	})
	return out, err
}
