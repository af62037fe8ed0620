package analysis

import (
	"fmt"
	"slices"
	"strings"

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
	if v, ok := nsys.Lookup(env, "CudaDriverVersion"); ok {
		p.CUDADriverVersion = v
		var n int
		if _, err := fmt.Sscan(v, &n); err == nil && n > 0 {
			p.CUDADriverVersion = fmt.Sprintf("%d.%d", n/1000, (n%1000)/10)
		}
	}
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
}

// ProvenanceRow is one input's provenance, manifest and evidence, as the
// JSON contract and provenance.parquet carry it.
type ProvenanceRow struct {
	File       string         `json:"file"`
	Provenance *Provenance    `json:"provenance"`
	Manifest   map[string]any `json:"manifest"`
	Evidence   Evidence       `json:"evidence"`
	Mismatches []string       `json:"mismatches"`
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
	for _, x := range fr.Result.Instances {
		if x.IsStep {
			ev.GraphLaunchesByArm[x.Arm] += x.M[phases.GraphLaunches]
			ev.StepsByArm[x.Arm]++
		}
	}
	row := ProvenanceRow{File: fr.Path, Provenance: fr.Info, Manifest: fr.Manifest, Evidence: ev, Mismatches: []string{}}
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
