package phases

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/nsysphase/nsysphase/nsys"
)

// A metric is declared once, as a MetricInfo: metricInfo (model.go) for the
// built-in ones, Declare for more. What the code used to re-derive by hand
// follows from the declarations: which metrics a missing table leaves null
// (absentMask), which the (unannotated) row leaves null (unannotatedNull),
// and the columns of the default and --wide breakdown tables
// (DefaultColumns, WideColumns). The outputs (phase_instances, the summaries
// and comparisons in JSON, CSV, Parquet, the schema docs) list every metric
// NumMetrics counts.

// MaxMetrics bounds the metrics, built in and declared: Instance.M holds
// this many (the unused end stays 0). Room for a few declared metrics, not
// more: every instance carries the room (8 bytes a slot, decoded and
// zeroed with every instance), and a metric meant to stay becomes a
// built-in one.
const MaxMetrics = numBuiltin + declaredRoom

// declaredRoom is how many metrics Declare can add.
const declaredRoom = 4

// A null mask is a uint64: at most 64 metrics (this fails to compile past).
const _ = uint64(64 - MaxMetrics)

// The units a metric is measured in.
const (
	UnitNs    = "ns"
	UnitBytes = "bytes"
	UnitCount = "count"
)

// MetricInfo declares one metric.
type MetricInfo struct {
	Name string // column name, e.g. "wall_ns"
	Unit string // UnitNs, UnitBytes or UnitCount
	Doc  string // what it measures: the one definition every output and the schema docs use
	// Sources are the activity tables the metric is measured from: where
	// any of them is absent from an export the metric is null (not
	// measured), not zero. Without the CUDA API table no GPU op joins a
	// range, so every metric but wall lists it.
	Sources []string
	// Additive says the metric of a step is the sum of its parts': a sum
	// over calls, ops or time inside the range, so the (unannotated) row is
	// the step minus its phases. A union of intervals, a span, a maximum,
	// or anything measured against the GPUs used by the range's end does
	// not split that way: the (unannotated) row leaves it null (step − Σ
	// phases would be wrong, even negative).
	Additive bool
	// Default and Wide are the metric's column in the default breakdown
	// table and in the --wide one, from 1; 0 leaves it out. Short is its
	// header in the default table (the wide one writes the name without
	// "_ns").
	Default, Wide int
	Short         string
	// Measure computes a declared metric (Declare) for one instance from
	// the GPU ops attributed to it (the ops of the CUDA calls its thread
	// made inside it); nil for the built-in metrics, which attribute.go
	// measures.
	Measure func(x *Instance, ops []Op) int64
}

// OpKind is the kind of a GPU operation, as Op gives it.
type OpKind uint8

// The kinds of GPU operations.
const (
	OpKernel = OpKind(opKernel)
	OpMemcpy = OpKind(opMemcpy)
	OpMemset = OpKind(opMemset)
	OpGraph  = OpKind(opGraph) // a whole-graph record (--cuda-graph-trace=graph)
)

// Op is one GPU operation attributed to an instance, as a declared metric's
// Measure sees it.
type Op struct {
	Start, End int64 // ns, on the export's clock
	Bytes      int64 // copies and memsets
	GPU        int32 // the physical GPU (else the process's device id)
	Kind       OpKind
}

// The source tables of the built-in metrics.
var (
	fromAPI        = []string{nsys.TableRuntime}
	fromKernels    = []string{nsys.TableRuntime, nsys.TableKernel}
	fromMemcpy     = []string{nsys.TableRuntime, nsys.TableMemcpy}
	fromMemset     = []string{nsys.TableRuntime, nsys.TableMemset}
	fromGraphTrace = []string{nsys.TableRuntime, nsys.TableGraphTrace}
)

// declared are the metrics Declare added, after the built-in ones; sealed
// once anything has counted the metrics.
var (
	declared []MetricInfo
	sealed   atomic.Bool
)

// Declare adds a metric after the built-in ones and returns it: its column
// appears in phase_instances, its summaries and comparisons in every
// output, and in the breakdown tables where d places it. d.Measure computes
// it. Call it from an init function, before anything counts the metrics
// (NumMetrics); it panics afterwards, and on a declaration checkDeclaration
// refuses.
func Declare(d MetricInfo) Metric {
	if sealed.Load() {
		panic("phases: Declare(" + d.Name + ") after the metrics were counted; declare metrics in an init function")
	}
	n := numBuiltin + Metric(len(declared))
	if err := checkDeclaration(d, n); err != nil {
		panic(err)
	}
	declared = append(declared, d)
	return n
}

// checkDeclaration refuses a metric that cannot be added to the first n:
// past MaxMetrics, without a name, a known unit or Measure, with a name
// already taken, or placed in the default table without a header.
func checkDeclaration(d MetricInfo, n Metric) error {
	switch {
	case n >= MaxMetrics:
		return fmt.Errorf("phases: Declare(%s): at most %d declared metrics", d.Name, declaredRoom)
	case d.Name == "":
		return fmt.Errorf("phases: Declare: a metric without a name")
	case d.Unit != UnitNs && d.Unit != UnitBytes && d.Unit != UnitCount:
		return fmt.Errorf("phases: Declare(%s): unit %q, want %s, %s or %s", d.Name, d.Unit, UnitNs, UnitBytes, UnitCount)
	case d.Measure == nil:
		return fmt.Errorf("phases: Declare(%s) without Measure", d.Name)
	case d.Default > 0 && d.Short == "":
		return fmt.Errorf("phases: Declare(%s): a column of the default table needs Short", d.Name)
	}
	if _, taken := metricByName(d.Name, n); taken {
		return fmt.Errorf("phases: Declare(%s): the name is taken", d.Name)
	}
	return nil
}

// NumMetrics is the number of metrics, built in and declared: they are
// Metric(0) … NumMetrics()-1.
func NumMetrics() Metric {
	if !sealed.Load() {
		sealed.Store(true)
	}
	return numBuiltin + Metric(len(declared))
}

// Info is m's declaration: its column name, unit, meaning, sources,
// additivity and columns.
func (m Metric) Info() MetricInfo {
	if m < numBuiltin {
		return metricInfo[m]
	}
	return declared[m-numBuiltin]
}

// Name is m's column name, e.g. "wall_ns".
func (m Metric) Name() string { return m.Info().Name }

// Unit is m's unit: "ns", "bytes" or "count".
func (m Metric) Unit() string { return m.Info().Unit }

// Doc says what m measures.
func (m Metric) Doc() string { return m.Info().Doc }

// metricByName finds a metric by name among the first n.
func metricByName(name string, n Metric) (Metric, bool) {
	for m := range n {
		if m.Info().Name == name {
			return m, true
		}
	}
	return 0, false
}

// DefaultColumns are the metrics of the default breakdown table, in column
// order (MetricInfo.Default).
func DefaultColumns() []Metric { return placed(func(d MetricInfo) int { return d.Default }) }

// WideColumns are the metrics of the --wide breakdown table, in column
// order (MetricInfo.Wide).
func WideColumns() []Metric { return placed(func(d MetricInfo) int { return d.Wide }) }

// placed lists the metrics with a place, by place (ties in metric order).
func placed(place func(MetricInfo) int) []Metric {
	var out []Metric
	for m := range NumMetrics() {
		if place(m.Info()) > 0 {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b Metric) int { return place(a.Info()) - place(b.Info()) })
	return out
}

// extraMeasures are the declared metrics' Measure functions, by metric
// (nil without declared metrics: the engine then keeps no op list).
func extraMeasures() []func(*Instance, []Op) int64 {
	n := NumMetrics()
	if n == numBuiltin {
		return nil
	}
	out := make([]func(*Instance, []Op) int64, 0, n-numBuiltin)
	for m := numBuiltin; m < n; m++ {
		out = append(out, m.Info().Measure)
	}
	return out
}

// unannotatedNull is the (unannotated) row's null mask: the metrics that
// are not additive (MetricInfo.Additive).
var unannotatedNull = sync.OnceValue(func() uint64 {
	var mask uint64
	for m := range NumMetrics() {
		if !m.Info().Additive {
			mask |= 1 << uint(m)
		}
	}
	return mask
})

// absentMask is the null mask of the metrics measured from any of the
// absent activity tables (MetricInfo.Sources): their tables were not
// traced (or, the export being lazy, their activity did not happen), so
// they are null, not zero.
func absentMask(absent []string) uint64 {
	var mask uint64
	for m := range NumMetrics() {
		for _, t := range m.Info().Sources {
			if slices.Contains(absent, t) {
				mask |= 1 << uint(m)
				break
			}
		}
	}
	return mask
}
