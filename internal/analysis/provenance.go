package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

// Provenance is what an export says about where it came from.
type Provenance struct {
	File              string         `json:"file"`
	NsysVersion       string         `json:"nsys_version"`
	SchemaVersion     string         `json:"export_schema_version"`
	GPUs              []nsys.GPU     `json:"gpus"`
	DriverVersion     string         `json:"driver_version"`
	CUDADriverVersion string         `json:"cuda_driver_version"`
	OS                string         `json:"os"`
	GraphTraceMode    string         `json:"cuda_graph_trace_mode"`
	Processes         []nsys.Process `json:"processes"` // profiled processes and NVIDIA daemons
	MPSProcesses      []nsys.Process `json:"mps_processes"`
	// CUDAContexts are the CUDA contexts the profiled processes created,
	// each with the physical GPU it lives on (TARGET_INFO_CUDA_CONTEXT_INFO).
	CUDAContexts []CUDAContext `json:"cuda_contexts"`
}

// provenanceColumns are the columns that say where an export came from,
// each with its cell: the first columns of both tables that hold
// provenance, analyze's provenance (Doc.ProvenanceTable) and info's one row
// per export (report.InfosTable), which derive theirs from this one list.
var provenanceColumns = []struct {
	export.Column
	cell func(p *Provenance) string
}{
	{export.Column{Name: "nsys_version", Type: export.TypeString}, func(p *Provenance) string { return p.NsysVersion }},
	{export.Column{Name: "export_schema_version", Type: export.TypeString}, func(p *Provenance) string { return p.SchemaVersion }},
	{export.Column{Name: "gpu", Type: export.TypeString}, func(p *Provenance) string { return p.gpuField(func(g nsys.GPU) string { return g.Name }) }},
	{export.Column{Name: "gpu_uuid", Type: export.TypeString}, func(p *Provenance) string { return p.gpuField(func(g nsys.GPU) string { return g.UUID }) }},
	{export.Column{Name: "driver_version", Type: export.TypeString}, func(p *Provenance) string { return p.DriverVersion }},
	{export.Column{Name: "cuda_driver_version", Type: export.TypeString}, func(p *Provenance) string { return p.CUDADriverVersion }},
	{export.Column{Name: "cuda_graph_trace_mode", Type: export.TypeString}, func(p *Provenance) string { return p.GraphTraceMode }},
}

// ProvenanceColumns are the provenance columns of a table, file first:
// where an export came from.
func ProvenanceColumns() []export.Column {
	cols := []export.Column{{Name: "file", Type: export.TypeString}}
	for _, c := range provenanceColumns {
		cols = append(cols, c.Column)
	}
	return cols
}

// Cells are the values of ProvenanceColumns for the export named file.
func (p *Provenance) Cells(file string) []export.Value {
	vals := []export.Value{export.Str(file)}
	for _, c := range provenanceColumns {
		vals = append(vals, export.Str(c.cell(p)))
	}
	return vals
}

// gpuField is one field of every GPU, joined by ";".
func (p *Provenance) gpuField(field func(nsys.GPU) string) string {
	vals := make([]string, len(p.GPUs))
	for i, g := range p.GPUs {
		vals[i] = field(g)
	}
	return strings.Join(vals, ";")
}

// CUDAContext is one CUDA context of one process. Device and context ids are
// per process (both MPS clients show context 1); GPU is the physical GPU.
type CUDAContext struct {
	GPU       int64 `json:"gpu"`
	Pid       int64 `json:"pid"`
	DeviceID  int64 `json:"device_id"`
	ContextID int64 `json:"context_id"`
}

func readProvenance(f *nsys.File, path string) (*Provenance, error) {
	p := &Provenance{File: path, NsysVersion: f.Export.ProductVersion, SchemaVersion: f.Export.SchemaVersion}
	var err error
	if p.GPUs, err = f.GPUs(); err != nil {
		return nil, err
	}
	env, err := f.SystemEnv()
	if err != nil {
		return nil, err
	}
	p.DriverVersion, _ = nsys.Lookup(env, "NvDriverVersion")
	p.CUDADriverVersion = nsys.CUDAVersion(nsys.Lookup(env, "CudaDriverVersion"))
	p.OS, _ = nsys.Lookup(env, "OsDescription")
	capture, err := f.Capture()
	if err != nil {
		return nil, err
	}
	p.GraphTraceMode = nsys.GraphTraceMode(capture)
	procs, err := f.Processes()
	if err != nil {
		return nil, err
	}
	for _, pr := range procs {
		if strings.Contains(strings.ToLower(pr.Name), "mps") {
			p.MPSProcesses = append(p.MPSProcesses, pr)
		}
	}
	p.Processes = procs
	if p.CUDAContexts, err = readCUDAContexts(f); err != nil {
		return nil, err
	}
	if p.GPUs == nil {
		p.GPUs = []nsys.GPU{}
	}
	if p.MPSProcesses == nil {
		p.MPSProcesses = []nsys.Process{}
	}
	return p, nil
}

// Evidence is what the trace itself shows, whatever the manifest claims.
type Evidence struct {
	// MPSActive: kernels of different processes overlapped on one GPU, the
	// only reliable sign of CUDA MPS (time slicing never overlaps them).
	MPSActive                bool             `json:"mps_active"`
	CrossProcessGPUOverlapNs int64            `json:"cross_process_gpu_overlap_ns"`
	GPUProcesses             []phases.GPUUse  `json:"gpu_processes"`
	MPSProcessesSeen         []string         `json:"mps_processes_seen"`
	GraphLaunchesByArm       map[string]int64 `json:"graph_launches_by_arm"`
	StepsByArm               map[string]int64 `json:"steps_by_arm"`
	// GPUClients are, per GPU, the processes with a CUDA context or GPU
	// work on it: who shared the GPU, whatever PROCESSES lists.
	GPUClients []GPUClient `json:"gpu_clients"`
}

// GPUClient is one process on one GPU.
type GPUClient struct {
	GPU      int64   `json:"gpu"`
	Pid      int64   `json:"pid"`
	Process  string  `json:"process"`
	Contexts []int64 `json:"contexts"` // its CUDA context ids on the GPU (per process)
	BusyNs   int64   `json:"busy_ns"`  // union of its GPU work on the GPU; 0 = a context without work
}

// ProvenanceRow is one input's provenance, manifest and evidence, as the
// JSON contract and provenance.parquet carry it.
type ProvenanceRow struct {
	File       string         `json:"file"`
	Provenance *Provenance    `json:"provenance"`
	Manifest   map[string]any `json:"manifest"`
	Evidence   Evidence       `json:"evidence"`
	Mismatches []string       `json:"mismatches"`
	// Claims are the manifest's statements the evidence is checked against,
	// extracted from the verbatim manifest; nil without a manifest.
	Claims *ManifestClaims `json:"claims"`
}

// ManifestClaims digests what a run manifest says about the run.
type ManifestClaims struct {
	CUDAGraphRequested     *bool          `json:"cuda_graph_requested"`
	CUDAGraphEnabled       *bool          `json:"cuda_graph_enabled"`
	CUDAGraphDisableReason *string        `json:"cuda_graph_disable_reason"`
	CUDAProcessSharing     *string        `json:"cuda_process_sharing"` // "mps", or null for none
	MPSServerPid           *string        `json:"mps_server_pid"`
	EffectiveK             any            `json:"effective_k"`
	Arms                   []string       `json:"arms"`
	StepsByArm             map[string]int `json:"steps_by_arm"` // Σ steps of the manifest's blocks
	GPU                    map[string]any `json:"gpu"`
	Versions               map[string]any `json:"versions"`
}

// buildEvidence derives Evidence from a file's result and checks the
// manifest's claims against it.
func buildEvidence(fr *FileResult) ProvenanceRow {
	ev := Evidence{GraphLaunchesByArm: map[string]int64{}, StepsByArm: map[string]int64{}}
	in := fr.Result.Inputs[0]
	ev.CrossProcessGPUOverlapNs = in.CrossProcessOverlapNs
	ev.MPSActive = in.CrossProcessOverlapNs > 0
	ev.GPUProcesses = in.GPUUse
	if ev.GPUProcesses == nil {
		ev.GPUProcesses = []phases.GPUUse{}
	}
	for _, p := range fr.Info.MPSProcesses {
		ev.MPSProcessesSeen = append(ev.MPSProcessesSeen, fmt.Sprintf("%d %s", p.Pid, p.Name))
	}
	if ev.MPSProcessesSeen == nil {
		ev.MPSProcessesSeen = []string{}
	}
	st := fr.Result.InstanceStore()
	for i := range st.Len() {
		if st.IsStep(i) {
			arm := st.Arm(i)
			ev.GraphLaunchesByArm[arm] += st.Metric(i, phases.GraphLaunches)
			ev.StepsByArm[arm]++
		}
	}
	if fr.Info.CUDAContexts == nil {
		fr.Info.CUDAContexts = []CUDAContext{}
	}
	ev.GPUClients = gpuClients(fr.Info, in.GPUUse)
	row := ProvenanceRow{File: fr.Path, Provenance: fr.Info, Manifest: fr.Manifest, Evidence: ev, Mismatches: []string{}}
	if fr.Manifest != nil {
		row.Claims = manifestClaims(fr.Manifest)
	}
	row.Mismatches = mismatches(fr, ev)
	return row
}

// mismatches lists manifest claims the trace contradicts.
func mismatches(fr *FileResult, ev Evidence) []string {
	out := []string{}
	m := fr.Manifest
	if m == nil {
		return out
	}
	out = append(out, claimMismatches(fr, ev)...)
	multiProc := false
	for _, g := range ev.GPUProcesses {
		if len(g.Pids) >= 2 {
			multiProc = true
		}
	}
	if v, ok := LookupKey(m, "training.cuda_process_sharing"); ok {
		switch {
		case v == "mps" && multiProc && !ev.MPSActive:
			out = append(out, "manifest says cuda_process_sharing=mps, but kernels of the processes never overlapped on the GPU: MPS was not in effect")
		case v != "mps" && ev.MPSActive:
			out = append(out, fmt.Sprintf("manifest says cuda_process_sharing=%s, but kernels of different processes overlapped for %d ns on one GPU, which only MPS allows", v, ev.CrossProcessGPUOverlapNs))
		}
	}
	if v, ok := LookupKey(m, "runtime_manifest.backend_diagnostics.cuda_graph.enabled"); ok && v == "true" {
		arms := make([]string, 0, len(ev.StepsByArm))
		for a := range ev.StepsByArm {
			arms = append(arms, a)
		}
		slices.Sort(arms)
		var total int64
		for _, a := range arms {
			total += ev.GraphLaunchesByArm[a]
		}
		if total == 0 && len(arms) > 0 {
			out = append(out, "manifest says cuda_graph enabled, but no arm's steps launched a CUDA graph")
		}
		for _, a := range arms {
			if strings.Contains(a, "graph") && ev.GraphLaunchesByArm[a] == 0 {
				out = append(out, fmt.Sprintf("arm %q is named for CUDA graphs and cuda_graph is enabled, but its steps launched no graph", a))
			}
		}
	}
	return out
}

// Mismatches lists the manifest claims each input's trace contradicts,
// prefixed with the input, for commands that print them as warnings.
func Mismatches(files []*FileResult) []string {
	out := []string{}
	for _, fr := range files {
		if fr.Result == nil || fr.Info == nil {
			continue
		}
		for _, m := range buildEvidence(fr).Mismatches {
			out = append(out, fr.Path+": "+m)
		}
	}
	return out
}

// MismatchWarnings lists the document's mismatches, prefixed with the input:
// the text view prints each on stderr.
func (d *Doc) MismatchWarnings() []string {
	out := []string{}
	for _, p := range d.Provenance {
		for _, m := range p.Mismatches {
			out = append(out, p.File+": "+m)
		}
	}
	return out
}

// readCUDAContexts reads the processes' CUDA contexts and maps each to its
// physical GPU, ordered by (pid, device, context); empty when the export
// lacks the table.
func readCUDAContexts(f *nsys.File) ([]CUDAContext, error) {
	out := []CUDAContext{}
	for _, c := range []string{"processId", "deviceId", "contextId"} {
		if !f.HasColumn(nsys.TableCUDAContexts, c) {
			return out, nil
		}
	}
	devs, err := f.CUDADevices()
	if err != nil {
		return nil, err
	}
	gpuOf := map[[2]int64]int64{}
	for _, d := range devs {
		gpuOf[[2]int64{d.Pid, d.CUDAID}] = d.GPUID
	}
	rows, err := f.CUDAContexts()
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		x := CUDAContext{Pid: r.Pid, DeviceID: r.DeviceID, ContextID: r.ContextID, GPU: r.DeviceID}
		if g, ok := gpuOf[[2]int64{r.Pid, r.DeviceID}]; ok {
			x.GPU = g
		}
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b CUDAContext) int {
		return cmp.Or(cmp.Compare(a.Pid, b.Pid), cmp.Compare(a.DeviceID, b.DeviceID), cmp.Compare(a.ContextID, b.ContextID))
	})
	return out, nil
}

// gpuClients joins the contexts with the GPU work per process and GPU.
func gpuClients(p *Provenance, use []phases.GPUUse) []GPUClient {
	names := map[int64]string{}
	for _, pr := range p.Processes {
		names[pr.Pid] = pr.Name
	}
	type key struct{ gpu, pid int64 }
	byKey := map[key]*GPUClient{}
	var keys []key
	get := func(gpu, pid int64) *GPUClient {
		k := key{gpu, pid}
		if c, ok := byKey[k]; ok {
			return c
		}
		c := &GPUClient{GPU: gpu, Pid: pid, Process: names[pid], Contexts: []int64{}}
		byKey[k] = c
		keys = append(keys, k)
		return c
	}
	for _, x := range p.CUDAContexts {
		c := get(x.GPU, x.Pid)
		if !slices.Contains(c.Contexts, x.ContextID) {
			c.Contexts = append(c.Contexts, x.ContextID)
		}
	}
	for _, u := range use {
		for i, pid := range u.Pids {
			get(u.GPU, pid).BusyNs = u.BusyNs[i]
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.gpu != b.gpu {
			return int(a.gpu - b.gpu)
		}
		return int(a.pid - b.pid)
	})
	out := make([]GPUClient, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out
}

// manifestClaims extracts the checked statements of a run manifest
// (collector-run-manifest/1 and any manifest with the same keys).
func manifestClaims(m map[string]any) *ManifestClaims {
	c := &ManifestClaims{StepsByArm: map[string]int{}, Arms: []string{}}
	boolAt := func(key string) *bool {
		if v, ok := lookupAny(m, key); ok {
			if b, ok := v.(bool); ok {
				return &b
			}
		}
		return nil
	}
	strAt := func(keys ...string) *string {
		for _, key := range keys {
			if v, ok := lookupAny(m, key); ok && v != nil {
				s := fmt.Sprint(v)
				return &s
			}
		}
		return nil
	}
	c.CUDAGraphRequested = boolAt("runtime_manifest.backend_diagnostics.cuda_graph.requested")
	c.CUDAGraphEnabled = boolAt("runtime_manifest.backend_diagnostics.cuda_graph.enabled")
	c.CUDAGraphDisableReason = strAt("runtime_manifest.backend_diagnostics.cuda_graph.disable_reason")
	c.CUDAProcessSharing = strAt("training.cuda_process_sharing", "runtime_manifest.cuda_process_sharing.mode")
	c.MPSServerPid = strAt("runtime_manifest.cuda_process_sharing.mps_server_pid")
	c.EffectiveK, _ = lookupAny(m, "effective_K")
	if v, ok := m["arms"].([]any); ok {
		for _, a := range v {
			c.Arms = append(c.Arms, fmt.Sprint(a))
		}
	}
	if v, ok := m["blocks"].([]any); ok {
		for _, b := range v {
			bm, ok := b.(map[string]any)
			if !ok {
				continue
			}
			if n, ok := bm["steps"].(float64); ok {
				c.StepsByArm[fmt.Sprint(bm["arm"])] += int(n)
			}
		}
	}
	c.GPU, _ = m["gpu"].(map[string]any)
	c.Versions, _ = m["versions"].(map[string]any)
	return c
}

// lookupAny walks a dotted key through a decoded JSON document.
func lookupAny(doc map[string]any, key string) (any, bool) {
	var cur any = doc
	for _, part := range strings.Split(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// normUUID compares GPU UUIDs with or without nvidia-smi's "GPU-" prefix.
func normUUID(s string) string {
	return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "gpu-")
}

// claimMismatches checks the manifest's GPU, graph and arm claims against
// the trace.
func claimMismatches(fr *FileResult, ev Evidence) []string {
	var out []string
	c := manifestClaims(fr.Manifest)
	if g := c.GPU; g != nil && fr.Info != nil && len(fr.Info.GPUs) > 0 {
		if u, ok := g["uuid"].(string); ok && u != "" {
			found := false
			var have []string
			for _, x := range fr.Info.GPUs {
				have = append(have, x.UUID)
				found = found || normUUID(x.UUID) == normUUID(u)
			}
			if !found {
				out = append(out, fmt.Sprintf("manifest says GPU %s, but the trace was recorded on %s", u, strings.Join(have, ", ")))
			}
		}
		if d, ok := g["driver"].(string); ok && d != "" && fr.Info.DriverVersion != "" && d != fr.Info.DriverVersion {
			out = append(out, fmt.Sprintf("manifest says driver %s, but the trace says %s", d, fr.Info.DriverVersion))
		}
	}
	var graphs int64
	for _, n := range ev.GraphLaunchesByArm {
		graphs += n
	}
	if c.CUDAGraphEnabled != nil && !*c.CUDAGraphEnabled && graphs > 0 {
		out = append(out, fmt.Sprintf("manifest says cuda_graph is not enabled, but the steps launched %d CUDA %s", graphs, plural.Of(graphs, "graph", "graphs")))
	}
	if c.CUDAGraphRequested != nil && *c.CUDAGraphRequested && c.CUDAGraphEnabled != nil && !*c.CUDAGraphEnabled {
		reason := "no reason given"
		if c.CUDAGraphDisableReason != nil {
			reason = *c.CUDAGraphDisableReason
		}
		out = append(out, fmt.Sprintf("cuda_graph was requested but not enabled (%s): an arm meant to replay graphs ran eagerly", reason))
	}
	if c.CUDAProcessSharing != nil && *c.CUDAProcessSharing == "mps" && fr.Info != nil && len(fr.Info.MPSProcesses) == 0 {
		out = append(out, "manifest says cuda_process_sharing=mps, but no MPS daemon (nvidia-cuda-mps-*) is among the trace's processes")
	}
	// Arms and steps against the manifest's blocks. Arm labels may carry a
	// file arm (--arm, --arm-key) or replace the NVTX arm with it: arms are
	// compared by name only when every arm of the trace is one the manifest
	// lists, steps in total otherwise.
	if len(c.StepsByArm) == 0 || len(ev.StepsByArm) == 0 {
		return out
	}
	byName := true
	var traceSteps, manSteps int64
	for a, n := range ev.StepsByArm {
		byName = byName && slices.Contains(c.Arms, a)
		traceSteps += n
	}
	for _, n := range c.StepsByArm {
		manSteps += int64(n)
	}
	if !byName {
		if traceSteps != manSteps {
			out = append(out, fmt.Sprintf("manifest's blocks hold %d %s, the trace's arm blocks %d", manSteps, plural.Of(manSteps, "step", "steps"), traceSteps))
		}
		return out
	}
	for _, a := range c.Arms {
		if _, ok := ev.StepsByArm[a]; !ok {
			out = append(out, fmt.Sprintf("manifest lists arm %q, but the trace has no step in an arm block of that name", a))
		}
	}
	for _, a := range slices.Sorted(maps.Keys(c.StepsByArm)) {
		if n, ok := ev.StepsByArm[a]; ok && n != int64(c.StepsByArm[a]) {
			out = append(out, fmt.Sprintf("manifest's blocks of arm %q hold %d %s, the trace %d", a, c.StepsByArm[a], plural.Of(c.StepsByArm[a], "step", "steps"), n))
		}
	}
	return out
}
