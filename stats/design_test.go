package stats

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/nsysphase/nsysphase/stats/internal/dgp"
)

func kRounds(k, l int) dgp.Params {
	p := dgp.D1()
	p.K, p.L = k, l
	return p
}

// §9.4: K = 3…7 picks the jackknife-t and omits p90/p99 CIs; K ≤ 2 gives no
// between-unit CI, per-round values and the replication warnings.
func TestSmallNLadder(t *testing.T) {
	for k := 3; k <= 7; k++ {
		r, err := Analyze("p", []string{"wall"}, dgpUnits(dgp.Generate(kRounds(k, 100), uint64(k), 1)), Options{Quantiles: true, Baseline: "A"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Method != MethodJackknife || r.N != k || r.Arms[0].Method != MethodJackknife {
			t.Fatalf("K=%d: method %s n %d", k, r.Method, r.N)
		}
		for _, st := range []string{StatMean, StatMedian} {
			if c := findCmp(r, "wall", st); c.RatioCI == nil || c.DiffCI == nil || c.Method != MethodJackknife || !slices.Contains(c.Warnings, WarnLowReplication) {
				t.Fatalf("K=%d %s: %+v", k, st, c)
			}
		}
		for _, st := range []string{StatP90, StatP99} {
			if c := findCmp(r, "wall", st); c.RatioCI != nil || c.DiffCI != nil || !slices.Contains(c.Warnings, WarnQuantileCIOmitted) {
				t.Fatalf("K=%d %s: quantile CI present", k, st)
			}
		}
		a := r.Arms[0].Metrics[0]
		if a.MeanCI == nil || a.MedianCI == nil || a.P90CI != nil || a.P99CI != nil {
			t.Fatalf("K=%d arm CIs: %+v", k, a)
		}
		if !hasCode(r.Warnings, WarnLowReplication, "B") {
			t.Fatalf("K=%d: no low_replication warning", k)
		}
	}
	for k := 1; k <= 2; k++ {
		r, err := Analyze("p", []string{"wall"}, dgpUnits(dgp.Generate(kRounds(k, 500), 9, uint64(k))), Options{Quantiles: true, Baseline: "A"})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Comparisons {
			if c.Method == MethodBootstrap || c.Method == MethodJackknife || c.Significant || c.Verdict != "" {
				t.Fatalf("K=%d %s: between-unit CI or verdict: %+v", k, c.Stat, c)
			}
			if len(c.Rounds) != k || !slices.Contains(c.Warnings, WarnNoReplication) || !slices.Contains(c.Warnings, WarnRunToRunExcluded) {
				t.Fatalf("K=%d %s: rounds %d warnings %v", k, c.Stat, len(c.Rounds), c.Warnings)
			}
			if k == 2 && !slices.Contains(c.Warnings, WarnLowReplication) {
				t.Fatalf("K=2: no low_replication")
			}
		}
		if !hasCode(r.Warnings, WarnNoReplication, "B") || !hasCode(r.Warnings, WarnRunToRunExcluded, "B") {
			t.Fatalf("K=%d: warnings %v", k, r.Warnings)
		}
	}
}

// §9.5: one block per arm gets a labelled within-run CI over batches.
func TestSingleBlockWithinRun(t *testing.T) {
	r, err := Analyze("p", []string{"wall"}, dgpUnits(dgp.Generate(kRounds(1, 1000), 3, 3)), Options{Baseline: "A"})
	if err != nil {
		t.Fatal(err)
	}
	c := findCmp(r, "wall", StatMedian)
	if c.Method != MethodWithinRun || c.RatioCI == nil || c.Significant || c.Verdict != "" || len(c.Rounds) != 1 {
		t.Fatalf("within-run comparison: %+v", c)
	}
	if r.Arms[0].Method != MethodWithinRun || r.Arms[0].Level != LevelBatch || r.Arms[0].N < minBatches || r.Arms[0].Metrics[0].MeanCI == nil {
		t.Fatalf("within-run arm: %+v", r.Arms[0])
	}
	if r.Designs[0].Method != MethodWithinRun || !hasCode(r.Warnings, WarnRunToRunExcluded, "A") {
		t.Fatal("within-run design or warning missing")
	}
	// Too short to cut into five batches: no CI at all.
	r, err = Analyze("p", []string{"wall"}, dgpUnits(dgp.Generate(kRounds(1, 60), 3, 3)), Options{Baseline: "A"})
	if err != nil {
		t.Fatal(err)
	}
	if c := findCmp(r, "wall", StatMean); c.Method != MethodNone || c.RatioCI != nil || c.DiffCI != nil {
		t.Fatalf("short run: %+v", c)
	}
}

// profileUnits lays out profiles, each a list of (arm, blocks).
func profileUnits(layout [][]string, blocks int) []Unit {
	var units []Unit
	start := int64(0)
	for p, arms := range layout {
		for b, arm := range arms {
			for range blocks {
				steps := make([]float64, 50)
				for i := range steps {
					steps[i] = 1e6 * (1 + 0.1*math.Sin(float64(start+int64(i))))
				}
				units = append(units, Unit{ID: fmt.Sprintf("p%d#%s-%d-%d", p, arm, b, start), Arm: arm,
					Profile: fmt.Sprintf("run%d.sqlite", p), Start: start * 1e9, Steps: [][]float64{steps}})
				start++
			}
		}
	}
	return units
}

func TestDesigns(t *testing.T) {
	cases := []struct {
		name           string
		layout         [][]string
		blocks         int
		paired         bool
		level          string
		n              int
		nonInterleaved bool
		conditional    bool
	}{
		{"one profile ABAB", [][]string{{"A", "B", "A", "B", "B", "A", "A", "B"}}, 1, true, LevelBlock, 4, false, true},
		{"one profile AABB", [][]string{{"A", "A", "B", "B"}}, 1, false, LevelBlock, 2, true, true},
		{"mixed profiles", [][]string{{"A", "B"}, {"B", "A"}, {"A", "B"}, {"A", "B"}}, 2, true, LevelProfile, 4, false, false},
		{"alternating single-arm profiles", [][]string{{"A"}, {"B"}, {"B"}, {"A"}, {"A"}, {"B"}}, 3, true, LevelProfile, 3, false, false},
		{"grouped single-arm profiles", [][]string{{"A"}, {"A"}, {"A"}, {"B"}, {"B"}, {"B"}}, 2, false, LevelProfile, 3, true, false},
		{"two single-arm profiles", [][]string{{"A"}, {"B"}}, 4, false, LevelBlock, 4, true, true},
	}
	for _, c := range cases {
		r, err := Analyze("p", []string{"wall"}, profileUnits(c.layout, c.blocks), Options{Baseline: "A"})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		d := r.Designs[0]
		if d.Paired != c.paired || d.Level != c.level || d.N != c.n {
			t.Errorf("%s: design %+v", c.name, d)
		}
		if hasCode(r.Warnings, WarnNonInterleaved, "B") != c.nonInterleaved {
			t.Errorf("%s: non_interleaved %v", c.name, !c.nonInterleaved)
		}
		if hasCode(r.Warnings, WarnConditionalOnProfiles, "") != c.conditional {
			t.Errorf("%s: conditional_on_profiles %v", c.name, !c.conditional)
		}
	}
}

// Two profiles that both hold both arms: blocks paired inside each profile,
// the CI conditional on the profiles, and per-profile means listed.
func TestTwoMixedProfiles(t *testing.T) {
	units := profileUnits([][]string{{"A", "B", "B", "A", "A", "B", "B", "A"}, {"B", "A", "A", "B", "A", "B", "B", "A"}}, 1)
	r, err := Analyze("p", []string{"wall"}, units, Options{Baseline: "A"})
	if err != nil {
		t.Fatal(err)
	}
	d := r.Designs[0]
	if !d.Paired || d.Level != LevelBlock || d.N != 8 || d.Method != MethodBootstrap || d.Profiles != 2 {
		t.Fatalf("design %+v", d)
	}
	c := findCmp(r, "wall", StatMean)
	if len(c.Profiles) != 2 || c.Profiles[0].Label != "run0.sqlite" || !slices.Contains(c.Warnings, WarnConditionalOnProfiles) {
		t.Fatalf("per-profile values %+v, warnings %v", c.Profiles, c.Warnings)
	}
	if c.JackknifeRatioCI == nil {
		t.Fatal("no jackknife cross-check")
	}
}

// Several arms: one comparison each against the baseline, arms in time order.
func TestThreeArms(t *testing.T) {
	units := profileUnits([][]string{{"C", "A", "B", "C", "A", "B", "A", "B", "C"}}, 1)
	r, err := Analyze("p", []string{"wall"}, units, Options{Baseline: "A"})
	if err != nil {
		t.Fatal(err)
	}
	var arms []string
	for _, a := range r.Arms {
		arms = append(arms, a.Arm)
	}
	if !slices.Equal(arms, []string{"A", "C", "B"}) || len(r.Designs) != 2 || r.Designs[0].Arm != "C" || r.Designs[1].Arm != "B" {
		t.Fatalf("arms %v designs %+v", arms, r.Designs)
	}
	r, err = Analyze("p", []string{"wall"}, units, Options{})
	if err != nil || r.Baseline != "C" {
		t.Fatalf("default baseline: %v %v", r.Baseline, err)
	}
}

// modifiedZTails counts tail steps straight from the definition, with sorting.
func modifiedZTails(xs []float64) int {
	s := slices.Sorted(slices.Values(xs))
	med := Quantile(0.5, s)
	dev := make([]float64, len(s))
	for i, v := range s {
		dev[i] = math.Abs(v - med)
	}
	slices.Sort(dev)
	mad := Quantile(0.5, dev)
	n := 0
	for _, v := range s {
		if v > med && (mad == 0 || (v-med)/(1.4826*mad) > 10) {
			n++
		}
	}
	return n
}

// §9.6: on D4 tail_limited_mean fires exactly for arms with 1–9 tail steps;
// on D2 it never fires.
func TestTailWarning(t *testing.T) {
	fired := 0
	for e := range 20 {
		for _, cell := range []struct {
			p    dgp.Params
			name string
		}{{dgp.D4(), "D4"}, {dgp.D2(), "D2"}} {
			blocks := dgp.Generate(cell.p, 77, uint64(e))
			r, err := Analyze("p", []string{"wall"}, dgpUnits(blocks), Options{Resamples: 1999, Baseline: "A"})
			if err != nil {
				t.Fatal(err)
			}
			for a, arm := range armNames {
				var xs []float64
				for _, b := range blocks {
					if b.Arm == a {
						xs = append(xs, b.Steps...)
					}
				}
				n := modifiedZTails(xs)
				want := n >= 1 && n <= 9
				got := hasCode(r.Warnings, WarnTailLimitedMean, arm)
				if got != want {
					t.Fatalf("%s experiment %d arm %s: %d tail steps, warning %v", cell.name, e, arm, n, got)
				}
				if cell.name == "D2" && got {
					t.Fatalf("D2 experiment %d: tail warning fired", e)
				}
				if got {
					fired++
				}
			}
		}
	}
	if fired == 0 {
		t.Fatal("the tail warning never fired on D4")
	}
}
