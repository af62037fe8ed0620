package phases_test

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ulikunitz/xz"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/phases"
)

// TestInstancesMatchVendorTrace checks every step and phase instance of
// interleaved_graph against the vendor's per-instance nvtx_gpu_proj_trace:
// the projected start and duration and the GPU op count of each range
// agree exactly, and ranges the vendor omits (no GPU ops) have none here.
func TestInstancesMatchVendorTrace(t *testing.T) {
	fx := fixture.Get(t, "interleaved_graph")
	p := filepath.Join(fixture.TestdataDir(), "vendor-stats", "interleaved_graph_nvtx_gpu_proj_trace.csv.xz")
	fh, err := os.Open(p)
	if err != nil {
		t.Skipf("no vendor trace: %v", err)
	}
	defer fh.Close()
	r, err := xz.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		name  string
		start int64
	}
	type vrow struct{ projStart, proj, ops int64 }
	vendor := map[key]vrow{}
	for _, rec := range recs[1:] {
		start, _ := strconv.ParseInt(rec[3], 10, 64)
		projStart, _ := strconv.ParseInt(rec[1], 10, 64)
		proj, _ := strconv.ParseInt(rec[2], 10, 64)
		ops, _ := strconv.ParseInt(rec[8], 10, 64)
		vendor[key{rec[0], start}] = vrow{projStart, proj, ops}
	}
	res := segment(t, fx.Name, phases.Options{})
	checked := 0
	for _, x := range res.Instances {
		v, ok := vendor[key{":" + x.Phase, x.Start}]
		if !ok {
			if x.M[phases.GPUOps] != 0 || x.HasGPUStart {
				t.Errorf("%s at %d: %d GPU ops here, none in the vendor's trace", x.Phase, x.Start, x.M[phases.GPUOps])
			}
			continue
		}
		checked++
		if x.M[phases.Proj] != v.proj || x.M[phases.GPUOps] != v.ops || !x.HasGPUStart || x.GPUStart != v.projStart {
			t.Errorf("%s at %d: GPU start %d (%v) proj %d ops %d, vendor %d proj %d ops %d", x.Phase, x.Start, x.GPUStart, x.HasGPUStart, x.M[phases.Proj], x.M[phases.GPUOps], v.projStart, v.proj, v.ops)
		}
	}
	if checked < 3000 {
		t.Fatalf("only %d instances matched a vendor row", checked)
	}
	t.Logf("%d instances equal the vendor's projection", checked)
}
