package phases

import (
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// benchFile opens the large fixture (or the interleaved one with -short).
func benchFile(b *testing.B) *nsys.File {
	b.Helper()
	name := fixture.LargeName
	if testing.Short() {
		name = "interleaved_graph"
	}
	f, err := nsys.Open(fixture.Get(b, name).SQLite(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

// load reads the whole trace, as the sweep's fallback does.
func load(f *nsys.File) (*trace, error) {
	gpuOf, err := cudaDeviceMap(f)
	if err != nil {
		return nil, err
	}
	tr, err := loadHead(f, gpuOf)
	if err != nil {
		return nil, err
	}
	return tr, tr.loadActivity()
}

// BenchmarkLoad: reading and reducing the whole trace (row decoding,
// indexes): the fallback of the sweep.
func BenchmarkLoad(b *testing.B) {
	f := benchFile(b)
	for b.Loop() {
		if _, err := load(f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSegment: range trees + the sweep (streamed tables, windowed
// attribution of every instance).
func BenchmarkSegment(b *testing.B) {
	f := benchFile(b)
	for b.Loop() {
		if _, err := Segment(f, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSegmentWhole: the same with the whole trace loaded first.
func BenchmarkSegmentWhole(b *testing.B) {
	f := benchFile(b)
	sweepOff = true
	defer func() { sweepOff = false }()
	for b.Loop() {
		if _, err := Segment(f, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAttribute: range trees and attribution only, on a loaded trace.
func BenchmarkAttribute(b *testing.B) {
	f := benchFile(b)
	for b.Loop() {
		b.StopTimer()
		tr, err := load(f)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res := &Result{}
		opt := Options{Depth: 1}
		opt.ArmPattern = defaultArmPattern()
		threads := tr.buildRanges(opt, &res.Excluded)
		blocks := findArmBlocks(threads, opt.ArmPattern)
		if err := tr.segment(nil, threads, blocks, "collector_step", opt, res); err != nil {
			b.Fatal(err)
		}
	}
}
