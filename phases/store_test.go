package phases

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStoreRoundTrip: any instance comes back from the store exactly —
// negative, huge and zero metrics, nullable fields, flags, every key field
// — through Append, Set, AppendStore and the field accessors.
func TestStoreRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(vs ...int64) int64 { return vs[r.IntN(len(vs))] }
	var xs []Instance
	for i := range 500 {
		x := Instance{File: []string{"a.sqlite", "b.sqlite"}[i%2], Pid: pick(1, 449, 1<<40), Tid: pick(1, 2, -3),
			Thread: []string{"", "python3", "pt_autograd_0"}[r.IntN(3)], Arm: []string{"", "eager", "graph/x"}[r.IntN(3)],
			Block: r.IntN(4), BlockStart: pick(0, 12345, -7), Step: r.IntN(100), StepLabel: []string{"", "ProfilerStep#12"}[r.IntN(2)],
			Phase: []string{"step", "physics", Unannotated}[r.IntN(3)], IsStep: r.IntN(2) == 0, Depth: r.IntN(300),
			Start: pick(0, 1e15, -5), Warmup: r.IntN(2) == 0, OtherThread: r.IntN(2) == 0, Null: uint64(r.IntN(4)) << 40}
		x.Unit = UnitID{File: x.File, Arm: x.Arm, Block: x.Block, Pid: pick(0, x.Pid)}
		x.End = x.Start + pick(0, 1, 1e9, -2)
		for m := range x.M {
			x.M[m] = pick(0, 0, 0, 1, -1, 127, 1<<20, math.MaxInt64, math.MinInt64, r.Int64())
		}
		if r.IntN(2) == 0 { // the usual case: the derived metrics agree
			x.M[Wall] = x.End - x.Start
			x.M[CPUOther] = x.M[Wall] - x.M[Launch] - x.M[SyncAPI] - x.M[MemcpyAPI] - x.M[Alloc] - x.M[OtherAPI]
			x.M[SyncNoGPU] = x.M[SyncAPI] - x.M[SyncOwnGPU] - x.M[SyncOtherGPU]
		}
		if r.IntN(2) == 0 {
			x.QueueMeanNs, x.HasQueue = r.Float64()*1e6, true
		}
		if r.IntN(2) == 0 {
			x.PhaseGapNs, x.UnattrKerNs, x.HasStepOnly = pick(0, -296795, 1e12), r.Int64(), true
		}
		xs = append(xs, x)
	}
	s := StoreOf(xs)
	if d := cmp.Diff(xs, s.All()); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	for i, x := range s.Each() {
		if *x != xs[i] {
			t.Fatalf("Each: instance %d differs", i)
		}
	}
	for i, x := range xs {
		var m [MaxMetrics]int64
		if null := s.Metrics(i, &m); null != x.Null || m != x.M {
			t.Fatalf("instance %d: Metrics %v %x, want %v %x", i, m, null, x.M, x.Null)
		}
		for mi := range NumMetrics() {
			if got := s.Metric(i, mi); got != x.M[mi] {
				t.Fatalf("instance %d: Metric(%s) = %d, want %d", i, mi.Name(), got, x.M[mi])
			}
		}
		if s.Phase(i) != x.Phase || s.Unit(i) != x.Unit || s.Arm(i) != x.Arm || s.File(i) != x.File || s.IsStep(i) != x.IsStep ||
			s.Warmup(i) != x.Warmup || s.Start(i) != x.Start || s.End(i) != x.End || s.BlockStart(i) != x.BlockStart ||
			s.Depth(i) != x.Depth || s.Step(i) != x.Step || s.Thread(i) != x.Thread || s.Pid(i) != x.Pid || s.Tid(i) != x.Tid ||
			s.StepLabel(i) != x.StepLabel || s.OtherThread(i) != x.OtherThread || s.Metric(i, Wall) != x.M[Wall] || s.Block(i) != x.Block {
			t.Fatalf("instance %d: accessors differ from %+v", i, x)
		}
	}
	// Set replaces one instance; AppendStore copies a whole store.
	y := xs[3]
	y.Phase, y.M[KernelSum], y.HasQueue, y.QueueMeanNs = "new", 42, false, 0 // QueueMeanNs is kept only with HasQueue
	s.Set(7, &y)
	xs[7] = y
	both := NewStore()
	both.AppendStore(s)
	both.AppendStore(StoreOf(xs[:10]))
	if d := cmp.Diff(append(append([]Instance(nil), xs...), xs[:10]...), both.All()); d != "" {
		t.Fatalf("Set and AppendStore (-want +got):\n%s", d)
	}
	// SetArm relabels every instance's arm, not its unit.
	both.SetArm("mps")
	for i := range both.Len() {
		if both.Arm(i) != "mps" || both.Unit(i) != both.At(i).Unit {
			t.Fatalf("instance %d after SetArm: arm %q", i, both.Arm(i))
		}
	}
	both.SetWarmup(0, !both.Warmup(0))
	if both.Warmup(0) == xs[0].Warmup {
		t.Fatal("SetWarmup did not change the flag")
	}
}

// TestStoreViews: views tile their store without copying it (Tiled finds
// it, and only for an exact tiling); AppendStore shares segments, yet
// writing to either store afterwards never changes the other's instances.
func TestStoreViews(t *testing.T) {
	var xs []Instance
	for i := range 30 {
		x := Instance{File: []string{"a", "b", "c"}[i/10], Arm: "x", Phase: []string{"step", "p"}[i%2], IsStep: i%2 == 0, Step: i / 2, Start: int64(i), End: int64(2 * i)}
		x.Unit = UnitID{File: x.File, Arm: x.Arm}
		x.M[KernelSum] = int64(i * 7)
		xs = append(xs, x)
	}
	base := StoreOf(xs)
	views := []*Store{base.View(0, 10), base.View(10, 25), base.View(25, 30)}
	if Tiled(views) != base {
		t.Fatal("Tiled: the three views tile their store")
	}
	for _, bad := range [][]*Store{views[:2], {views[1], views[0], views[2]}, {views[0], base.View(10, 30), views[2]}, {base}, nil} {
		if Tiled(bad) != nil {
			t.Errorf("Tiled of %d stores that do not tile one: not nil", len(bad))
		}
	}
	if got := views[1].At(2); got != xs[12] {
		t.Fatalf("view instance 2 = %+v, want %+v", got, xs[12])
	}
	views[1].SetRank(0, 5) // writes through to the store
	if r, ok := base.Rank(10); !ok || r != 5 {
		t.Fatalf("rank set through the view: %d %v", r, ok)
	}
	// AppendStore shares o's segments; each store's later writes stay its own.
	o := StoreOf(xs[:5])
	s := NewStore()
	s.AppendStore(o)
	y := xs[4]
	y.Phase, y.M[KernelSum] = "renamed", -1
	s.Append(&y)
	z := xs[3]
	z.M[KernelSum] = 99
	o.Append(&z)
	o.Set(0, &z)
	want := append(append([]Instance(nil), xs[:5]...), y)
	if d := cmp.Diff(want, s.All()); d != "" {
		t.Fatalf("s after writes to both (-want +got):\n%s", d)
	}
	if d := cmp.Diff(append([]Instance{z}, append(append([]Instance(nil), xs[1:5]...), z)...), o.All()); d != "" {
		t.Fatalf("o after writes to both (-want +got):\n%s", d)
	}
}
