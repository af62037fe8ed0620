package dataset

import (
	"context"
	"regexp"
	"testing"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/phases"
)

// BenchmarkInstancesRows fills the first row group of phase_instances of
// large_interleaved (60,000 rows, 70 columns): the step that the analysis
// runs before its statistics start.
func BenchmarkInstancesRows(b *testing.B) {
	cfg := analysis.Config{Files: []string{fixture.Get(b, fixture.LargeName).XZ},
		Segment: phases.Options{ArmPattern: regexp.MustCompile(phases.DefaultArmPattern), Depth: 1, SkipSteps: 1, Compact: true}}
	files, err := analysis.ReadFiles(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	d, err := analysis.Build(context.Background(), files, pointOptions(1), "test")
	if err != nil {
		b.Fatal(err)
	}
	n := min(d.Store().Len(), 1<<16)
	b.ReportAllocs()
	for b.Loop() {
		if t := InstancesRows(d, 0, n); t.Len() != n {
			b.Fatalf("%d rows, want %d", t.Len(), n)
		}
	}
	b.ReportMetric(float64(n), "rows")
}
