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

// BenchmarkLoad: streaming and reducing the tables (row decoding, indexes).
func BenchmarkLoad(b *testing.B) {
	f := benchFile(b)
	for b.Loop() {
		if _, err := load(f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSegment: load + range trees + attribution of every instance.
func BenchmarkSegment(b *testing.B) {
	f := benchFile(b)
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
		if err := tr.segment(threads, blocks, "collector_step", opt, res); err != nil {
			b.Fatal(err)
		}
	}
}
