package phases

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// TestWholeProcessAgainstVendor: with its NVTX deleted, eager_graph_small is
// one "whole process" instance. Its wall is its thread's first-call-start to
// last-call-end (read back from the API table), and all its kernel time —
// launched from that thread (kernel_sum_ns) or beside it by the process's
// other threads (other_thread_kernel_ns) — is the vendor's total in
// cuda_gpu_kern_sum of the same recording.
func TestWholeProcessAgainstVendor(t *testing.T) {
	fx := fixture.Get(t, "eager_graph_small")
	none := editedCopy(t, "eager_graph_small", `DELETE FROM NVTX_EVENTS;`)
	res := segmentPath(t, none, Options{})
	if len(res.Instances) != 1 {
		t.Fatalf("%d instances, want one whole-process instance", len(res.Instances))
	}
	x := res.Instances[0]

	f, err := nsys.Open(none)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ext, err := f.APIExtents()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ext {
		if nsys.Pid(e.GlobalTid) == x.Pid && nsys.Tid(e.GlobalTid) == x.Tid && x.M[Wall] != e.End-e.Start {
			t.Errorf("wall %d ns, the thread's calls span %d ns", x.M[Wall], e.End-e.Start)
		}
	}

	in, err := os.Open(filepath.Join(fx.VendorDir, fx.Name+"_cuda_gpu_kern_sum.csv"))
	if err != nil {
		t.Skip("no vendor kernel summary:", err)
	}
	defer in.Close()
	rows, err := csv.NewReader(in).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var total, instances int64
	for _, r := range rows[1:] {
		ns, err1 := strconv.ParseInt(r[1], 10, 64)
		n, err2 := strconv.ParseInt(r[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("vendor row %v", r)
		}
		total += ns
		instances += n
	}
	if got := x.M[KernelSum] + x.M[OtherThreadKernelNs]; got != total {
		t.Errorf("kernel_sum_ns %d + other_thread_kernel_ns %d = %d, vendor cuda_gpu_kern_sum total %d", x.M[KernelSum], x.M[OtherThreadKernelNs], got, total)
	}
	if x.M[OtherThreadKernelNs] == 0 && x.M[KernelCount] != instances {
		t.Errorf("%d kernels, vendor %d instances", x.M[KernelCount], instances)
	}
	t.Logf("whole process: wall %d ns, kernels %d (vendor %d instances), kernel time %d ns", x.M[Wall], x.M[KernelCount], instances, total)
}
