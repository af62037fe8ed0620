package phases

import (
	"fmt"

	"github.com/nsysphase/nsysphase/nsys"
)

// Metric indexes the per-instance measurements. Every metric is an int64
// (ns, bytes or a count) that is always measured for an instance: a zero is a
// measured zero. Metrics that can be "not measured" live beside them as
// nullable fields of Instance.
type Metric int

// The built-in metrics, in column order (metricInfo declares each). The
// first seven partition wall time: wall = cpu_other + launch + sync +
// memcpy_api + alloc + other_api.
const (
	Wall Metric = iota
	CPUOther
	Launch
	SyncAPI
	MemcpyAPI
	Alloc
	OtherAPI
	APICalls
	Launches
	GraphLaunches
	HostSyncs
	AllocCalls
	KernelCount
	KernelSum
	GPUBusy
	Proj
	GPUOps
	GraphTraceNs
	QueueSum
	QueueMax
	H2DCount
	H2DBytes
	H2DNs
	D2HCount
	D2HBytes
	D2HNs
	D2DCount
	D2DBytes
	D2DNs
	P2PCount
	P2PBytes
	P2PNs
	PageableCopies
	PinnedCopies
	MemsetCount
	MemsetBytes
	MemsetNs
	OverlapOtherProcess
	OtherThreadKernelNs
	OtherThreadOps
	OtherProcessGPU
	GPUIdle
	SyncOwnGPU
	SyncOtherGPU
	SyncNoGPU
	OtherThreadSyncNs
	OtherThreadSyncs
	numBuiltin // the built-in metrics; Declare adds more after them
)

// metricInfo declares every built-in metric, indexed by it: the one place
// a metric's name, unit, meaning, source tables, additivity and columns are
// written (read through Info, so no caller can change them). absentMask,
// the (unannotated) row and both breakdown tables derive from it.
var metricInfo = [numBuiltin]MetricInfo{
	Wall:                {Name: "wall_ns", Unit: UnitNs, Additive: true, Default: 1, Short: "wall", Wide: 1, Doc: "range end − range start"},
	CPUOther:            {Name: "cpu_other_ns", Unit: UnitNs, Sources: fromAPI, Additive: true, Default: 2, Short: "cpu_other", Wide: 2, Doc: "wall − union of top-level CUDA API calls on the range's thread: Python/framework dispatch and host work"},
	Launch:              {Name: "launch_ns", Unit: UnitNs, Sources: fromAPI, Additive: true, Default: 3, Short: "launch", Wide: 3, Doc: "host time in kernel and graph launch calls"},
	SyncAPI:             {Name: "sync_ns", Unit: UnitNs, Sources: fromAPI, Additive: true, Default: 4, Short: "sync", Wide: 4, Doc: "host time in stream/device/event/context synchronize, synchronous copies and memsets, and pageable cudaMemcpyAsync"},
	MemcpyAPI:           {Name: "memcpy_api_ns", Unit: UnitNs, Sources: fromAPI, Additive: true, Default: 5, Short: "memcpy", Wide: 5, Doc: "host time in copy and memset enqueue calls that do not block"},
	Alloc:               {Name: "alloc_ns", Unit: UnitNs, Sources: fromAPI, Additive: true, Default: 6, Short: "alloc", Wide: 6, Doc: "host time in malloc/free of device, pinned host and pool memory"},
	OtherAPI:            {Name: "other_api_ns", Unit: UnitNs, Sources: fromAPI, Additive: true, Default: 7, Short: "other_api", Wide: 7, Doc: "host time in every other CUDA API call"},
	APICalls:            {Name: "api_calls", Unit: UnitCount, Sources: fromAPI, Additive: true, Doc: "top-level CUDA API calls on the range's thread"},
	Launches:            {Name: "launches", Unit: UnitCount, Sources: fromKernels, Additive: true, Wide: 10, Doc: "kernel and graph launch calls that produced GPU work"},
	GraphLaunches:       {Name: "graph_launches", Unit: UnitCount, Sources: fromAPI, Additive: true, Doc: "cudaGraphLaunch calls"},
	HostSyncs:           {Name: "host_syncs", Unit: UnitCount, Sources: fromAPI, Additive: true, Wide: 11, Doc: "API calls that made the host wait for the device (see sync_ns) plus cudaFree"},
	AllocCalls:          {Name: "alloc_calls", Unit: UnitCount, Sources: fromAPI, Additive: true, Doc: "allocation and free calls"},
	KernelCount:         {Name: "kernels", Unit: UnitCount, Sources: fromKernels, Additive: true, Doc: "kernels launched from the range's thread inside the range"},
	KernelSum:           {Name: "kernel_sum_ns", Unit: UnitNs, Sources: fromKernels, Additive: true, Wide: 9, Doc: "sum of those kernels' durations"},
	GPUBusy:             {Name: "gpu_busy_ns", Unit: UnitNs, Sources: fromKernels, Additive: false, Default: 8, Short: "gpu_busy", Wide: 8, Doc: "union of the intervals of the range's GPU ops (kernels, copies, memsets, graph records)"},
	Proj:                {Name: "proj_ns", Unit: UnitNs, Sources: fromKernels, Additive: false, Doc: "last GPU op end − first GPU op start (the vendor's projected time; includes idle gaps); 0 without ops"},
	GPUOps:              {Name: "gpu_ops", Unit: UnitCount, Sources: fromKernels, Additive: true, Doc: "distinct correlation ids with GPU work (a graph launch counts once)"},
	GraphTraceNs:        {Name: "graph_trace_ns", Unit: UnitNs, Sources: fromGraphTrace, Additive: true, Doc: "duration of whole-graph records (--cuda-graph-trace=graph); kernels of such graphs have no rows"},
	QueueSum:            {Name: "queue_sum_ns", Unit: UnitNs, Sources: fromKernels, Additive: true, Doc: "Σ max(0, op start − launching call end), first op of each graph launch only"},
	QueueMax:            {Name: "queue_max_ns", Unit: UnitNs, Sources: fromKernels, Additive: false, Doc: "largest such delay"},
	H2DCount:            {Name: "h2d_count", Unit: UnitCount, Sources: fromMemcpy, Additive: true, Doc: "host-to-device copies"},
	H2DBytes:            {Name: "h2d_bytes", Unit: UnitBytes, Sources: fromMemcpy, Additive: true, Doc: "bytes copied host to device"},
	H2DNs:               {Name: "h2d_ns", Unit: UnitNs, Sources: fromMemcpy, Additive: true, Doc: "GPU time of host-to-device copies"},
	D2HCount:            {Name: "d2h_count", Unit: UnitCount, Sources: fromMemcpy, Additive: true, Doc: "device-to-host copies"},
	D2HBytes:            {Name: "d2h_bytes", Unit: UnitBytes, Sources: fromMemcpy, Additive: true, Doc: "bytes copied device to host"},
	D2HNs:               {Name: "d2h_ns", Unit: UnitNs, Sources: fromMemcpy, Additive: true, Doc: "GPU time of device-to-host copies"},
	D2DCount:            {Name: "d2d_count", Unit: UnitCount, Sources: fromMemcpy, Additive: true, Doc: "device-to-device copies"},
	D2DBytes:            {Name: "d2d_bytes", Unit: UnitBytes, Sources: fromMemcpy, Additive: true, Doc: "bytes copied device to device"},
	D2DNs:               {Name: "d2d_ns", Unit: UnitNs, Sources: fromMemcpy, Additive: true, Doc: "GPU time of device-to-device copies"},
	P2PCount:            {Name: "p2p_count", Unit: UnitCount, Sources: fromMemcpy, Additive: true, Doc: "peer-to-peer copies"},
	P2PBytes:            {Name: "p2p_bytes", Unit: UnitBytes, Sources: fromMemcpy, Additive: true, Doc: "bytes copied peer to peer"},
	P2PNs:               {Name: "p2p_ns", Unit: UnitNs, Sources: fromMemcpy, Additive: true, Doc: "GPU time of peer-to-peer copies"},
	PageableCopies:      {Name: "pageable_copies", Unit: UnitCount, Sources: fromMemcpy, Additive: true, Doc: "H2D/D2H copies from or to pageable host memory"},
	PinnedCopies:        {Name: "pinned_copies", Unit: UnitCount, Sources: fromMemcpy, Additive: true, Doc: "H2D/D2H copies from or to pinned host memory"},
	MemsetCount:         {Name: "memsets", Unit: UnitCount, Sources: fromMemset, Additive: true, Doc: "memsets"},
	MemsetBytes:         {Name: "memset_bytes", Unit: UnitBytes, Sources: fromMemset, Additive: true, Doc: "bytes set"},
	MemsetNs:            {Name: "memset_ns", Unit: UnitNs, Sources: fromMemset, Additive: true, Doc: "GPU time of memsets"},
	OverlapOtherProcess: {Name: "overlap_other_process_ns", Unit: UnitNs, Sources: fromKernels, Additive: false, Doc: "time the range's GPU work ran while another process had GPU work on the same GPU (MPS or time slicing)"},
	OtherThreadKernelNs: {Name: "other_thread_kernel_ns", Unit: UnitNs, Sources: fromKernels, Additive: true, Doc: "kernel time launched during the range by other threads of the process (e.g. PyTorch's autograd thread); not in kernel_sum_ns"},
	OtherThreadOps:      {Name: "other_thread_ops", Unit: UnitCount, Sources: fromKernels, Additive: true, Doc: "GPU ops (distinct correlation ids) launched during the range by other threads of the process"},
	OtherProcessGPU:     {Name: "other_process_gpu_ns", Unit: UnitNs, Sources: fromKernels, Additive: false, Doc: "time inside the range during which the process's GPUs (see gpu_idle_ns) ran kernels, copies or memsets of other processes (union of their intervals, whether or not the process's own work ran too)"},
	GPUIdle:             {Name: "gpu_idle_ns", Unit: UnitNs, Sources: fromKernels, Additive: false, Doc: "time inside the range during which the process's GPUs ran no recorded work of any process; the process's GPUs are those on which its own GPU work (any thread) had started by the range's end"},
	SyncOwnGPU:          {Name: "sync_own_gpu_ns", Unit: UnitNs, Sources: fromKernels, Additive: false, Doc: "part of sync_ns during which the process's own GPU work (any thread) ran on its GPUs"},
	SyncOtherGPU:        {Name: "sync_other_gpu_ns", Unit: UnitNs, Sources: fromKernels, Additive: false, Doc: "part of sync_ns during which other processes' work ran on the process's GPUs and its own did not"},
	SyncNoGPU:           {Name: "sync_no_gpu_ns", Unit: UnitNs, Sources: fromKernels, Additive: false, Doc: "part of sync_ns during which the process's GPUs ran no recorded work (sync_own_gpu_ns + sync_other_gpu_ns + sync_no_gpu_ns = sync_ns); without MPS, typically time-slicing between processes' contexts"},
	OtherThreadSyncNs:   {Name: "other_thread_sync_ns", Unit: UnitNs, Sources: fromAPI, Additive: true, Doc: "time inside the range during which other threads of the process were blocked in calls counted as sync_ns would count them (union over threads; e.g. XLA runtime threads, PyTorch's autograd thread)"},
	OtherThreadSyncs:    {Name: "other_thread_syncs", Unit: UnitCount, Sources: fromAPI, Additive: true, Doc: "such blocking calls on other threads of the process that start inside the range"},
}

// WallParts are the six exclusive parts that sum to Wall for every instance
// (an array: callers get a copy).
func WallParts() [6]Metric { return [6]Metric{CPUOther, Launch, SyncAPI, MemcpyAPI, Alloc, OtherAPI} }

// SyncParts are the three exclusive parts that sum to SyncAPI for every
// instance: what the process's GPUs ran while the host waited.
func SyncParts() [3]Metric { return [3]Metric{SyncOwnGPU, SyncOtherGPU, SyncNoGPU} }

// MetricByName returns the metric with the given column name.
func MetricByName(name string) (Metric, bool) {
	return metricByName(name, NumMetrics())
}

// UnitID identifies one unit of replication of the statistics: an arm
// block of one export, or, for steps outside every arm block, one process
// of the export. It is rendered as text (String) only at the edges: the
// unit column of phase_instances, the statistics' unit labels.
type UnitID struct {
	File  string // the export, as the user named it
	Arm   string // the arm as segmentation labelled it (before merging relabels arms)
	Block int    // block index within the arm; 0 for a process unit
	Pid   int64  // the process of a unit outside arm blocks; 0 for a block
}

// String is the unit's label: "FILE#ARM block N", or "FILE#pid P" for a
// process unit.
func (u UnitID) String() string {
	if u.Pid != 0 {
		return fmt.Sprintf("%s#pid %d", u.File, u.Pid)
	}
	return fmt.Sprintf("%s#%s block %d", u.File, u.Arm, u.Block)
}

// Instance is one step or phase instance: one NVTX range a rule matched, on
// one thread, inside one step instance, inside one arm block.
type Instance struct {
	File       string
	Pid, Tid   int64
	Thread     string // thread name, "" when unnamed
	Arm        string // "<file-arm>/<nvtx-arm>", either part alone, or "" without arms
	Block      int    // block index within the arm (block=<i>, else time order); per file for file arms
	BlockStart int64  // start of the block (its arm range, or the file's first step), orders units
	Unit       UnitID // the statistics unit the instance belongs to
	Step       int    // step index within the block, from 0
	StepLabel  string // the step instance's own name when the step is a numbered family ("ProfilerStep#12"); "" otherwise
	Phase      string // phase name; for step rows, the step's name
	IsStep     bool
	Depth      int // 0 for steps, 1 for their children, …
	Start, End int64
	Warmup     bool // excluded from statistics (--skip-steps)
	// OtherThread marks a row of work another thread of the process did
	// during the step (PyTorch's autograd thread): it runs beside the
	// step's own phases, so it is not part of the step's wall.
	OtherThread bool
	M           [MaxMetrics]int64 // metrics 0 … NumMetrics()-1; the rest stay 0
	// Null marks metrics that were not measured (bit m for Metric m): their
	// source table was not recorded, or, in the (unannotated) row, they do
	// not split into parts (GPU busy time, projected span, largest queue).
	Null uint64

	// Nullable measurements (Has* false = not measured / not applicable).
	QueueMeanNs float64 // queue_sum_ns / ops with a queue delay; absent without GPU ops
	HasQueue    bool
	PhaseGapNs  int64 // steps only: wall not covered by any phase instance
	UnattrKerNs int64 // steps only: kernel time of the step outside every phase
	HasStepOnly bool
	// GPUStart is the start of the instance's first GPU op (the vendor's
	// projected start); with proj_ns it is the instance's GPU window, over
	// which its GPU metrics are averaged. HasGPUStart false without ops.
	GPUStart    int64
	HasGPUStart bool
	// Rank is the instance's process's rank in a distributed job
	// (AssignRanks), set by the analysis when the inputs hold two or more
	// ranks; HasRank false otherwise.
	Rank    int
	HasRank bool
}

// IsNull reports whether metric m of x was not measured.
func (x *Instance) IsNull(m Metric) bool { return x.Null&(1<<uint(m)) != 0 }

// Unannotated names the row of a step's time outside every phase.
const Unannotated = "(unannotated)"

// Input describes one analysed export.
type Input struct {
	File           string     `json:"file"`
	FileArm        string     `json:"file_arm,omitempty"`
	NsysVersion    string     `json:"nsys_version"`
	SchemaVersion  string     `json:"export_schema_version"`
	GraphTraceMode string     `json:"cuda_graph_trace_mode"`
	Step           string     `json:"step"`
	StepChoice     StepChoice `json:"step_choice"` // how the step was chosen
	Steps          int        `json:"steps"`
	Phases         []string   `json:"phases"`
	Absent         []string   `json:"absent_activity_tables"`
	// CrossProcessOverlapNs is the time GPU work of two or more processes ran
	// at once on one GPU: the trace's only reliable sign of CUDA MPS.
	CrossProcessOverlapNs int64    `json:"cross_process_gpu_overlap_ns"`
	GPUUse                []GPUUse `json:"gpu_use"`
}

// GPUUse lists the processes that ran GPU work on one GPU.
type GPUUse struct {
	GPU    int64   `json:"gpu"`
	Pids   []int64 `json:"pids"`
	BusyNs []int64 `json:"busy_ns"` // per pid, union of its GPU ops
}

// Exclusions counts what segmentation left out, by reason.
type Exclusions struct {
	UnclosedRanges   int `json:"unclosed_ranges"`
	WarmupSteps      int `json:"warmup_steps"`       // inside a warm-up range
	SkippedSteps     int `json:"skipped_steps"`      // first --skip-steps of each block (kept, flagged warmup)
	OutsideArmSteps  int `json:"outside_arm_steps"`  // in a process with arm blocks, but in none of them
	CrossThreadEnded int `json:"cross_thread_ended"` // start/end ranges that ended on another thread (kept on the start thread)
}

// Result is the segmentation and attribution of one or more exports.
type Result struct {
	Inputs []Input
	Arms   []string // in order of first block start
	// Instances are the step and phase instances, file order, then time
	// order (nil with Options.Compact: see Store).
	Instances []Instance
	// Store holds the same instances compactly (~100 bytes each instead of
	// ~620); Segment always fills it. InstanceStore gives it for a Result
	// built by hand with Instances only.
	Store      *Store
	Excluded   Exclusions
	Warnings   []nsys.Warning
	StepName   string
	StepChoice StepChoice // how the step was chosen (family, count, why)
	PhaseOrder []string   // phases in step order (first appearance), step first
	// Calls are the instances' top-level CUDA API calls, each owned by one
	// instance (Options.Calls only; nil otherwise).
	Calls    []CallRecord
	CallAPIs []string // API base names, indexed by CallRecord.API
	// GPUMetrics and Hotspots are what GPU metrics sampling and CPU
	// sampling recorded, per instance and phase (nil when not recorded).
	GPUMetrics *GPUMetrics
	Hotspots   *Hotspots
}

// InstanceStore is r's instances as a store: r.Store, else one built from
// r.Instances (and kept).
func (r *Result) InstanceStore() *Store {
	if r.Store == nil || (r.Store.Len() == 0 && len(r.Instances) > 0) {
		r.Store = StoreOf(r.Instances)
	}
	return r.Store
}
