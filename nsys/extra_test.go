package nsys_test

import (
	"strconv"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// mergeVendorDuplicates folds vendor rows that share a name into one row
// (count, total, min, max combined) and returns the names it folded. With
// --cudabacktrace each backtraced call is exported twice: the call itself
// (eventClass 0, e.g. cudaLaunchKernel_v7000) and a wrapping eventClass 67
// ("CUDA backtrace") row named without the suffix (cudaLaunchKernel) that
// carries the callchainId. `nsys stats` groups by name id and strips the
// suffix afterwards, so it prints two rows of one name, and so do we.
func mergeVendorDuplicates(t *testing.T, header []string, rows [][]string) ([][]string, map[string]bool) {
	t.Helper()
	idx := map[string]int{}
	for i, h := range header {
		idx[h] = i
	}
	nameCol, countCol := idx["Name"], idx["Num Calls"]
	num := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("vendor number %q: %v", s, err)
		}
		return v
	}
	first := map[string]int{}
	merged := map[string]bool{}
	var out [][]string
	for _, r := range rows {
		n := r[nameCol]
		i, seen := first[n]
		if !seen {
			first[n] = len(out)
			out = append(out, append([]string(nil), r...))
			continue
		}
		merged[n] = true
		m := out[i]
		m[countCol] = strconv.FormatInt(num(m[countCol])+num(r[countCol]), 10)
		m[idx["Total Time (ns)"]] = strconv.FormatInt(num(m[idx["Total Time (ns)"]])+num(r[idx["Total Time (ns)"]]), 10)
		m[idx["Min (ns)"]] = strconv.FormatInt(min(num(m[idx["Min (ns)"]]), num(r[idx["Min (ns)"]])), 10)
		m[idx["Max (ns)"]] = strconv.FormatInt(max(num(m[idx["Max (ns)"]]), num(r[idx["Max (ns)"]])), 10)
	}
	return out, merged
}

// TestExtraActivityEqualsVendor checks the kernel, API and memory-operation
// summaries against the vendor's cuda_gpu_kern_sum, cuda_api_sum and
// cuda_gpu_mem_time_sum on the extra recordings (CUDA C++ with NVTX3, the
// collector with backtraces, 2 GPUs with NCCL, JAX).
func TestExtraActivityEqualsVendor(t *testing.T) {
	for _, fx := range fixture.Extra(t) {
		t.Run(fx.Name, func(t *testing.T) {
			act := activityOf(t, fx)
			h, rows, ok := fx.Vendor(t, "cuda_gpu_kern_sum")
			if !ok {
				t.Fatal("no cuda_gpu_kern_sum")
			}
			compareNamed(t, "cuda_gpu_kern_sum", act.KernelsByName, h, rows, "Instances")

			h, rows, ok = fx.Vendor(t, "cuda_api_sum")
			if !ok {
				t.Fatal("no cuda_api_sum")
			}
			// Like the vendor, we group by name id and print the name without
			// its suffix, so both rows of a backtraced call appear.
			_, merged := mergeVendorDuplicates(t, h, rows)
			if fx.Name == "collector_backtrace" && len(merged) == 0 {
				t.Error("collector_backtrace: expected vendor rows doubled by CUDA backtrace records")
			}
			compareNamed(t, "cuda_api_sum", act.APIByName, h, rows, "Num Calls")

			if h, rows, ok := fx.Vendor(t, "cuda_gpu_mem_time_sum"); ok {
				var named []nsys.NamedDurations
				for _, m := range act.Memops {
					named = append(named, nsys.NamedDurations{Name: m.Kind, Durations: m.Durations})
				}
				for i := range rows { // the vendor names the column Operation
					rows[i] = append(rows[i], rows[i][len(rows[i])-1])
				}
				compareNamed(t, "cuda_gpu_mem_time_sum", named, append(header(h), "Name"), rows, "Count")
			}
		})
	}
}
