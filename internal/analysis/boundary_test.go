package analysis

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// graphRegion are the phases the graph arm replays as one CUDA graph.
var graphRegion = []string{"action_apply", "physics_step", "scene_read_refresh", "observation", "reward"}

var testOptions = statsOptions(1)

// TestBoundaryGraphRegion: the phases the graph arm captures hold no blocker
// in the eager arm; a region that takes in termination (bool(done.any()))
// is not capturable in either arm.
func TestBoundaryGraphRegion(t *testing.T) {
	fx := fixture.Get(t, "interleaved_graph")
	files, frames := readCalls(t, fx.XZ, 1)

	b, err := BuildBoundary(files, frames, graphRegion, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Capturable || !slices.Equal(b.ArmOrder, []string{"eager"}) || !slices.Equal(b.ArmsWithout, []string{"graph"}) || len(b.Blockers) != 0 {
		t.Fatalf("capturable %v, arms %v, without %v, blockers %+v", b.Capturable, b.ArmOrder, b.ArmsWithout, b.Blockers)
	}
	if !slices.Equal(b.Inside, graphRegion) || slices.ContainsFunc(b.Outside, func(p string) bool { return slices.Contains(graphRegion, p) }) {
		t.Errorf("inside %v outside %v", b.Inside, b.Outside)
	}
	// saving_ns is launch_ns + cpu_other_ns of the region's phases, per kept step.
	var sum, wall float64
	n := 0
	for _, x := range files[0].Result.Store.All() {
		if x.Arm != "eager" || x.Warmup {
			continue
		}
		if x.IsStep {
			n++
			wall += float64(x.M[phases.Wall])
		} else if slices.Contains(graphRegion, x.Phase) {
			sum += float64(x.M[phases.Launch] + x.M[phases.CPUOther])
		}
	}
	e := b.Arms["eager"]
	if e.Steps != n || math.Abs(e.SavingNs.Mean-sum/float64(n)) > 1e-6*sum/float64(n) {
		t.Errorf("saving mean %v over %d steps, want %v over %d", e.SavingNs.Mean, e.Steps, sum/float64(n), n)
	}
	if ci := e.SavingNs.MeanCI; ci == nil || ci[0] > e.SavingNs.Mean || ci[1] < e.SavingNs.Mean || e.SavingNs.Method != stats.MethodJackknife {
		t.Errorf("saving CI %v (%s)", ci, e.SavingNs.Method)
	}
	if sh := e.SavingShare; math.Abs(sh.Value-sum/wall) > 1e-9 || sh.CI == nil || sh.CI[0] > sh.Value || sh.CI[1] < sh.Value || sh.NUnits != 3 {
		t.Errorf("share %+v, want %v", sh, sum/wall)
	}

	b, err = BuildBoundary(files, frames, []string{"reward", "termination"}, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	if b.Capturable || b.Arms["eager"].Capturable || b.Arms["graph"].Capturable || !slices.Equal(b.Arms["graph"].PhasesMissing, []string{"reward"}) {
		t.Fatalf("reward,termination: capturable %v, arms %+v", b.Capturable, b.Arms)
	}
	for _, bl := range b.Blockers {
		if bl.Phase != "termination" || bl.Kind != KindScalarRead || bl.PerStep != 1 || !bl.Blocking {
			t.Errorf("unexpected blocker %+v", bl)
		}
	}
	if len(b.Blockers) != 2 {
		t.Errorf("%d blockers, want termination's read in each arm", len(b.Blockers))
	}
}

// TestBoundaryBranches: events takes the masked_select path every 25 steps
// (a data-dependent branch and a dynamic-shape read); reset_mask skips
// nonzero() in the steps where no env finished.
func TestBoundaryBranches(t *testing.T) {
	fx := fixture.Get(t, "interleaved_graph")
	files, frames := readCalls(t, fx.XZ, 1)
	b, err := BuildBoundary(files, frames, []string{"events", "reset_mask"}, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[[3]string]Blocker{}
	for _, bl := range b.Blockers {
		kinds[[3]string{bl.Arm, bl.Phase, bl.Kind}] = bl
	}
	for _, arm := range []string{"eager", "graph"} {
		br, ok := kinds[[3]string{arm, "events", KindBranch}]
		if !ok || br.PerStep != 6.0/150 || br.Calls != 6 || br.Cadence != CadenceInterval {
			t.Errorf("%s events branch: %+v", arm, br)
		}
		if _, ok := kinds[[3]string{arm, "events", KindDynamicShape}]; !ok {
			t.Errorf("%s events: no dynamic_shape blocker", arm)
		}
		if _, ok := kinds[[3]string{arm, "events", KindPageableH2D}]; !ok {
			t.Errorf("%s events: no pageable_h2d blocker", arm)
		}
	}
	// The eager arm has steps without any finished env: reset_mask then
	// launches nothing.
	if br, ok := kinds[[3]string{"eager", "reset_mask", KindBranch}]; !ok || br.Calls < 1 {
		t.Errorf("eager reset_mask branch: %+v", br)
	}
}

func TestBoundaryUsageErrors(t *testing.T) {
	fx := fixture.Get(t, "eager_graph_small")
	files, frames := readCalls(t, fx.XZ, 1)
	for _, region := range [][]string{nil, {"no_such_phase"}, {"collector_step"}} {
		_, err := BuildBoundary(files, frames, region, testOptions)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("--phases %v: error %v, want a usage error", region, err)
		}
	}
}

// TestVerdictConsistent: the decision follows the share's CI, and the graph
// arm's measured gain is the step comparison analyze reports.
func TestVerdictConsistent(t *testing.T) {
	fx := fixture.Get(t, "interleaved_graph")
	files, frames := readCalls(t, fx.XZ, 1)
	v, err := BuildVerdict(files, frames, graphRegion, 0.10, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	ci := v.Removable.CI
	if v.Verdict != VerdictGo || v.Arm != "eager" || ci == nil || ci[0] < 0.10 || !v.Capturable || v.Reason == "" {
		t.Fatalf("verdict %s in %s, share %v %v, capturable %v: %s", v.Verdict, v.Arm, v.Removable.Value, ci, v.Capturable, v.Reason)
	}
	for _, c := range []struct {
		gain float64
		want Decision
	}{{ci[1] + 0.01, VerdictNoGo}, {(ci[0] + ci[1]) / 2, VerdictInconclusive}, {ci[0], VerdictGo}} {
		v2, err := BuildVerdict(files, frames, graphRegion, c.gain, testOptions)
		if err != nil {
			t.Fatal(err)
		}
		if v2.Verdict != c.want {
			t.Errorf("min gain %v with CI %v: %s, want %s", c.gain, ci, v2.Verdict, c.want)
		}
	}
	if len(v.ArmGains) != 1 || v.ArmGains[0].Arm != "graph" || v.ArmGains[0].Gain == nil {
		t.Fatalf("arm gains %+v", v.ArmGains)
	}
	doc, err := Build(context.Background(), files, testOptions, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Comparisons {
		if c.Phase == doc.Step && c.Metric == "wall_ns" && c.Stat == stats.StatMean && c.Arm == "graph" {
			g := v.ArmGains[0]
			if *g.Ratio != *c.Ratio || *g.Gain != 1-*c.Ratio || g.GainCI[0] != 1-c.RatioCI[1] || g.GainCI[1] != 1-c.RatioCI[0] {
				t.Errorf("gain %v %v, analyze ratio %v %v", *g.Gain, g.GainCI, *c.Ratio, c.RatioCI)
			}
			if g.DiffNs != c.Diff || g.DiffCI == nil || g.DiffCI[0] != c.DiffCI[0] || g.DiffCI[1] != c.DiffCI[1] {
				t.Errorf("difference %v %v, analyze %v %v", g.DiffNs, g.DiffCI, c.Diff, c.DiffCI)
			}
			// What the graph arm gained against the prediction:
			// TestCapturePredictsGraphArm.
			return
		}
	}
	t.Fatal("no step wall comparison in analyze")
}
