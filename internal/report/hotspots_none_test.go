package report

import (
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/analysis"
)

// TestHotspotsNoneInPhases: samples recorded but none on a step's thread
// while it ran (saxpy's 43 µs steps between 0.2 ms samples) are said, not
// left out as if sampling had been off.
func TestHotspotsNoneInPhases(t *testing.T) {
	doc := &analysis.Doc{Hardware: &analysis.HardwareSection{CPUSamples: 5451, CPUPeriodNs: 200_000}}
	got := strings.Join(hotspotLines(doc), "\n")
	if want := "5451 CPU samples, none on a step's or phase's thread while it ran (one every 0.20 ms"; !strings.HasPrefix(got, want) {
		t.Errorf("got %q, want it to start %q", got, want)
	}
	if l := hotspotLines(&analysis.Doc{Hardware: &analysis.HardwareSection{}}); l != nil {
		t.Errorf("no samples: %q, want nothing", l)
	}
}
