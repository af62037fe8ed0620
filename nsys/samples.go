package nsys

import (
	"iter"
	"strings"

	"zombiezen.com/go/sqlite"
)

// Tables of hardware and host sampling: GPU metrics (`nsys profile
// --gpu-metrics-devices`) and CPU samples with backtraces (`--sample=cpu`,
// `--python-sampling`).
const (
	TableGPUMetrics         = "GPU_METRICS"             // timestamp, typeId, metricId, value
	TableGPUMetricDefs      = "TARGET_INFO_GPU_METRICS" // typeId, metricId, metricName "Name [unit]"
	TableCompositeEvents    = "COMPOSITE_EVENTS"        // one row per CPU sample: start, globalTid
	TableSamplingCallchains = "SAMPLING_CALLCHAINS"     // the samples' backtraces
)

const (
	hintGPUMetrics = "record with `nsys profile --gpu-metrics-devices=all` and export again"
	hintSampling   = "record with `nsys profile --sample=cpu` (and `--python-sampling=true` for Python frames) and export again"
)

// GPUMetricDef is one row of TARGET_INFO_GPU_METRICS: the name and unit of a
// metric that the GPU of TypeID recorded.
type GPUMetricDef struct {
	TypeID   int64
	MetricID int64
	Name     string // the metric's name without its unit, e.g. "SMs Active"
	Unit     string // what the export puts in brackets, e.g. "Throughput %"; "" when none
}

// GPU is the GPU whose samples carry TypeID: the low byte of the type id,
// as the exporter numbers GPU metric sources (TARGET_INFO_GPU.id).
func (d GPUMetricDef) GPU() int64 { return GPUOfMetricType(d.TypeID) }

// GPUOfMetricType is the GPU (TARGET_INFO_GPU.id) of a GPU_METRICS typeId:
// its low byte.
func GPUOfMetricType(typeID int64) int64 { return typeID & 0xFF }

// SplitMetricName splits "SMs Active [Throughput %]" into its name and the
// unit in its last brackets.
func SplitMetricName(s string) (name, unit string) {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "]") {
		if i := strings.LastIndex(s, "["); i >= 0 {
			return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1 : len(s)-1])
		}
	}
	return s, ""
}

// GPUMetricDefs returns TARGET_INFO_GPU_METRICS in table order (empty when
// GPU metrics were not recorded).
func (f *File) GPUMetricDefs() ([]GPUMetricDef, error) {
	var out []GPUMetricDef
	err := f.scan(TableGPUMetricDefs, []column{req("typeId"), req("metricId"), req("metricName")}, hintGPUMetrics, func(st row) bool {
		name, unit := SplitMetricName(CleanName(st.ColumnText(2)))
		out = append(out, GPUMetricDef{TypeID: st.ColumnInt64(0), MetricID: st.ColumnInt64(1), Name: name, Unit: unit})
		return true
	})
	return out, err
}

// GPUMetricSample is one row of GPU_METRICS: the value of one metric of one
// GPU, sampled at Timestamp.
type GPUMetricSample struct {
	Timestamp int64
	TypeID    int64
	MetricID  int64
	Value     int64
}

// GPUMetrics streams GPU_METRICS column-pruned, in table order (nothing
// when GPU metrics were not recorded).
func (f *File) GPUMetrics() iter.Seq2[GPUMetricSample, error] {
	return seq(f, TableGPUMetrics, []column{req("timestamp"), req("typeId"), req("metricId"), req("value")}, hintGPUMetrics, func(st row) GPUMetricSample {
		return GPUMetricSample{Timestamp: st.ColumnInt64(0), TypeID: st.ColumnInt64(1), MetricID: st.ColumnInt64(2), Value: st.ColumnInt64(3)}
	})
}

// CPUSample is one row of COMPOSITE_EVENTS: one CPU sample of a thread.
type CPUSample struct {
	ID        int64 // SAMPLING_CALLCHAINS.id of its backtrace
	Start     int64
	GlobalTid int64 // 0 when not recorded
}

// CPUSamples streams COMPOSITE_EVENTS column-pruned (nothing when CPU
// sampling was off).
func (f *File) CPUSamples() iter.Seq2[CPUSample, error] {
	return seq(f, TableCompositeEvents, []column{req("id"), req("start"), optInt("globalTid", 0)}, hintSampling, func(st row) CPUSample {
		return CPUSample{ID: st.ColumnInt64(0), Start: st.ColumnInt64(1), GlobalTid: nullInt(st, 2, 0)}
	})
}

// SampleFrame is one row of SAMPLING_CALLCHAINS: one frame of a CPU
// sample's backtrace.
type SampleFrame struct {
	ID     int64 // COMPOSITE_EVENTS.id
	Depth  int64 // stackDepth: 0 is the innermost frame (where the sample hit)
	Symbol int64 // StringIds id
	Module int64 // StringIds id; -1 when not recorded
}

// SampleFrames streams SAMPLING_CALLCHAINS column-pruned (nothing when CPU
// sampling was off).
func (f *File) SampleFrames() iter.Seq2[SampleFrame, error] {
	return seq(f, TableSamplingCallchains, []column{req("id"), req("stackDepth"), req("symbol"), optInt("module", -1)}, hintSampling, func(st row) SampleFrame {
		return SampleFrame{ID: st.ColumnInt64(0), Depth: st.ColumnInt64(1), Symbol: st.ColumnInt64(2), Module: nullInt(st, 3, -1)}
	})
}

// SampleExtents returns, per thread, the extent of its CPU samples (empty
// without COMPOSITE_EVENTS), sorted by thread: from its first sample to just
// after its last (End = last + 1 ns); Calls counts the samples.
func (f *File) SampleExtents() ([]ThreadExtent, error) {
	t := TableCompositeEvents
	if !f.HasTable(t) || !f.HasColumn(t, "globalTid") || !f.HasColumn(t, "start") {
		return nil, nil
	}
	var out []ThreadExtent
	err := f.query(`SELECT globalTid, min(start), max(start) + 1, count(*) FROM `+quoteIdent(t)+
		` WHERE globalTid IS NOT NULL AND start IS NOT NULL GROUP BY globalTid ORDER BY globalTid`, func(st *sqlite.Stmt) error {
		out = append(out, ThreadExtent{GlobalTid: st.ColumnInt64(0), Start: st.ColumnInt64(1), End: st.ColumnInt64(2), Calls: st.ColumnInt64(3)})
		return nil
	})
	if err != nil {
		return nil, f.readError("cannot read the extent of "+t, err)
	}
	return out, nil
}
