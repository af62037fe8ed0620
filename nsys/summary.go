package nsys

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"

	"golang.org/x/sync/errgroup"
	"zombiezen.com/go/sqlite"
)

// Durations summarises a set of int64-ns durations the way `nsys stats`
// prints them: total, mean, median (the mean of the two middle values for an
// even count, as SQL's median), min, max and the sample standard deviation (n−1).
type Durations struct {
	Count   int64   `json:"count"`
	TotalNs int64   `json:"total_ns"`
	MeanNs  float64 `json:"mean_ns"`
	MedNs   float64 `json:"median_ns"`
	MinNs   int64   `json:"min_ns"`
	MaxNs   int64   `json:"max_ns"`
	StdNs   float64 `json:"stddev_ns"`
}

// SummarizeDurations computes Durations; it sorts xs in place.
func SummarizeDurations(xs []int64) Durations {
	d := Durations{Count: int64(len(xs))}
	if len(xs) == 0 {
		return d
	}
	slices.Sort(xs)
	var sum int64
	for _, x := range xs {
		sum += x
	}
	d.TotalNs, d.MinNs, d.MaxNs = sum, xs[0], xs[len(xs)-1]
	d.MeanNs = float64(sum) / float64(len(xs))
	m := len(xs) / 2
	if len(xs)%2 == 1 {
		d.MedNs = float64(xs[m])
	} else {
		d.MedNs = (float64(xs[m-1]) + float64(xs[m])) / 2
	}
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			dx := float64(x) - d.MeanNs
			ss += dx * dx
		}
		d.StdNs = math.Sqrt(ss / float64(len(xs)-1))
	}
	return d
}

// NamedDurations is a Durations for one name (a kernel, an API call).
type NamedDurations struct {
	Name string `json:"name"`
	Durations
}

// MemopSummary summarises one kind of memory operation.
type MemopSummary struct {
	Kind  string `json:"kind"` // the vendor's label, e.g. "[CUDA memcpy Host-to-Device]", "[CUDA memset]"
	Bytes int64  `json:"bytes"`
	Durations
}

// SyncSummary summarises SYNCHRONIZATION records of one syncType.
type SyncSummary struct {
	SyncType int64  `json:"sync_type"`
	Label    string `json:"label"`
	Durations
}

// ActivitySummary is what `nsysphase info` reports about the CUDA activity of
// an export: the totals `nsys stats` prints in cuda_gpu_kern_sum,
// cuda_api_sum and cuda_gpu_mem_time_sum, computed the same way.
type ActivitySummary struct {
	Kernels       Durations        // all kernels
	KernelsByName []NamedDurations // by demangled name, total time descending
	API           Durations        // all runtime and driver calls
	APIByName     []NamedDurations // by name id, printed as VendorAPIName (a name may repeat); total time descending
	Memops        []MemopSummary   // memcpy by copy kind, then memset; total time descending
	Syncs         []SyncSummary    // by syncType
	// DuplicateCorrelations counts API calls whose (process, correlationId)
	// repeats one of an earlier call (0 on a healthy export).
	DuplicateCorrelations int64
}

// vendorVersionSuffix is what `nsys stats` strips from API names: only a
// four-digit version (cudaMalloc_v3020 → cudaMalloc); cudaGraphLaunch_v10000
// and cuGetProcAddress_v2 keep theirs.
var vendorVersionSuffix = regexp.MustCompile(`_v[0-9]{4}$`)

// anyVersionSuffix strips every version suffix, for classifying calls.
var anyVersionSuffix = regexp.MustCompile(`_v[0-9]+$`)

// VendorAPIName returns an API name as `nsys stats` prints it.
func VendorAPIName(name string) string { return vendorVersionSuffix.ReplaceAllString(name, "") }

// BaseAPIName returns an API name without any `_vN` version suffix.
func BaseAPIName(name string) string { return anyVersionSuffix.ReplaceAllString(name, "") }

// Enum reads an ENUM_* table as id → label (nil when absent).
func (f *File) Enum(table string) (map[int64]string, error) {
	if !f.HasTable(table) {
		return nil, nil
	}
	out := map[int64]string{}
	err := f.scan(table, []column{req("id"), reqN("label")}, hintReexport, func(st row) bool {
		out[st.ColumnInt64(0)] = f.cleanName(st.ColumnText(1))
		return true
	})
	return out, err
}

// copyKindLabels are the ENUM_CUDA_MEMCPY_OPER labels, used when the export
// lacks the enum table.
var copyKindLabels = map[int64]string{0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array", 4: "Array-to-Host", 5: "Array-to-Array", 6: "Array-to-Device", 7: "Device-to-Array", 8: "Device-to-Device", 9: "Host-to-Host", 10: "Peer-to-Peer", 11: "Unified Host-to-Device", 12: "Unified Device-to-Host", 13: "Unified Device-to-Device"}

// CopyKindLabel returns the vendor's label of a copy kind, e.g. "Host-to-Device".
func CopyKindLabel(kind int64) string {
	if l, ok := copyKindLabels[kind]; ok {
		return l
	}
	return fmt.Sprintf("kind %d", kind)
}

// SummarizeActivity scans kernels, API calls, memcpy, memset and sync records
// (concurrently, one connection each) and summarises them.
func (f *File) SummarizeActivity(strs *Strings) (*ActivitySummary, error) {
	s := &ActivitySummary{}
	var g errgroup.Group
	g.Go(func() error {
		byName := map[int64][]int64{}
		var all []int64
		for k, err := range f.Kernels() {
			if err != nil {
				return err
			}
			d := k.End - k.Start
			byName[k.DemangledName] = append(byName[k.DemangledName], d)
			all = append(all, d)
		}
		s.Kernels = SummarizeDurations(all)
		s.KernelsByName = summarizeNamed(byName, strs.Name)
		return nil
	})
	g.Go(func() error {
		// Group by name id and print the name without its version suffix,
		// as the vendor's report does: where an export holds both
		// cudaMemcpy and cudaMemcpy_v3020 (older exports, MPI), they are
		// two rows with one printed name.
		byID := map[int64][]int64{}
		corr := map[int64][]int64{} // process → correlation ids, to find repeats
		var all []int64
		for c, err := range f.APICalls() {
			if err != nil {
				return err
			}
			d := c.End - c.Start
			byID[c.NameID] = append(byID[c.NameID], d)
			all = append(all, d)
			if c.CorrelationID != 0 {
				p := ProcessKey(c.GlobalTid)
				corr[p] = append(corr[p], c.CorrelationID)
			}
		}
		s.DuplicateCorrelations = countDuplicates(corr)
		s.API = SummarizeDurations(all)
		s.APIByName = summarizeNamed(byID, func(id int64) string { return VendorAPIName(strs.Name(id)) })
		sortNamed(s.APIByName)
		return nil
	})
	g.Go(func() error {
		labels, err := f.Enum("ENUM_CUDA_MEMCPY_OPER")
		if err != nil {
			return err
		}
		type acc struct {
			ds    []int64
			bytes int64
		}
		byKind := map[int64]*acc{}
		for m, err := range f.Memcpys() {
			if err != nil {
				return err
			}
			a := byKind[m.CopyKind]
			if a == nil {
				a = &acc{}
				byKind[m.CopyKind] = a
			}
			a.ds = append(a.ds, m.End-m.Start)
			a.bytes += m.Bytes
		}
		var ms acc
		for m, err := range f.Memsets() {
			if err != nil {
				return err
			}
			ms.ds = append(ms.ds, m.End-m.Start)
			ms.bytes += m.Bytes
		}
		for kind, a := range byKind {
			l, ok := labels[kind]
			if !ok {
				l = CopyKindLabel(kind)
			}
			s.Memops = append(s.Memops, MemopSummary{Kind: "[CUDA memcpy " + l + "]", Bytes: a.bytes, Durations: SummarizeDurations(a.ds)})
		}
		if len(ms.ds) > 0 {
			s.Memops = append(s.Memops, MemopSummary{Kind: "[CUDA memset]", Bytes: ms.bytes, Durations: SummarizeDurations(ms.ds)})
		}
		slices.SortFunc(s.Memops, func(a, b MemopSummary) int {
			return cmp.Or(cmp.Compare(b.TotalNs, a.TotalNs), cmp.Compare(a.Kind, b.Kind))
		})
		return nil
	})
	g.Go(func() error {
		labels, err := f.Enum("ENUM_CUPTI_SYNC_TYPE")
		if err != nil {
			return err
		}
		byType := map[int64][]int64{}
		for r, err := range f.Syncs() {
			if err != nil {
				return err
			}
			byType[r.SyncType] = append(byType[r.SyncType], r.End-r.Start)
		}
		for t, ds := range byType {
			s.Syncs = append(s.Syncs, SyncSummary{SyncType: t, Label: labels[t], Durations: SummarizeDurations(ds)})
		}
		slices.SortFunc(s.Syncs, func(a, b SyncSummary) int { return cmp.Compare(a.SyncType, b.SyncType) })
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return s, nil
}

func summarizeNamed(byID map[int64][]int64, name func(int64) string) []NamedDurations {
	out := make([]NamedDurations, 0, len(byID))
	for id, ds := range byID {
		out = append(out, NamedDurations{Name: name(id), Durations: SummarizeDurations(ds)})
	}
	sortNamed(out)
	return out
}

// sortNamed orders by total time descending, as `nsys stats` does, then
// name, then count (two ids may print the same name).
func sortNamed(xs []NamedDurations) {
	slices.SortFunc(xs, func(a, b NamedDurations) int {
		return cmp.Or(cmp.Compare(b.TotalNs, a.TotalNs), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Count, b.Count), cmp.Compare(a.MinNs, b.MinNs))
	})
}

// ThreadExtent is one thread's CUDA API activity: its first call's start,
// its last call's end and its number of calls.
type ThreadExtent struct {
	GlobalTid  int64
	Start, End int64
	Calls      int64
}

// APIExtents returns, per thread, the extent of its CUDA runtime and driver
// calls (empty when the export has no API table), sorted by thread. Rows
// without a thread, start or end are left out.
func (f *File) APIExtents() ([]ThreadExtent, error) {
	t := TableRuntime
	if !f.HasTable(t) || !f.HasColumn(t, "globalTid") || !f.HasColumn(t, "start") || !f.HasColumn(t, "end") {
		return nil, nil
	}
	var out []ThreadExtent
	err := f.query(`SELECT globalTid, min(start), max("end"), count(*) FROM `+quoteIdent(t)+
		` WHERE globalTid IS NOT NULL AND start IS NOT NULL AND "end" IS NOT NULL GROUP BY globalTid ORDER BY globalTid`, func(st *sqlite.Stmt) error {
		out = append(out, ThreadExtent{GlobalTid: st.ColumnInt64(0), Start: st.ColumnInt64(1), End: st.ColumnInt64(2), Calls: st.ColumnInt64(3)})
		return nil
	})
	if err != nil {
		return nil, f.readError("cannot read the extent of "+t, err)
	}
	return out, nil
}
