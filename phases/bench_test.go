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

// load reads the head of the trace and the whole of its activity, as the
// engine's memory source does; the engine is returned with it, its source
// loaded.
func load(f *nsys.File) (*trace, *sweep, error) {
	gpuOf, err := cudaDeviceMap(f)
	if err != nil {
		return nil, nil, err
	}
	sw := startSweep(f, gpuOf, engineConfig{inMemory: true})
	tr, err := loadHead(f, gpuOf)
	if err != nil {
		sw.close()
		return nil, nil, err
	}
	sw.tr = tr
	m := sw.src.(*memorySource)
	<-m.loaded
	return tr, sw, m.err
}

// BenchmarkLoad: reading the whole trace (row decoding, joining, the
// order check): the memory source, the engine's fallback.
func BenchmarkLoad(b *testing.B) {
	f := benchFile(b)
	for b.Loop() {
		_, sw, err := load(f)
		if err != nil {
			b.Fatal(err)
		}
		sw.close()
	}
}

// BenchmarkSegment: range trees + the engine on the stream source
// (windowed attribution of every instance).
func BenchmarkSegment(b *testing.B) {
	f := benchFile(b)
	for b.Loop() {
		if _, err := Segment(f, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSegmentWhole: the same on the memory source.
func BenchmarkSegmentWhole(b *testing.B) {
	f := benchFile(b)
	for b.Loop() {
		if _, err := Segment(f, Options{engine: engineConfig{inMemory: true}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAttribute: range trees and attribution only, on a loaded trace.
func BenchmarkAttribute(b *testing.B) {
	f := benchFile(b)
	for b.Loop() {
		b.StopTimer()
		tr, sw, err := load(f)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res := &Result{}
		opt := Options{Depth: 1}
		opt.ArmPattern = defaultArmPattern()
		threads := tr.buildRanges(opt, &res.Excluded)
		blocks := findArmBlocks(threads, opt.ArmPattern)
		if err := tr.segment(sw, threads, blocks, "collector_step", opt, res); err != nil {
			b.Fatal(err)
		}
		sw.close()
	}
}

// BenchmarkNVTXSide: everything before the engine measures — the head
// (strings, NVTX events, thread names), range trees, arm blocks, the step
// choice and the instance layout — the serial stretch of an analysis.
func BenchmarkNVTXSide(b *testing.B) {
	benchNVTXSide(b, benchFile(b))
}

func benchNVTXSide(b *testing.B, f *nsys.File) {
	gpuOf, err := cudaDeviceMap(f)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		tr, err := loadHead(f, gpuOf)
		if err != nil {
			b.Fatal(err)
		}
		res := &Result{}
		opt := Options{Depth: 1, ArmPattern: defaultArmPattern()}
		threads := tr.buildRanges(opt, &res.Excluded)
		blocks := findArmBlocks(threads, opt.ArmPattern)
		step := newChooser(threads, blocks, opt.ArmPattern).choose().name
		if step == "" {
			b.Fatal("no step")
		}
		tr.layout(threads, blocks, step, opt, res)
	}
}

// partsSource hands out API parts decoded beforehand, and no ops.
type partsSource struct {
	api []apiPart
	i   int
}

func (p *partsSource) nextAPI() (apiPart, bool, error) {
	if p.i == len(p.api) {
		return apiPart{}, false, nil
	}
	p.i++
	return p.api[p.i-1], true, nil
}
func (p *partsSource) nextOps(int) (opPart, bool, error) { return opPart{}, false, nil }
func (p *partsSource) reuseAPI(apiPart)                  {}
func (p *partsSource) reuseOps(int, opPart)              {}
func (p *partsSource) close()                            {}

// BenchmarkPullAPI: the engine's serial reading of API calls into their
// threads' buffers (sweep.pullAPI), on parts decoded beforehand; the
// buffers are emptied after each part, as eviction keeps them small.
func BenchmarkPullAPI(b *testing.B) {
	f := benchFile(b)
	gpuOf, err := cudaDeviceMap(f)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := loadHead(f, gpuOf)
	if err != nil {
		b.Fatal(err)
	}
	src := startStream(f, gpuOf, 1<<14)
	parts, err := collect(src.nextAPI)
	src.close()
	if err != nil {
		b.Fatal(err)
	}
	calls := 0
	for _, p := range parts {
		calls += len(p.calls)
	}
	b.ReportAllocs()
	for b.Loop() {
		s := newSweep(&partsSource{api: parts}, engineConfig{}.withDefaults(), false)
		s.tr = tr
		tr.threads, tr.procThreads = map[int64]*threadCalls{}, map[int32][]*threadCalls{}
		tr.resetClasses()
		for !s.apiDone {
			if err := s.pullAPI(); err != nil {
				b.Fatal(err)
			}
			for _, t := range s.bufs {
				t.buf = t.buf[:0]
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(calls), "ns/call")
}

// loadHead reads what segmentation needs — strings, NVTX events, thread
// names, the graph trace mode and the physical GPU map — at once, for the
// benchmarks of the stages after it (the engine starts the head and waits
// for it later: startHead, wait).
func loadHead(f *nsys.File, gpuOf map[[2]int64]int32) (*trace, error) {
	return startHead(f).wait(gpuOf)
}
