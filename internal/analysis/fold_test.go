package analysis

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nsysphase/nsysphase/phases"
)

// TestFoldPhases: beyond MaxPhases distinct phases, the ones with the most
// wall time stay and the rest become one phase, with a warning; the step,
// (unannotated) and other threads' rows always stay.
func TestFoldPhases(t *testing.T) {
	n := MaxPhases + 100
	xs := []phases.Instance{{Phase: "step", IsStep: true}}
	order := []string{"step"}
	for i := range n {
		p := fmt.Sprintf("p%05d", i)
		x := phases.Instance{Phase: p, Depth: 1}
		x.M[phases.Wall] = int64(i + 1) // p00000 has the least wall
		xs = append(xs, x)
		order = append(order, p)
	}
	xs = append(xs, phases.Instance{Phase: phases.Unannotated, Depth: 1}, phases.Instance{Phase: "backward (autograd thread)", Depth: 1, OtherThread: true})
	order = append(order, phases.Unannotated, "backward (autograd thread)")
	st := phases.StoreOf(xs)
	w, ok := foldPhases(st, "step", &order)
	xs = st.All()
	if !ok || w.Code != WarnPhasesFolded {
		t.Fatalf("no fold warning: %+v", w)
	}
	distinct := map[string]bool{}
	for _, x := range xs {
		distinct[x.Phase] = true
	}
	if len(distinct) != MaxPhases+4 || !distinct[OtherPhases] || distinct["p00000"] || !distinct[fmt.Sprintf("p%05d", n-1)] || !distinct[phases.Unannotated] {
		t.Errorf("%d distinct phases after folding; want the %d with most wall, the step, (unannotated), the autograd row and %q", len(distinct), MaxPhases, OtherPhases)
	}
	if len(order) != MaxPhases+4 || slices.Index(order, OtherPhases) != 1 || order[len(order)-1] != "backward (autograd thread)" {
		t.Errorf("order %d long, %q at %d", len(order), OtherPhases, slices.Index(order, OtherPhases))
	}
	few := []phases.Instance{{Phase: "a"}, {Phase: "b"}}
	if _, ok := foldPhases(phases.StoreOf(few), "s", &[]string{"s", "a", "b"}); ok {
		t.Error("folded two phases")
	}
}
