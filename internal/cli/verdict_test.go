package cli_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestVerdictExitCodes: go 0, no-go 1, inconclusive 3 (with a warning on
// stderr), unusable input 2; the decision follows the printed CI.
func TestVerdictExitCodes(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "interleaved_graph")
	base := []string{"verdict", "--phases", graphPhases, "--resamples", "1999", "--format", "json"}
	out, errs, code := run(t, append(base, "--min-gain", "10%", fx.XZ)...)
	if code != cli.ExitOK {
		t.Fatalf("10%%: exit %d: %s", code, errs)
	}
	var v struct {
		Verdict   string `json:"verdict"`
		Arm       string `json:"arm"`
		Reason    string `json:"reason"`
		Removable struct {
			Value float64     `json:"value"`
			CI    *[2]float64 `json:"ci"`
		} `json:"removable_share"`
		ArmGains []struct {
			Arm  string   `json:"arm"`
			Gain *float64 `json:"gain"`
		} `json:"arm_gains"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	ci := v.Removable.CI
	if v.Verdict != "go" || v.Arm != "eager" || ci == nil || ci[0] < 0.10 || len(v.ArmGains) != 1 || v.ArmGains[0].Arm != "graph" || v.ArmGains[0].Gain == nil {
		t.Fatalf("10%%: %+v", v)
	}
	for _, c := range []struct {
		gain string
		code int
	}{
		{fmt.Sprintf("%.4f", ci[1]+0.005), cli.ExitGate},
		{fmt.Sprintf("%.6f", (ci[0]+ci[1])/2), cli.ExitInconclusive},
	} {
		out, errs, code := run(t, "verdict", "--phases", graphPhases, "--resamples", "1999", "--min-gain", c.gain, fx.XZ)
		if code != c.code {
			t.Errorf("--min-gain %s: exit %d, want %d\n%s", c.gain, code, c.code, errs)
		}
		if !strings.HasPrefix(out, "verdict: ") || !strings.Contains(out, "measured gains over eager") {
			t.Errorf("--min-gain %s: output\n%s", c.gain, out)
		}
		if c.code == cli.ExitInconclusive && !strings.Contains(errs, "inconclusive") {
			t.Errorf("inconclusive without a warning on stderr: %q", errs)
		}
		if c.code == cli.ExitGate && errs != "" {
			t.Errorf("no-go printed on stderr: %q", errs)
		}
	}
	for _, args := range [][]string{
		{"verdict", fx.XZ}, // --phases is required (--min-gain has a default, 10%)
		{"verdict", "--phases", graphPhases, "--min-gain", "abc", fx.XZ},                           // not a share
		{"verdict", "--phases", graphPhases, "--min-gain", "10", fx.XZ},                            // 10 is not a share: 10% or 0.10
		{"verdict", "--phases", graphPhases, "--min-gain", "0%", fx.XZ},                            // nothing to decide
		{"verdict", "--phases", "graph_replay", "--min-gain", "10%", "--baseline", "eager", fx.XZ}, // eager has no graph_replay
	} {
		if _, errs, code := run(t, args...); code != cli.ExitInput {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, cli.ExitInput, errs)
		}
	}
}

// TestVerdictBoundFormats: the bounded saving's parts reach every format
// verdict has: JSON with CIs for each part, the one-row CSV, the table and
// Markdown with the parts and the region's phases; boundary's JSON carries
// the same bound per arm.
func TestVerdictBoundFormats(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "interleaved_graph")
	base := []string{"verdict", "--phases", graphPhases, "--min-gain", "10%", "--resamples", "1999", fx.XZ}
	out, errs, code := run(t, append(base, "--format", "json")...)
	if code != cli.ExitOK {
		t.Fatalf("json: exit %d: %s", code, errs)
	}
	type est struct {
		Mean   float64     `json:"mean"`
		MeanCI *[2]float64 `json:"mean_ci"`
	}
	var v struct {
		RemovableNs est `json:"removable_ns"`
		Bound       struct {
			RemovableNs est `json:"removable_ns"`
			HostNs      est `json:"host_ns"`
			GPUFloorNs  est `json:"gpu_floor_ns"`
			CeilingNs   est `json:"ceiling_ns"`
			IfFixed     est `json:"removable_if_fixed_ns"`
			Replay      struct {
				Source      string `json:"source"`
				PerLaunchNs int64  `json:"per_launch_ns"`
				Calls       int    `json:"calls"`
			} `json:"replay"`
			Phases []struct {
				Phase  string `json:"phase"`
				Status string `json:"status"`
				HostNs est    `json:"host_ns"`
			} `json:"phases"`
		} `json:"bound"`
		ArmGains []struct {
			DiffNs float64     `json:"diff_ns"`
			DiffCI *[2]float64 `json:"diff_ci"`
		} `json:"arm_gains"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	b := v.Bound
	for name, e := range map[string]est{"removable": b.RemovableNs, "host": b.HostNs, "floor": b.GPUFloorNs, "ceiling": b.CeilingNs, "if fixed": b.IfFixed} {
		if e.MeanCI == nil || e.MeanCI[0] > e.Mean || e.MeanCI[1] < e.Mean {
			t.Errorf("%s: mean %v, CI %v", name, e.Mean, e.MeanCI)
		}
	}
	same := func(a, b est) bool {
		return a.Mean == b.Mean && a.MeanCI != nil && b.MeanCI != nil && *a.MeanCI == *b.MeanCI
	}
	if !same(v.RemovableNs, b.RemovableNs) || b.Replay.Source != "measured" || b.Replay.PerLaunchNs != 72784 || b.Replay.Calls != 150 || len(b.Phases) != 5 {
		t.Errorf("verdict %+v", v)
	}
	for _, p := range b.Phases {
		if p.Status != "removable" || p.HostNs.MeanCI == nil {
			t.Errorf("phase %+v", p)
		}
	}
	if len(v.ArmGains) != 1 || v.ArmGains[0].DiffNs >= 0 || v.ArmGains[0].DiffCI == nil {
		t.Errorf("arm gains %+v", v.ArmGains)
	}

	out, errs, code = run(t, append(base, "--format", "csv")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != cli.ExitOK || len(lines) != 2 || !strings.Contains(lines[0], ",removable_ns,removable_ns_ci_lo,removable_ns_ci_hi,host_ns,gpu_floor_ns,replay_ns,") ||
		!strings.Contains(lines[1], ",72784,measured,") {
		t.Errorf("csv: exit %d\n%s%s", code, out, errs)
	}
	for _, f := range []string{"table", "markdown"} {
		out, errs, code = run(t, append(base, "--format", f)...)
		for _, want := range []string{"removable 895.1 µs/step [820.0, 977.0] = 51.5% [51.1%, 51.9%] of step wall 1737.8 µs",
			"replay: 72.8 µs per cudaGraphLaunch, the mean of the inputs' 150 calls", "physics_step", "launches_nothing"} {
			if want == "launches_nothing" {
				if strings.Contains(out, want) {
					t.Errorf("%s: no phase of this region launches nothing:\n%s", f, out)
				}
				continue
			}
			if code != cli.ExitOK || !strings.Contains(out, want) {
				t.Errorf("%s: exit %d, no %q in\n%s%s", f, code, want, out, errs)
			}
		}
	}

	out, _, _ = run(t, "boundary", "--format", "json", "--resamples", "1999", "--phases", graphPhases, fx.XZ)
	var bd struct {
		Arms map[string]struct {
			Bound *struct {
				RemovableNs est `json:"removable_ns"`
			} `json:"bound"`
		} `json:"arms"`
	}
	if err := json.Unmarshal([]byte(out), &bd); err != nil {
		t.Fatal(err)
	}
	if e := bd.Arms["eager"].Bound; e == nil || !same(e.RemovableNs, b.RemovableNs) {
		t.Errorf("boundary's bound %+v, verdict's %+v", e, b.RemovableNs)
	}
}
