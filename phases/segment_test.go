package phases_test

import (
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

func segment(t *testing.T, name string, opt phases.Options) *phases.Result {
	t.Helper()
	fx := fixture.Get(t, name)
	f, err := nsys.Open(fx.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := phases.Segment(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestWallPartsSum checks on every fixture that the six exclusive parts sum
// to wall for every instance and that no part is negative.
func TestWallPartsSum(t *testing.T) {
	for _, fx := range fixture.All(t) {
		t.Run(fx.Name, func(t *testing.T) {
			res := segment(t, fx.Name, phases.Options{})
			if len(res.Instances) == 0 {
				t.Fatal("no instances")
			}
			for _, x := range res.Instances {
				var sum int64
				for _, p := range phases.WallParts() {
					if x.M[p] < 0 {
						t.Fatalf("%s step %d %s: %s = %d < 0", x.Unit, x.Step, x.Phase, p.Name(), x.M[p])
					}
					sum += x.M[p]
				}
				if sum != x.M[phases.Wall] {
					t.Fatalf("%s step %d %s: parts sum %d != wall %d", x.Unit, x.Step, x.Phase, sum, x.M[phases.Wall])
				}
			}
			t.Logf("%s: step %q, %d instances, arms %v, excluded %+v", fx.Name, res.StepName, len(res.Instances), res.Arms, res.Excluded)
		})
	}
}
