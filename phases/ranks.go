package phases

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nsysphase/nsysphase/nsys"
)

// Ranks of a distributed job (docs/guide.md, "Ranks"): the processes of one
// export that ran communication (NCCL kernels, or traced MPI collectives),
// each with its communication measured on its own GPUs; or, in an export
// whose recorded environment names its rank and that traced no
// communication, the process that ran the GPU work. Which rank a
// process is, and where that came from, is settled by AssignRanks once all
// inputs are read.

// Rank id sources, in the order they are preferred.
const (
	RankFromEnv      = "environment"  // the rank variable of the recorded process's environment
	RankFromManifest = "run manifest" // the run manifest's ranks list ({"rank": R, "pid": P})
	RankFromNVTX     = "nvtx"         // an NVTX name such as "MPI Rank 3"
	RankFromOrder    = "process order"
)

// rankEnvVars are the environment variables that hold a process's rank in
// the job, most specific first (Open MPI, PMI/PMIx (MPICH, Cray PALS),
// torchrun, Slurm).
var rankEnvVars = []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "PALS_RANKID", "RANK", "SLURM_PROCID"}

// localRankEnvVars hold the rank within the node.
var localRankEnvVars = []string{"OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK", "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID", "SLURM_LOCALID"}

// Collective is one arrival of a rank at a collective: an NCCL kernel on
// its GPU, or a traced MPI collective call on its host.
type Collective struct {
	Name       string
	Start, End int64 // ns on the export's clock
	Device     int64 // CUDA device (NCCL kernels); -1 for MPI calls
	// ExposedNs is the part of the kernel not overlapped by the process's
	// own compute (non-NCCL) kernels on the same device; 0 for MPI calls.
	ExposedNs int64
	// Tid and CallStart locate the host call that launched the kernel
	// (the MPI call itself); CallStart is -1 when the launch is unknown.
	Tid       int64
	CallStart int64
}

// RankProcess is one process of an export that took part in communication.
// It travels as JSON (without its collectives) in a dataset's analysis
// context, so that --from rebuilds the ranks section.
type RankProcess struct {
	File string `json:"file"`
	Pid  int64  `json:"pid"`
	Name string `json:"name"` // process name ("" when PROCESSES lacks it)
	Host string `json:"host"` // TARGET_INFO_SYSTEM_ENV Hostname ("" when not recorded)
	// Rank and RankSource are set by AssignRanks; EnvRank/EnvVar are the
	// environment's rank when the export records it for this process.
	Rank       int    `json:"rank"`
	RankSource string `json:"rank_source"`
	EnvRank    int    `json:"env_rank"`
	EnvVar     string `json:"env_var"`
	LocalRank  int    `json:"local_rank"` // -1 unknown
	NVTXRank   int    `json:"nvtx_rank"`  // -1 unknown
	// ManifestRank is the rank the run manifest gives the process's pid
	// (set by the caller, which reads the manifest); -1 unknown.
	ManifestRank int `json:"manifest_rank"`
	// SessionStartUTC is the export's session start (Unix ns, 0 unknown):
	// the clock that puts ranks of different exports on one timeline.
	SessionStartUTC int64   `json:"session_start_utc_ns"`
	Devices         []int64 `json:"cuda_devices"`    // CUDA devices of its kernels, ascending
	Kernels         int64   `json:"kernels"`         // kernels of the process
	KernelNs        int64   `json:"kernel_ns"`       // Σ kernel durations
	NCCLKernels     int64   `json:"nccl_kernels"`    // kernels whose name starts with "nccl"
	NCCLNs          int64   `json:"nccl_ns"`         // Σ NCCL kernel durations
	NCCLExposedNs   int64   `json:"nccl_exposed_ns"` // Σ per NCCL kernel of its time outside the process's compute kernels on the same device
	// Kind is "nccl" when the collectives are NCCL kernels, "mpi" when they
	// are MPI calls (no NCCL kernel in the process), "" when neither (a
	// rank named by the environment, without traced communication).
	Kind        string       `json:"kind"`
	Collectives []Collective `json:"-"` // in start order
}

// IsNCCL reports whether a kernel name is NCCL's (ncclKernel_…,
// ncclDevKernel_…).
func IsNCCL(name string) bool { return strings.HasPrefix(name, "nccl") }

// mpiCollective reports whether an MPI call is a collective every rank
// enters (the arrival that a straggler delays).
func mpiCollective(name string) bool {
	switch strings.TrimPrefix(strings.ToLower(name), "pmpi_") {
	case "mpi_allreduce", "mpi_reduce", "mpi_bcast", "mpi_barrier", "mpi_allgather", "mpi_allgatherv", "mpi_alltoall",
		"mpi_alltoallv", "mpi_reduce_scatter", "mpi_reduce_scatter_block", "mpi_gather", "mpi_gatherv", "mpi_scatter",
		"mpi_scatterv", "mpi_scan", "mpi_exscan", "mpi_iallreduce", "mpi_ibarrier", "mpi_ibcast":
		return true
	}
	return false
}

// RankCandidate reports whether an export may hold ranks worth reading:
// two or more processes ran GPU work, or the recorded process's
// environment names its rank. It reads nothing but the small capture table.
func RankCandidate(f *nsys.File, res *Result) bool {
	pids := map[int64]bool{}
	for _, in := range res.Inputs {
		for _, g := range in.GPUUse {
			for _, p := range g.Pids {
				pids[p] = true
			}
		}
	}
	if len(pids) >= 2 {
		return true
	}
	if f.HasTable(nsys.TableMPIOther) || f.HasTable(nsys.TableMPICollectives) {
		return true
	}
	capture, err := f.Capture()
	if err != nil {
		return false
	}
	_, _, ok := envRank(capture, rankEnvVars)
	return ok
}

// envRank finds the first of vars in the recorded process's environment
// (META_DATA_CAPTURE PROCESS_0:ENVIRONMENT_VARIABLE rows, NAME="VALUE").
func envRank(capture []nsys.KeyValue, vars []string) (rank int, name string, ok bool) {
	var entries []string
	for _, kv := range capture {
		if kv.Name == "PROCESS_0:ENVIRONMENT_VARIABLE" {
			entries = append(entries, kv.Value)
		}
	}
	return entryRank(entries, vars)
}

// entryRank finds the first of vars among NAME=VALUE entries (a value may
// be quoted).
func entryRank(entries, vars []string) (rank int, name string, ok bool) {
	env := map[string]string{}
	for _, e := range entries {
		if k, v, found := strings.Cut(e, "="); found {
			env[k] = strings.Trim(v, `"`)
		}
	}
	for _, name := range vars {
		if v, ok := env[name]; ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
				return n, name, true
			}
		}
	}
	return 0, "", false
}

type pidCorr struct{ pid, corr int64 }

// ReadRanks reads the processes of f that communicate, with their NCCL
// kernel time, exposed communication and collective arrivals. The
// environment rank applies when the export holds one such process (one
// export per rank); AssignRanks numbers the rest.
func ReadRanks(f *nsys.File) ([]RankProcess, error) {
	mpi := f.HasTable(nsys.TableMPIOther) || f.HasTable(nsys.TableMPICollectives)
	blockRanks := -1 // envBlockRanks, once read
	if !mpi {
		// Most single-job exports: no NCCL kernel name and no rank in the
		// environment, nothing to read.
		nccl, err := f.HasStringPrefix("nccl")
		if err != nil {
			return nil, err
		}
		if !nccl {
			capture, err := f.Capture()
			if err != nil {
				return nil, err
			}
			if _, _, ok := envRank(capture, rankEnvVars); !ok {
				if blockRanks, err = envBlockRanks(f); err != nil || blockRanks < 2 {
					return nil, err
				}
			}
		}
	}
	strs, err := f.Strings()
	if err != nil {
		return nil, err
	}
	rr := &rankReader{f: f, strs: strs, compute: map[rankDevice][]gpuSpan{}, procs: map[int64]*RankProcess{}, ncclCorr: map[pidCorr]int{},
		blockRanks: blockRanks}
	if err := rr.readKernels(); err != nil {
		return nil, err
	}
	rr.exposeNCCL()
	if err := rr.readLaunches(); err != nil {
		return nil, err
	}
	if err := rr.readMPI(); err != nil {
		return nil, err
	}
	out, err := rr.communicating()
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	if err := rankProvenance(f, strs, mpi, out); err != nil {
		return nil, err
	}
	return out, nil
}

// rankDevice is a process's device.
type rankDevice struct{ pid, dev int64 }

// gpuSpan is a kernel's (or a union of kernels') time on a device.
type gpuSpan struct{ s, e int64 }

// rankReader gathers each process's kernels and collectives.
type rankReader struct {
	f        *nsys.File
	strs     *nsys.Strings
	compute  map[rankDevice][]gpuSpan
	procs    map[int64]*RankProcess
	ncclCorr map[pidCorr]int // → index into the process's Collectives
	// blockRanks is envBlockRanks of the export, -1 until read.
	blockRanks int
}

// envBlockRanks counts the distinct ranks named by the process
// environments an export keeps (one per profiled process, in StringIds):
// a per-node export of a torchrun or MPI job holds one per rank, each with
// WORLD_SIZE and its rank variable.
func envBlockRanks(f *nsys.File) (int, error) {
	blocks, err := f.EnvironmentBlocks("WORLD_SIZE")
	if err != nil {
		return 0, err
	}
	ranks := map[int]bool{}
	for _, b := range blocks {
		if r, _, ok := entryRank(b, rankEnvVars); ok {
			ranks[r] = true
		}
	}
	return len(ranks), nil
}

// get is process pid's entry.
func (rr *rankReader) get(pid int64) *RankProcess {
	p := rr.procs[pid]
	if p == nil {
		p = &RankProcess{File: rr.f.Path, Pid: pid, EnvRank: -1, LocalRank: -1, NVTXRank: -1, ManifestRank: -1}
		rr.procs[pid] = p
	}
	return p
}

// readKernels counts each process's kernels, keeping its NCCL kernels as
// collectives and its compute kernels' spans per device.
func (rr *rankReader) readKernels() error {
	for k, err := range rr.f.Kernels() {
		if err != nil {
			return err
		}
		pid := nsys.Pid(k.GlobalPid)
		name := ""
		if k.ShortName >= 0 {
			name = rr.strs.Name(k.ShortName)
		}
		if name == "" {
			name = rr.strs.Name(k.DemangledName)
		}
		p := rr.get(pid)
		p.Kernels++
		p.KernelNs += k.End - k.Start
		if !slices.Contains(p.Devices, k.DeviceID) {
			p.Devices = append(p.Devices, k.DeviceID)
		}
		if IsNCCL(name) {
			p.NCCLKernels++
			p.NCCLNs += k.End - k.Start
			if k.CorrelationID != 0 {
				rr.ncclCorr[pidCorr{pid, k.CorrelationID}] = len(p.Collectives)
			}
			p.Collectives = append(p.Collectives, Collective{Name: name, Start: k.Start, End: k.End, Device: k.DeviceID, CallStart: -1})
			continue
		}
		dk := rankDevice{pid, k.DeviceID}
		rr.compute[dk] = append(rr.compute[dk], gpuSpan{k.Start, k.End})
	}
	return nil
}

// exposeNCCL sets each NCCL kernel's exposed time: its duration less its
// overlap with the union of the process's compute kernels on the same
// device.
func (rr *rankReader) exposeNCCL() {
	unions := map[rankDevice][]gpuSpan{}
	for dk, ss := range rr.compute {
		slices.SortFunc(ss, func(a, b gpuSpan) int { return cmp.Or(cmp.Compare(a.s, b.s), cmp.Compare(a.e, b.e)) })
		var u []gpuSpan
		for _, s := range ss {
			if n := len(u); n > 0 && s.s <= u[n-1].e {
				u[n-1].e = max(u[n-1].e, s.e)
				continue
			}
			u = append(u, s)
		}
		unions[dk] = u
	}
	for _, p := range rr.procs {
		for i := range p.Collectives {
			c := &p.Collectives[i]
			u := unions[rankDevice{p.Pid, c.Device}]
			// first union span that ends after the kernel starts
			j, _ := slices.BinarySearchFunc(u, c.Start, func(s gpuSpan, t int64) int {
				if s.e <= t {
					return -1
				}
				return 1
			})
			covered := int64(0)
			for ; j < len(u) && u[j].s < c.End; j++ {
				covered += min(u[j].e, c.End) - max(u[j].s, c.Start)
			}
			c.ExposedNs = c.End - c.Start - covered
			p.NCCLExposedNs += c.ExposedNs
		}
		if len(p.Collectives) > 0 {
			p.Kind = "nccl"
		}
	}
}

// readLaunches finds the host calls that launched the NCCL kernels.
func (rr *rankReader) readLaunches() error {
	if len(rr.ncclCorr) == 0 {
		return nil
	}
	for c, err := range rr.f.APICalls() {
		if err != nil {
			return err
		}
		pid := nsys.Pid(c.GlobalTid)
		if i, ok := rr.ncclCorr[pidCorr{pid, c.CorrelationID}]; ok {
			col := &rr.procs[pid].Collectives[i]
			col.Tid, col.CallStart = nsys.Tid(c.GlobalTid), c.Start
		}
	}
	return nil
}

// readMPI reads the MPI collectives of the processes without NCCL kernels.
func (rr *rankReader) readMPI() error {
	f := rr.f
	for _, t := range []string{nsys.TableMPIOther, nsys.TableMPICollectives} {
		if !f.HasTable(t) || !f.HasColumn(t, "textId") {
			continue
		}
		for c, err := range f.MPICalls(t) {
			if err != nil {
				return err
			}
			name := rr.strs.Name(c.TextID)
			if !mpiCollective(name) {
				continue
			}
			p := rr.get(nsys.Pid(c.GlobalTid))
			if p.Kind == "nccl" {
				continue
			}
			p.Kind = "mpi"
			p.Collectives = append(p.Collectives, Collective{Name: name, Start: c.Start, End: c.End, Device: -1, Tid: nsys.Tid(c.GlobalTid), CallStart: c.Start})
		}
	}
	return nil
}

// communicating is the processes with collectives in pid order; with
// none, the processes that ran GPU work when the export's process
// environments name as many ranks (one export per node of a job without
// traced communication), else, with a rank in the recorded environment,
// the one with the most GPU time.
func (rr *rankReader) communicating() ([]RankProcess, error) {
	var out, gpu []RankProcess
	var quiet *RankProcess // the process with the most GPU time, of those without communication
	for _, p := range rr.procs {
		slices.Sort(p.Devices)
		if p.Kind == "" {
			if p.Kernels > 0 {
				gpu = append(gpu, *p)
			}
			if quiet == nil || p.KernelNs > quiet.KernelNs || (p.KernelNs == quiet.KernelNs && p.Pid < quiet.Pid) {
				quiet = p
			}
			continue
		}
		slices.SortStableFunc(p.Collectives, func(a, b Collective) int { return cmp.Compare(a.Start, b.Start) })
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b RankProcess) int { return cmp.Compare(a.Pid, b.Pid) })
	if len(out) == 0 && len(gpu) >= 2 {
		if rr.blockRanks < 0 {
			n, err := envBlockRanks(rr.f)
			if err != nil {
				return nil, err
			}
			rr.blockRanks = n
		}
		if rr.blockRanks == len(gpu) {
			// Which environment is whose is not recorded: the ranks are
			// numbered by the run manifest or by process order (AssignRanks).
			slices.SortFunc(gpu, func(a, b RankProcess) int { return cmp.Compare(a.Pid, b.Pid) })
			return gpu, nil
		}
	}
	if len(out) == 0 && quiet != nil {
		// No traced communication: the environment's rank is the process
		// that ran the GPU work (a rank of an OpenMP-offload or CUDA job
		// without MPI trace or NCCL); its rank view compares steps alone.
		if capture, err := rr.f.Capture(); err == nil {
			if _, _, ok := envRank(capture, rankEnvVars); ok {
				out = append(out, *quiet)
			}
		}
	}
	return out, nil
}

// rankProvenance sets out's host, session start, process names and the
// ranks that the environment and the MPI trace name.
func rankProvenance(f *nsys.File, strs *nsys.Strings, mpi bool, out []RankProcess) error {
	env, err := f.SystemEnv()
	if err != nil {
		return err
	}
	host, _ := nsys.Lookup(env, "Hostname")
	start, _, err := f.SessionStartUTC()
	if err != nil {
		return err
	}
	names := map[int64]string{}
	if ps, err := f.Processes(); err == nil {
		for _, p := range ps {
			names[p.Pid] = p.Name
		}
	}
	capture, err := f.Capture()
	if err != nil {
		return err
	}
	for i := range out {
		out[i].Host, out[i].SessionStartUTC, out[i].Name = host, start, names[out[i].Pid]
	}
	if len(out) == 1 {
		// One communicating process: the recorded process (PROCESS_0) is it
		// or its launcher, whose environment the rank inherited.
		if r, name, ok := envRank(capture, rankEnvVars); ok {
			out[0].EnvRank, out[0].EnvVar = r, name
		}
		if r, _, ok := envRank(capture, localRankEnvVars); ok {
			out[0].LocalRank = r
		}
	}
	if mpi { // the MPI trace names each rank's thread "MPI Rank N"
		nvtx, err := nvtxRanks(f, strs)
		if err != nil {
			return err
		}
		for i := range out {
			if r, ok := nvtx[out[i].Pid]; ok {
				out[i].NVTXRank = r
			}
		}
	}
	return nil
}

// nvtxRanks reads ranks that the program (or the MPI trace) named through
// NVTX: a thread or category name "MPI Rank N" or "Rank N", per process.
func nvtxRanks(f *nsys.File, strs *nsys.Strings) (map[int64]int, error) {
	out := map[int64]int{}
	for e, err := range f.NVTXEvents() {
		if err != nil {
			return nil, err
		}
		text := e.Text
		if e.HasTextID {
			text = strs.Name(e.TextID)
		}
		if nsys.IsRange(e.EventType) || !strings.Contains(text, "Rank ") {
			continue
		}
		t := strings.TrimPrefix(text, "MPI ")
		rest, ok := strings.CutPrefix(t, "Rank ")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil && n >= 0 {
			out[nsys.Pid(e.GlobalTid)] = n
		}
	}
	return out, nil
}

// AssignRanks numbers the ranks of all inputs (ps in input order, each
// export's processes by pid) and says where each id came from: the
// environment when every process has one and they are distinct, else the
// run manifest, else NVTX names under the same condition, else process order (each export's
// processes by their first CUDA device, then pid; exports in input order).
func AssignRanks(ps []RankProcess) {
	distinct := func(get func(p *RankProcess) int) bool {
		seen := map[int]bool{}
		for i := range ps {
			r := get(&ps[i])
			if r < 0 || seen[r] {
				return false
			}
			seen[r] = true
		}
		return true
	}
	switch {
	case distinct(func(p *RankProcess) int { return p.EnvRank }):
		for i := range ps {
			ps[i].Rank, ps[i].RankSource = ps[i].EnvRank, RankFromEnv+" "+ps[i].EnvVar
		}
	case distinct(func(p *RankProcess) int { return p.ManifestRank }):
		for i := range ps {
			ps[i].Rank, ps[i].RankSource = ps[i].ManifestRank, RankFromManifest
		}
	case distinct(func(p *RankProcess) int { return p.NVTXRank }):
		for i := range ps {
			ps[i].Rank, ps[i].RankSource = ps[i].NVTXRank, RankFromNVTX
		}
	default:
		idx := make([]int, len(ps))
		for i := range idx {
			idx[i] = i
		}
		fileOrder := map[string]int{}
		for _, p := range ps {
			if _, ok := fileOrder[p.File]; !ok {
				fileOrder[p.File] = len(fileOrder)
			}
		}
		firstDev := func(p *RankProcess) int64 {
			if len(p.Devices) == 0 {
				return 1 << 62
			}
			return p.Devices[0]
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			pa, pb := &ps[a], &ps[b]
			return cmp.Or(cmp.Compare(fileOrder[pa.File], fileOrder[pb.File]), cmp.Compare(firstDev(pa), firstDev(pb)), cmp.Compare(pa.Pid, pb.Pid))
		})
		for r, i := range idx {
			ps[i].Rank, ps[i].RankSource = r, RankFromOrder+" (exports in input order, then CUDA device, then pid)"
		}
	}
	slices.SortStableFunc(ps, func(a, b RankProcess) int { return cmp.Compare(a.Rank, b.Rank) })
}

// String names a rank process: "rank 1 (pid 691, FILE)".
func (p *RankProcess) String() string {
	return fmt.Sprintf("rank %d (pid %d, %s)", p.Rank, p.Pid, p.File)
}
