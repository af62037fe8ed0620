package phases

import (
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestStepCandidatesInsideArms: nvtx_streams has arm blocks and a one-off
// `setup` range before them that fills 82% of the traced time. It cannot
// be the step (every step outside the blocks is left out), so it is no
// candidate and no runner-up; the step repeats inside the blocks.
func TestStepCandidatesInsideArms(t *testing.T) {
	fx := fixture.ExtraNamed(t, "nvtx_streams")
	res, err := Segment(openFixture(t, fx), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc := res.StepChoice
	if sc.Step != "pipeline:step" || sc.RunnerUp == "setup" {
		t.Errorf("step %q, runner-up %q: want pipeline:step and no setup", sc.Step, sc.RunnerUp)
	}
	for _, cd := range sc.Candidates {
		if cd.Name == "setup" {
			t.Errorf("candidate %+v lies outside every arm block", cd)
		}
		if cd.Coverage > 2*sc.Coverage && !cd.Library {
			t.Errorf("candidate %+v covers far more than the step (%v)", cd, sc.Coverage)
		}
	}
}
