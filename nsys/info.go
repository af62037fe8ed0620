package nsys

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"

	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// Info describes one export: provenance, row counts and activity totals.
// Its JSON form is the contract of `nsysphase info --format json`.
type Info struct {
	File                string           `json:"file"`
	NsysVersion         string           `json:"nsys_version"`
	ExportSchemaVersion string           `json:"export_schema_version"`
	NsysVersionSource   string           `json:"nsys_version_source"`   // the metadata table, or the install path it was inferred from; "" when unknown
	Unknown             []string         `json:"unknown"`               // provenance the export does not state
	GraphTraceMode      string           `json:"cuda_graph_trace_mode"` // "Node", "Graph" or ""
	DriverVersion       string           `json:"driver_version"`
	CUDADriverVersion   string           `json:"cuda_driver_version"` // e.g. "13.0"
	OS                  string           `json:"os"`
	GPUs                []GPU            `json:"gpus"`
	Processes           []Process        `json:"processes"`
	ProfiledPids        []int64          `json:"profiled_pids"` // processes with CUDA or NVTX activity
	Threads             []Thread         `json:"threads"`
	Tables              map[string]int64 `json:"tables"`
	AbsentTables        []string         `json:"absent_activity_tables"`
	Kernels             KernelInfo       `json:"kernels"`
	API                 APIInfo          `json:"api"`
	Memcpy              []MemopSummary   `json:"memcpy"`
	Syncs               []SyncSummary    `json:"sync"`
	SkippedRows         map[string]int64 `json:"skipped_rows"`
	Warnings            []string         `json:"warnings"`
}

// KernelInfo is the kernel part of Info.
type KernelInfo struct {
	Durations
	ByName []NamedDurations `json:"by_name"`
}

// APIInfo is the CUDA API part of Info.
type APIInfo struct {
	Durations
	ByName []NamedDurations `json:"by_name"`
}

// Describe reads everything Info reports.
func (f *File) Describe() (*Info, error) {
	strs, err := f.Strings()
	if err != nil {
		return nil, err
	}
	in := &Info{
		File:                f.Path,
		NsysVersion:         f.Export.ProductVersion,
		ExportSchemaVersion: f.Export.SchemaVersion,
		NsysVersionSource:   f.Export.VersionSource,
		Unknown:             slices.Clone(f.Export.Unknown),
		Tables:              map[string]int64{},
	}
	for _, t := range f.Tables() {
		n, err := f.RowCount(t)
		if err != nil {
			return nil, err
		}
		in.Tables[t] = n
	}
	for _, t := range ActivityTables {
		if !f.HasTable(t) {
			in.AbsentTables = append(in.AbsentTables, t)
		}
	}
	capture, err := f.Capture()
	if err != nil {
		return nil, err
	}
	in.GraphTraceMode = GraphTraceMode(capture)
	env, err := f.SystemEnv()
	if err != nil {
		return nil, err
	}
	in.DriverVersion, _ = Lookup(env, "NvDriverVersion")
	in.CUDADriverVersion = CUDAVersion(Lookup(env, "CudaDriverVersion"))
	in.OS, _ = Lookup(env, "OsDescription")
	if in.GPUs, err = f.GPUs(); err != nil {
		return nil, err
	}
	if in.Processes, err = f.Processes(); err != nil {
		return nil, err
	}
	if in.Threads, err = f.Threads(strs); err != nil {
		return nil, err
	}
	// The quality checks read other columns than the summaries: run both
	// at once (each scan has its own connection).
	var (
		quality    *Quality
		qualityErr error
		done       = make(chan struct{})
	)
	go func() {
		defer close(done)
		quality, qualityErr = f.CheckQuality()
	}()
	act, err := f.SummarizeActivity(strs)
	<-done
	if err != nil {
		return nil, err
	}
	if qualityErr != nil {
		return nil, qualityErr
	}
	quality.DuplicateCorrelations = act.DuplicateCorrelations
	in.Kernels = KernelInfo{Durations: act.Kernels, ByName: act.KernelsByName}
	in.API = APIInfo{Durations: act.API, ByName: act.APIByName}
	in.Memcpy = act.Memops
	in.Syncs = act.Syncs
	pids, err := f.activePids()
	if err != nil {
		return nil, err
	}
	in.ProfiledPids = pids
	if err := f.noteOldLayout(in); err != nil {
		return nil, err
	}
	in.SkippedRows = f.Skipped()
	for _, w := range f.Warnings {
		in.Warnings = append(in.Warnings, w.Message)
	}
	for _, w := range quality.Warnings(f.Path) {
		in.Warnings = append(in.Warnings, w.Message)
	}
	for _, t := range slices.Sorted(maps.Keys(in.SkippedRows)) {
		in.Warnings = append(in.Warnings, fmt.Sprintf("%s: %d %s of %s %s skipped (NULL where a value is required)", f.Path, in.SkippedRows[t], plural.Of(in.SkippedRows[t], "row", "rows"), t, plural.Of(in.SkippedRows[t], "was", "were")))
	}
	ensureSlices(in)
	return in, nil
}

// ensureSlices makes empty lists encode as [] rather than null: a measured
// "none" is not "not measured".
func ensureSlices(in *Info) {
	if in.GPUs == nil {
		in.GPUs = []GPU{}
	}
	if in.Processes == nil {
		in.Processes = []Process{}
	}
	if in.Threads == nil {
		in.Threads = []Thread{}
	}
	if in.AbsentTables == nil {
		in.AbsentTables = []string{}
	}
	if in.Kernels.ByName == nil {
		in.Kernels.ByName = []NamedDurations{}
	}
	if in.API.ByName == nil {
		in.API.ByName = []NamedDurations{}
	}
	if in.Memcpy == nil {
		in.Memcpy = []MemopSummary{}
	}
	if in.Syncs == nil {
		in.Syncs = []SyncSummary{}
	}
	if in.ProfiledPids == nil {
		in.ProfiledPids = []int64{}
	}
	if in.Warnings == nil {
		in.Warnings = []string{}
	}
	if in.Unknown == nil {
		in.Unknown = []string{}
	}
}

// CUDAVersion turns the driver's packed CUDA version (TARGET_INFO_SYSTEM_ENV
// CudaDriverVersion, e.g. 13000) into "13.0"; "" when absent.
func CUDAVersion(v string, ok bool) string {
	if !ok {
		return ""
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return v
	}
	return strconv.Itoa(n/1000) + "." + strconv.Itoa((n%1000)/10)
}

// activePids lists the processes that left CUDA API or NVTX rows: the
// profiled ones among everything PROCESSES lists.
func (f *File) activePids() ([]int64, error) {
	seen := map[int64]bool{}
	for _, q := range []struct{ table, col string }{{TableRuntime, "globalTid"}, {TableNVTX, "globalTid"}, {TableKernel, "globalPid"}} {
		if !f.HasTable(q.table) || !f.HasColumn(q.table, q.col) {
			continue
		}
		err := f.query("SELECT DISTINCT "+quoteIdent(q.col)+" >> 24 & 16777215 FROM "+quoteIdent(q.table)+" WHERE "+quoteIdent(q.col)+" IS NOT NULL", func(st *sqlite.Stmt) error {
			seen[st.ColumnInt64(0)] = true
			return nil
		})
		if err != nil {
			return nil, f.readError("cannot list processes of "+q.table, err)
		}
	}
	out := make([]int64, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// noteOldLayout warns about what older exports lack or hold differently,
// naming it: a kernel table missing where launch calls exist, API calls
// without callchainId, and NVTX domain-create rows with a negative start
// and no end (2022.4–2023.1).
func (f *File) noteOldLayout(in *Info) error {
	if !f.HasTable(TableKernel) {
		var launches int64
		for _, a := range in.API.ByName {
			if strings.Contains(a.Name, "Launch") {
				launches += a.Count
			}
		}
		if launches > 0 {
			f.warnOnce("nokernels", FileWarning(WarnNoKernelTable, f.Path, "%d launch %s but no %s table: GPU activity was not recorded (kernel and GPU-busy figures are absent, not zero); record with `nsys profile -t cuda`", launches, plural.Of(launches, "call", "calls"), TableKernel))
		}
	}
	if f.HasTable(TableRuntime) && !f.HasColumn(TableRuntime, "callchainId") {
		f.warnOnce("nocallchain", FileWarning(WarnOldLayout, f.Path, "%s has no callchainId column (an older export): CUDA API backtraces are unavailable", TableRuntime))
	}
	if f.HasTable(TableNVTX) && f.HasColumn(TableNVTX, "eventType") && f.HasColumn(TableNVTX, "start") {
		var n int64
		err := f.query(fmt.Sprintf("SELECT count(*) FROM %s WHERE eventType = %d AND start < 0", quoteIdent(TableNVTX), NVTXDomainCreate), func(st *sqlite.Stmt) error {
			n = st.ColumnInt64(0)
			return nil
		})
		if err != nil {
			return f.readError("cannot read "+TableNVTX, err)
		}
		if n > 0 {
			f.warnOnce("nvtxdomains", FileWarning(WarnNVTXDomainRows, f.Path, "%d NVTX domain-create %s a negative start and no end (as nsys 2022.4–2023.1 writes them); %s", n,
				plural.Of(n, "row has", "rows have"), plural.Of(n, "it only names a domain and is not a range", "they only name domains and are not ranges")))
		}
	}
	return nil
}
