package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

const graphPhases = "action_apply,physics_step,scene_read_refresh,observation,reward"

// boundaryDoc is the part of the boundary JSON contract the tests read.
type boundaryDoc struct {
	Phases     []string `json:"phases"`
	Capturable bool     `json:"capturable"`
	Arms       map[string]struct {
		Capturable bool `json:"capturable"`
		SavingNs   struct {
			Mean   float64     `json:"mean"`
			MeanCI *[2]float64 `json:"mean_ci"`
		} `json:"saving_ns"`
	} `json:"arms"`
	Blockers []struct {
		Arm     string  `json:"arm"`
		Phase   string  `json:"phase"`
		Kind    string  `json:"kind"`
		API     string  `json:"api"`
		PerStep float64 `json:"per_step"`
		TotalNs int64   `json:"total_ns"`
	} `json:"blockers"`
	Inside  []string `json:"inside"`
	Outside []string `json:"outside"`
}

func boundaryJSON(t *testing.T, args ...string) boundaryDoc {
	t.Helper()
	out, errs, code := run(t, append([]string{"boundary", "--format", "json", "--resamples", "1999"}, args...)...)
	if code != 0 {
		t.Fatalf("boundary %v: exit %d: %s", args, code, errs)
	}
	var d boundaryDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestBoundaryCLI: the graph-replayed phases are capturable in eager (the
// graph arm has none of them); with termination the region is not, and the
// exit status stays 0: the verdict is data.
func TestBoundaryCLI(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "interleaved_graph")
	d := boundaryJSON(t, "--phases", graphPhases, fx.XZ)
	e, ok := d.Arms["eager"]
	if !d.Capturable || !ok || !e.Capturable || len(d.Arms) != 1 || len(d.Blockers) != 0 || e.SavingNs.MeanCI == nil || e.SavingNs.Mean <= 0 || len(d.Inside) != 5 {
		t.Fatalf("graph region: %+v", d)
	}
	d = boundaryJSON(t, "--phases", "reward,termination", fx.XZ)
	if d.Capturable || d.Arms["eager"].Capturable || d.Arms["graph"].Capturable || len(d.Blockers) != 2 {
		t.Fatalf("reward,termination: %+v", d)
	}
	for _, b := range d.Blockers {
		if b.Phase != "termination" || b.Kind != "scalar_read" || b.PerStep != 1 || b.TotalNs <= 0 {
			t.Errorf("blocker %+v", b)
		}
	}
	out, errs, code := run(t, "boundary", "--phases", "reward,termination", "--resamples", "1999", fx.XZ)
	if code != 0 || !strings.Contains(out, "not capturable as it stands: eager (1 blocker), graph (1 blocker)") {
		t.Errorf("table: exit %d\n%s\n%s", code, out, errs)
	}
	for _, args := range [][]string{
		{"boundary", fx.XZ},                        // --phases is required
		{"boundary", "--phases", "no_such", fx.XZ}, // unknown phase
		{"boundary", "--phases", "reward", "--format", "html", fx.XZ},
	} {
		if _, errs, code := run(t, args...); code != cli.ExitInput {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, cli.ExitInput, errs)
		}
	}
	// A missing --phases is answered as check answers it: what is wanted
	// and where the names come from, not cobra's bare "required flag(s)".
	if _, errs, _ := run(t, "boundary", fx.XZ); !strings.Contains(errs, "--phases is required: the candidate capture region") || strings.Contains(errs, "required flag") {
		t.Errorf("missing --phases: %q", errs)
	}
}
