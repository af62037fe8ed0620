package report

import (
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/phases"
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

// TestFunctionNamesShortAndDistinct: demangled C++ names lose their
// argument lists, so lambdas of one function that differ only near the end
// stay apart within 40 runes; overloads, which differ only in arguments,
// keep them.
func TestFunctionNamesShortAndDistinct(t *testing.T) {
	long := "graupel(unsigned long&, unsigned long&, std::vector<double, std::allocator<double> >&, double)"
	fs := []analysis.HotspotFunction{}
	for _, n := range []string{
		long + "::{lambda(unsigned long)#3}::operator()(unsigned long) const",
		long + "::{lambda(unsigned long)#2}::operator()(unsigned long) const",
		"f(int)", "f(double)", "operator()", "__libc_free",
	} {
		fs = append(fs, analysis.HotspotFunction{FunctionSamples: phases.FunctionSamples{Function: n}})
	}
	got := functionNames(fs)
	want := []string{"graupel(…)…da(…)#3}::operator()(…) const", "graupel(…)…da(…)#2}::operator()(…) const", "f(int)", "f(double)", "operator()", "__libc_free"}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %q, want %q", i, got[i], want[i])
		}
	}
	if s := withoutArguments("a(b(c)"); s != "a(b(c)" {
		t.Errorf("unbalanced: %q", s)
	}
}
