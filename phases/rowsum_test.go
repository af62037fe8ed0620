package phases

import (
	"math"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// checkRowsAddUp asserts, on one analysis, what the step's rows promise:
// every step whose range has children has one (unannotated) row, its
// depth-1 rows on its own thread (phases and (unannotated)) sum to it
// (±0.1% over all steps), and another thread's rows are one per name and
// step, a row without a wall holding none. It returns the steps checked.
func checkRowsAddUp(t *testing.T, name string, res *Result) int {
	t.Helper()
	xs := res.Instances
	var stepWall, ownWall float64
	steps := 0
	for i := 0; i < len(xs); {
		st := &xs[i]
		if !st.IsStep {
			t.Fatalf("%s: instance %d (%q) does not follow a step", name, i, st.Phase)
		}
		j := i + 1
		rest, own := 0, int64(0)
		kids := false
		seen := map[string]bool{}
		for ; j < len(xs) && !xs[j].IsStep; j++ {
			x := &xs[j]
			switch {
			case x.OtherThread:
				if seen[x.Phase] {
					t.Errorf("%s: step %d has two %q rows (another thread's row counted twice)", name, st.Step, x.Phase)
				}
				seen[x.Phase] = true
				if x.IsNull(Wall) && x.M[Wall] != 0 {
					t.Errorf("%s: %q has a null wall but holds %d ns", name, x.Phase, x.M[Wall])
				}
			case x.Depth == 1:
				kids = true
				own += x.M[Wall]
				if x.Phase == Unannotated {
					rest++
				}
			}
		}
		if kids {
			steps++
			stepWall += float64(st.M[Wall])
			ownWall += float64(own)
			if rest != 1 {
				t.Errorf("%s: step %d (%q) has %d (unannotated) rows, want 1", name, st.Step, st.Phase, rest)
			}
		}
		i = j
	}
	if steps > 0 && math.Abs(ownWall-stepWall) > 0.001*stepWall {
		t.Errorf("%s: depth-1 rows sum to %.0f ns over %d steps, the steps to %.0f ns (want ±0.1%%)", name, ownWall, steps, stepWall)
	}
	return steps
}

// TestDepthOneRowsAddUp: on every bundled PyTorch recording (eager, CUDA
// graphs, emit_nvtx, DDP, the profiler's ProfilerStep#N loop) the step's
// depth-1 rows add up to it, with no option given.
func TestDepthOneRowsAddUp(t *testing.T) {
	t.Parallel()
	fxs := fixture.All(t)
	if !testing.Short() {
		fxs = fixture.WithExtra(t)
	}
	for _, fx := range fxs {
		if fx.Name == fixture.LargeName || fx.Name == "nvtx_streams" || fx.Name == "jax_nvtx" {
			continue // the large export (covered by the small ones' shapes); not PyTorch
		}
		res := segmentPath(t, fx.SQLite(t), Options{})
		if n := checkRowsAddUp(t, fx.Name, res); fx.Name == "profiler_step" && n != 40 {
			t.Errorf("profiler_step: %d steps with rows, want all 40 ProfilerStep#N", n)
		}
	}
}
