package nsys

import (
	"sort"
	"strings"

	"zombiezen.com/go/sqlite"

	"github.com/nsysphase/nsysphase/internal/base/budget"
)

// Strings is the export's StringIds table: names of kernels, API calls,
// threads and registered NVTX strings, by id.
type Strings struct {
	dense []string         // ids 0..len-1 when the table is dense (the usual case)
	has   []bool           // which dense ids exist
	rest  map[int64]string // ids beyond the dense range
}

// Get returns the string with the given id and whether it exists.
func (s *Strings) Get(id int64) (string, bool) {
	if id >= 0 && id < int64(len(s.dense)) {
		return s.dense[id], s.has[id]
	}
	v, ok := s.rest[id]
	return v, ok
}

// Name returns the string with the given id, or "" when absent.
func (s *Strings) Name(id int64) string { v, _ := s.Get(id); return v }

// Len is the number of strings.
func (s *Strings) Len() int {
	n := len(s.rest)
	for _, h := range s.has {
		if h {
			n++
		}
	}
	return n
}

// Strings loads StringIds. It is required: every name in the export lives there.
func (f *File) Strings() (*Strings, error) {
	s := &Strings{rest: map[int64]string{}}
	n, err := f.RowCount(TableStrings)
	if err != nil {
		return nil, err
	}
	if !f.HasTable(TableStrings) {
		return nil, &InputError{Path: f.Path, Problem: "missing table StringIds", Hint: hintReexport}
	}
	limit := 2*n + 1024 // ids are dense in practice; stray large ids go to the map
	err = f.scan(TableStrings, []column{req("id"), req("value")}, hintReexport, func(st row) bool {
		id := st.ColumnInt64(0)
		v := f.cleanName(st.ColumnText(1))
		if id >= 0 && id < limit {
			for int64(len(s.dense)) <= id {
				s.dense = append(s.dense, "")
				s.has = append(s.has, false)
			}
			s.dense[id], s.has[id] = v, true
			return true
		}
		s.rest[id] = v
		return true
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Thread is one named thread (ThreadNames).
type Thread struct {
	GlobalTid int64  `json:"global_tid"`
	Pid       int64  `json:"pid"`
	Tid       int64  `json:"tid"`
	Name      string `json:"name"`
}

// Threads returns the named threads, sorted by (pid, tid). Names resolve
// through StringIds.
func (f *File) Threads(strs *Strings) ([]Thread, error) {
	var out []Thread
	if !f.HasTable(TableThreads) {
		f.warnOnce("threads", FileWarning(WarnOldLayout, f.Path, "no ThreadNames table; threads are unnamed and identified by tid"))
		return nil, nil
	}
	err := f.scan(TableThreads, []column{req("nameId"), req("globalTid")}, hintReexport, func(st row) bool {
		g := st.ColumnInt64(1)
		out = append(out, Thread{GlobalTid: g, Pid: Pid(g), Tid: Tid(g), Name: budget.Shorten(strs.Name(st.ColumnInt64(0)), budget.OSNameBytes)})
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pid != out[j].Pid {
			return out[i].Pid < out[j].Pid
		}
		return out[i].Tid < out[j].Tid
	})
	return out, err
}

// Process is one row of PROCESSES. It lists every OS process the session saw,
// not only profiled ones (an MPS control daemon shows up here).
type Process struct {
	GlobalPid int64  `json:"global_pid"`
	Pid       int64  `json:"pid"`
	Name      string `json:"name"`
}

// Processes returns PROCESSES sorted by pid. Exports before nsys 2022.1
// have no PROCESSES table: the list is then empty, with a warning.
func (f *File) Processes() ([]Process, error) {
	var out []Process
	if !f.HasTable(TableProcesses) {
		f.warnOnce("processes", FileWarning(WarnOldLayout, f.Path, "no PROCESSES table (exports before nsys 2022.1 lack it); process names are unknown, processes are identified by pid"))
		return nil, nil
	}
	err := f.scan(TableProcesses, []column{req("globalPid"), reqN("pid"), reqN("name")}, hintReexport, func(st row) bool {
		g := st.ColumnInt64(0)
		p := Process{GlobalPid: g, Pid: nullInt(st, 1, Pid(g)), Name: budget.Shorten(f.cleanName(st.ColumnText(2)), budget.OSNameBytes)}
		out = append(out, p)
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Pid < out[j].Pid })
	return out, err
}

// GPU is one row of TARGET_INFO_GPU.
type GPU struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	UUID         string `json:"uuid"`
	BusLocation  string `json:"bus_location"`
	ChipName     string `json:"chip_name"`
	SMCount      int64  `json:"sm_count"`
	TotalMemory  int64  `json:"total_memory_bytes"`
	ClockRateHz  int64  `json:"clock_rate_hz"`
	ComputeMajor int64  `json:"compute_major"`
	ComputeMinor int64  `json:"compute_minor"`
}

// GPUs returns TARGET_INFO_GPU sorted by device id. Exports before 2021
// name it TARGET_INFO_CUDA_GPU, and 2020.3 wrote a short TARGET_INFO_GPU
// (deviceId, name, busLocation): each column is read from whichever name
// the export uses, and a GPU table without any device id yields no GPUs
// (with a warning naming it).
func (f *File) GPUs() ([]GPU, error) {
	t := TableGPUs
	if !f.HasTable(t) && f.HasTable(TableCUDAGPU) {
		t = TableCUDAGPU
	}
	if !f.HasTable(t) {
		return nil, nil
	}
	pick := func(names ...string) column {
		for _, n := range names {
			if f.HasColumn(t, n) {
				return opt(n)
			}
		}
		return opt(names[0])
	}
	id := pick("id", "deviceId", "cudaId")
	if !f.HasColumn(t, id.name) {
		f.warnOnce("gpus:"+t, FileWarning(WarnOldLayout, f.Path, "table %s has no device id column; GPUs are not listed", t))
		return nil, nil
	}
	cols := []column{req(id.name), pick("name"), pick("uuid"), pick("busLocation", "pciBusId"), pick("chipName"),
		pick("smCount", "numMultiprocessors"), pick("totalMemory", "globalMemorySize"), pick("clockRate", "coreClockRate"),
		pick("computeMajor", "computeCapabilityMajor"), pick("computeMinor", "computeCapabilityMinor")}
	var lacking []string
	for _, c := range cols[1:] {
		if !f.HasColumn(t, c.name) {
			lacking = append(lacking, c.name)
		}
	}
	if len(lacking) > 0 {
		f.warnOnce("gpucols:"+t, FileWarning(WarnOldLayout, f.Path, "%s lacks %s (an older export); those GPU properties are shown empty", t, strings.Join(lacking, ", ")))
	}
	var out []GPU
	seen := map[int64]bool{}
	err := f.scan(t, cols, hintReexport, func(st row) bool {
		g := GPU{
			ID: st.ColumnInt64(0), Name: f.cleanName(st.ColumnText(1)), UUID: f.cleanName(st.ColumnText(2)), BusLocation: f.cleanName(st.ColumnText(3)),
			ChipName: f.cleanName(st.ColumnText(4)), SMCount: st.ColumnInt64(5), TotalMemory: st.ColumnInt64(6),
			ClockRateHz: st.ColumnInt64(7), ComputeMajor: st.ColumnInt64(8), ComputeMinor: st.ColumnInt64(9),
		}
		if t == TableCUDAGPU {
			// TARGET_INFO_CUDA_GPU repeats a device per process that used it,
			// and gives memory in MiB and the clock in kHz.
			if seen[g.ID] {
				return true
			}
			g.TotalMemory <<= 20
			g.ClockRateHz *= 1000
		}
		seen[g.ID] = true
		out = append(out, g)
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

// warnOnce adds a warning to f.Warnings the first time key is seen.
func (f *File) warnOnce(key string, w Warning) {
	f.skipMu.Lock()
	defer f.skipMu.Unlock()
	if f.warned == nil {
		f.warned = map[string]bool{}
	}
	if f.warned[key] {
		return
	}
	f.warned[key] = true
	f.Warnings = append(f.Warnings, w)
}

// keyValues reads a two-column name/value metadata table in table order.
func (f *File) keyValues(t, nameCol, valueCol string) ([]KeyValue, error) {
	var out []KeyValue
	err := f.scan(t, []column{req(nameCol), reqN(valueCol)}, hintReexport, func(st row) bool {
		out = append(out, KeyValue{Name: f.cleanName(st.ColumnText(0)), Value: f.cleanName(st.ColumnText(1))})
		return true
	})
	return out, err
}

// SystemEnv returns TARGET_INFO_SYSTEM_ENV (driver version, OS, CPU, host).
func (f *File) SystemEnv() ([]KeyValue, error) { return f.keyValues(TableSystemEnv, "name", "value") }

// Capture returns META_DATA_CAPTURE (how the report was recorded).
func (f *File) Capture() ([]KeyValue, error) { return f.keyValues(TableCapture, "name", "value") }

// Lookup returns the first value named name.
func Lookup(kvs []KeyValue, name string) (string, bool) {
	for _, kv := range kvs {
		if kv.Name == name {
			return kv.Value, true
		}
	}
	return "", false
}

// GraphTraceMode returns how CUDA graphs were traced ("Node", "Graph" or ""
// when the capture metadata does not say), from META_DATA_CAPTURE.
func GraphTraceMode(capture []KeyValue) string {
	for _, kv := range capture {
		if strings.HasSuffix(kv.Name, ":CUDA_GRAPH_TRACE_OPTIONS:MODE") {
			return kv.Value
		}
	}
	return ""
}

// CUDADevice maps a process's CUDA device id to the GPU (TARGET_INFO_CUDA_DEVICE).
type CUDADevice struct {
	GPUID  int64 `json:"gpu_id"`
	CUDAID int64 `json:"cuda_id"`
	Pid    int64 `json:"pid"`
}

// CUDADevices returns TARGET_INFO_CUDA_DEVICE (empty when absent).
func (f *File) CUDADevices() ([]CUDADevice, error) {
	var out []CUDADevice
	err := f.scan(TableCUDADevice, []column{req("gpuId"), req("cudaId"), req("pid")}, hintReexport, func(st row) bool {
		out = append(out, CUDADevice{GPUID: st.ColumnInt64(0), CUDAID: st.ColumnInt64(1), Pid: st.ColumnInt64(2)})
		return true
	})
	return out, err
}

// SessionStartUTC returns the capture's start as Unix ns
// (TARGET_INFO_SESSION_START_TIME); ok is false when the export lacks it.
// Event timestamps are on the capture's own clock: this orders exports.
func (f *File) SessionStartUTC() (ns int64, ok bool, err error) {
	err = f.scan("TARGET_INFO_SESSION_START_TIME", []column{reqN("utcEpochNs")}, hintReexport, func(st row) bool {
		if st.ColumnType(0) != sqlite.TypeNull {
			ns, ok = st.ColumnInt64(0), true
		}
		return false
	})
	return ns, ok, err
}
