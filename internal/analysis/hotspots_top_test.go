package analysis

import (
	"fmt"
	"testing"

	"github.com/nsysphase/nsysphase/phases"
)

// TestTopHotspotsKeepsInclusive: a frame that every sample passes through
// (the launch path) has no self samples; cutting the list by self samples
// alone dropped it. It stays, beside the top ones by self samples.
func TestTopHotspotsKeepsInclusive(t *testing.T) {
	var fs []HotspotFunction
	for i := range 6 {
		fs = append(fs, HotspotFunction{FunctionSamples: phases.FunctionSamples{Function: fmt.Sprintf("leaf%d", i), Self: int64(10 - i), Inclusive: int64(10 - i)}})
	}
	fs = append(fs, HotspotFunction{FunctionSamples: phases.FunctionSamples{Function: "cudaLaunchKernel", Inclusive: 40}})
	got := topHotspots(fs, 3)
	var names []string
	for _, f := range got {
		names = append(names, f.Function)
	}
	want := "[leaf0 leaf1 leaf2 cudaLaunchKernel]"
	if s := fmt.Sprint(names); s != want {
		t.Errorf("kept %s, want %s (top 3 by self, then the top by inclusive)", s, want)
	}
}
