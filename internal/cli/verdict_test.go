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
		{"verdict", "--phases", graphPhases, fx.XZ},                                                // --min-gain is required
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
