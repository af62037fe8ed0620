package phases_test

import (
	"testing"

	"github.com/nsysphase/nsysphase/phases"
)

// TestCallsOwnedOnce checks the per-call records on real exports: each call
// is owned by exactly one instance, the deepest whose range holds its start,
// and the owned host time adds up to the instance's API metrics.
func TestCallsOwnedOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		depth int
	}{{"interleaved_graph", 1}, {"interleaved_graph", 2}, {"sharing_mps_1", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			res := segment(t, tc.name, phases.Options{Calls: true, Depth: tc.depth})
			if len(res.Calls) == 0 {
				t.Fatal("no call records")
			}
			xs := res.Instances
			stepOf := make([]int, len(xs))
			for i := range xs {
				if xs[i].IsStep {
					stepOf[i] = i
				} else {
					stepOf[i] = stepOf[i-1]
				}
			}
			type owned struct{ cat [5]int64 }
			byInst := map[int32]*owned{}
			for _, c := range res.Calls {
				x := xs[c.Instance]
				if c.Start < x.Start || c.Start >= x.End {
					t.Fatalf("call %s at %d owned by %s [%d, %d)", res.CallAPIs[c.API], c.Start, x.Phase, x.Start, x.End)
				}
				if c.Dur < 0 || c.Start+c.Dur > x.End {
					t.Fatalf("call %s: duration %d not clipped to its instance", res.CallAPIs[c.API], c.Dur)
				}
				// No deeper instance of the same step holds the start.
				for j := stepOf[c.Instance] + 1; j < len(xs) && !xs[j].IsStep; j++ {
					if xs[j].Depth > x.Depth && xs[j].Start <= c.Start && c.Start < xs[j].End && xs[j].Tid == x.Tid {
						t.Fatalf("call %s owned by %s (depth %d), but %s (depth %d) holds it", res.CallAPIs[c.API], x.Phase, x.Depth, xs[j].Phase, xs[j].Depth)
					}
				}
				o := byInst[c.Instance]
				if o == nil {
					o = &owned{}
					byInst[c.Instance] = o
				}
				o.cat[c.Cat] += c.Dur
			}
			// Leaf phases own all their calls: their records' time equals
			// their API metrics, except for a call running in from before.
			cats := []phases.Metric{phases.OtherAPI, phases.Launch, phases.SyncAPI, phases.MemcpyAPI, phases.Alloc}
			leaves, exact := 0, 0
			for i, x := range xs {
				if x.IsStep || (i+1 < len(xs) && !xs[i+1].IsStep && xs[i+1].Depth > x.Depth) {
					continue
				}
				leaves++
				o := byInst[int32(i)]
				ok := true
				for c, m := range cats {
					var got int64
					if o != nil {
						got = o.cat[c]
					}
					if got > x.M[m] {
						t.Fatalf("%s step %d %s: recorded %s %d > metric %d", x.Unit, x.Step, x.Phase, m.Name(), got, x.M[m])
					}
					ok = ok && got == x.M[m]
				}
				if ok {
					exact++
				}
			}
			if exact < leaves*99/100 {
				t.Errorf("only %d of %d leaf instances have records summing to their API metrics", exact, leaves)
			}
			t.Logf("%d records, %d instances, %d of %d leaves exact", len(res.Calls), len(xs), exact, leaves)
		})
	}
}

// TestCallsOffByDefault: without Options.Calls nothing is recorded.
func TestCallsOffByDefault(t *testing.T) {
	res := segment(t, "eager_graph_small", phases.Options{})
	if res.Calls != nil || res.CallAPIs != nil {
		t.Fatalf("recorded %d calls without Options.Calls", len(res.Calls))
	}
}
