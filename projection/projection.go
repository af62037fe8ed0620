package projection

import (
	"cmp"
	"maps"
	"slices"

	"github.com/nsysphase/nsysphase/nsys"
)

// Range styles as the vendor names them.
const (
	PushPop  = "PushPop"  // NVTX event types 59 and 70
	StartEnd = "StartEnd" // NVTX event types 60 and 71
)

// Range is one row of `nsys stats -r nvtx_gpu_proj_sum`: the instances
// of one (name, style) that launched GPU work from their own thread.
type Range struct {
	Domain string // the NVTX domain's name; "" for the default domain
	Text   string // the range's message
	Name   string // the vendor's Range column: "<domain>:<text>"
	Style  string // PushPop or StartEnd

	Instances int64 // Range Instances: only ranges with at least one GPU op
	RangeNs   int64 // Total Range Time: CPU durations of those instances
	ProjNs    int64 // Total Proj Time: sum of the instances' projections

	// Statistics of the per-instance projection (first op start to last op
	// end): the sample standard deviation divides by n−1 and is 0 for one
	// instance; the median of an even count is the mean of the middle two.
	ProjMeanNs   float64
	ProjMedianNs float64
	ProjMinNs    int64
	ProjMaxNs    int64
	ProjStdDevNs float64

	GPUOps    int64   // Total GPU Ops: per instance, distinct correlation ids
	AvgGPUOps float64 // Avg GPU Ops

	// AvgLevel is the mean stack depth (Avg Range Lvl) over the instances
	// that have one; HasAvgLevel is false when none has (the vendor prints
	// nothing). A range whose parent chain loops has no depth: ranges with
	// identical start and end are each other's parent in the vendor's SQL.
	AvgLevel    float64
	HasAvgLevel bool
	AvgChildren float64 // Avg Num Child: children that have GPU ops
}

// Instance is one row of `nsys stats -r nvtx_gpu_proj_trace`: one NVTX
// range instance that launched GPU work from its own thread.
type Instance struct {
	Domain, Text, Name, Style string

	GlobalTid int64 // the thread that opened (and closed) the range
	Pid, Tid  int64

	StartNs int64 // Orig Start: the CPU range
	RangeNs int64 // Orig Duration; an unclosed range ends at the last NVTX range timestamp

	ProjStartNs int64 // Projected Start: the first op's start
	ProjNs      int64 // Projected Duration: last op end − first op start; may exceed RangeNs
	GPUOps      int64 // NumGPUOps: distinct correlation ids launched inside the range

	Level    int64 // Lvl: 0 for a root; -1 where the vendor prints NULL (see Range.AvgLevel)
	Children int64 // NumChild: child ranges that have GPU ops
}

// Report is the vendor-compatible view of one export.
type Report struct {
	Ranges []Range    // nvtx_gpu_proj_sum, sorted by Total Proj Time descending (ties by name, style)
	Trace  []Instance // nvtx_gpu_proj_trace (Trace only), in the vendor's order
	// Absent lists the input tables the export lacks: the exporter writes no
	// empty tables, so each means none of that activity was recorded.
	Absent []string
	// Warnings are oddities of the input that the vendor's rules absorb
	// without a word (unclosed ranges, ranges ended on another thread,
	// negative durations, repeated correlation ids, skipped rows), each
	// naming the file.
	Warnings []nsys.Warning
}

// Project computes `nsys stats -r nvtx_gpu_proj_sum` for an export.
// Rules:
//   - ranges are NVTX push/pop and start/end rows (types 59, 60, 70, 71) that
//     ended on the thread that opened them; an unclosed range ends at the
//     largest start or end among all range rows;
//   - a range is named "<domain>:<text>", the domain's name from its
//     earliest create row in the range's process ("" for the default
//     domain), the text from StringIds when textId is set, else text;
//   - a GPU op (kernel, memcpy, memset; not graph-trace, sync or event
//     records) belongs to the runtime or driver API call of its process with
//     its correlationId, and counts in every range of the call's thread that
//     encloses the call, inclusive at both ends;
//   - per instance, the projection runs from the first op's start to the
//     last op's end, and the op count is of distinct correlation ids;
//   - ranges without ops are left out of every column.
func Project(f *nsys.File) (*Report, error) {
	in, err := compute(f, defaultStackLimit)
	if err != nil {
		return nil, err
	}
	return &Report{Ranges: in.summarize(), Absent: absentTables(f), Warnings: in.warnings(f)}, nil
}

// Trace is Project with the per-instance rows of `nsys stats -r
// nvtx_gpu_proj_trace` in Report.Trace, ordered as the vendor orders them
// (projected start, then longer projection first; ties by CPU start, name
// and thread).
func Trace(f *nsys.File) (*Report, error) {
	in, err := compute(f, defaultStackLimit)
	if err != nil {
		return nil, err
	}
	n := 0
	for range in.found() {
		n++
	}
	// Sized at once: the trace is the largest thing Trace builds (2 M rows
	// at 30×), and doubling would hold up to twice it.
	trace := make([]Instance, 0, n)
	for globalTid, x := range in.found() {
		n := in.names[x.name]
		trace = append(trace, Instance{
			Domain: n.domain, Text: n.text, Name: n.name, Style: n.style,
			GlobalTid: globalTid, Pid: nsys.Pid(globalTid), Tid: nsys.Tid(globalTid),
			StartNs: x.start, RangeNs: x.end - x.start,
			ProjStartNs: x.opStart, ProjNs: x.opEnd - x.opStart, GPUOps: x.ops,
			Level: int64(x.level), Children: int64(x.children),
		})
	}
	slices.SortFunc(trace, func(a, b Instance) int {
		return cmp.Or(cmp.Compare(a.ProjStartNs, b.ProjStartNs), cmp.Compare(b.ProjNs, a.ProjNs),
			cmp.Compare(a.StartNs, b.StartNs), cmp.Compare(a.Name, b.Name), cmp.Compare(a.GlobalTid, b.GlobalTid))
	})
	return &Report{Ranges: in.summarize(), Trace: trace, Absent: absentTables(f), Warnings: in.warnings(f)}, nil
}

// inputTables are the tables the view reads.
var inputTables = []string{nsys.TableNVTX, nsys.TableRuntime, nsys.TableKernel, nsys.TableMemcpy, nsys.TableMemset}

func absentTables(f *nsys.File) []string {
	var out []string
	for _, t := range inputTables {
		if !f.HasTable(t) {
			out = append(out, t)
		}
	}
	return out
}

// summarize groups instances by (name, style) into the rows of
// nvtx_gpu_proj_sum, sorted by total projection, descending.
func (in *input) summarize() []Range {
	type group struct {
		projs    []int64
		rangeNs  int64
		ops      int64
		levelSum int64
		levels   int64
		children int64
	}
	groups := make([]group, len(in.names))
	for _, x := range in.found() {
		g := &groups[x.name]
		g.projs = append(g.projs, x.opEnd-x.opStart)
		g.rangeNs += x.end - x.start
		g.ops += x.ops
		if x.level >= 0 {
			g.levelSum += int64(x.level)
			g.levels++
		}
		g.children += int64(x.children)
	}
	out := []Range{}
	for i, g := range groups {
		if len(g.projs) == 0 {
			continue
		}
		n := in.names[i]
		d := nsys.SummarizeDurations(g.projs)
		r := Range{
			Domain: n.domain, Text: n.text, Name: n.name, Style: n.style,
			Instances: d.Count, RangeNs: g.rangeNs, ProjNs: d.TotalNs,
			ProjMeanNs: d.MeanNs, ProjMedianNs: d.MedNs, ProjMinNs: d.MinNs, ProjMaxNs: d.MaxNs, ProjStdDevNs: d.StdNs,
			GPUOps: g.ops, AvgGPUOps: float64(g.ops) / float64(d.Count),
			AvgChildren: float64(g.children) / float64(d.Count),
		}
		if g.levels > 0 {
			r.AvgLevel, r.HasAvgLevel = float64(g.levelSum)/float64(g.levels), true
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Range) int {
		return cmp.Or(cmp.Compare(b.ProjNs, a.ProjNs), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Style, b.Style))
	})
	return out
}

// warnings words the input's oddities through nsys.Quality, with what the
// vendor's rules do with them.
func (in *input) warnings(f *nsys.File) []nsys.Warning {
	out := slices.Clone(f.Warnings)
	if out == nil {
		out = []nsys.Warning{}
	}
	d := &in.diag
	q := nsys.Quality{EndBeforeStart: d.endBeforeStart, UnclosedRanges: d.unclosed, OtherThreadEnds: d.otherThreadEnds,
		CrossedRanges: d.crossed, UnnamedRanges: d.unnamed, DanglingTextIDs: d.danglingTextIDs, DuplicateCorrelations: d.duplicateCorrelations}
	out = append(out, q.WarningsNoted(f.Path, nsys.QualityNotes{
		Unclosed:              "NULL end: a push without a pop, a start without an end, or a capture that stopped inside them; nvtx_gpu_proj_sum ends them at the last NVTX range timestamp",
		Unnamed:               `unnamed; nvtx_gpu_proj_sum names them "<domain>:"`,
		DanglingTextIDs:       "nvtx_gpu_proj_sum falls back to their text column, else an empty name",
		DuplicateCorrelations: "GPU work joined on those ids is ambiguous; as nsys stats does, it counts in the ranges of every such call, once per range",
	})...)
	for _, t := range slices.Sorted(maps.Keys(d.skipped)) {
		rows := "rows of %s were"
		if d.skipped[t] == 1 {
			rows = "row of %s was"
		}
		out = append(out, nsys.FileWarning(nsys.WarnSkippedRows, f.Path, "%d "+rows+" skipped (NULL where a value is required)", d.skipped[t], t))
	}
	return out
}
