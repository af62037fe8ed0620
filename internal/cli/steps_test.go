package cli_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
	nsphases "github.com/nsysphase/nsysphase/phases"
)

// stepLabel is what a person reading the program would choose as its step
// and phases (steps.json beside the public corpus).
type stepLabel struct {
	Step      string   `json:"step"`
	NotStep   string   `json:"not_step"`
	PhasesAny []string `json:"phases_any"`
	MaxPhases *int     `json:"max_phases"`
	Covers    *float64 `json:"covers"`
}

// TestStepsAsAPersonWouldChoose runs analyze with no options on every
// labelled export of the public corpus and checks the step and phases
// against steps.json, with the rules of its check_steps.py (which also runs
// on the same JSON where python3 is installed). Skipped without ../shared.
func TestStepsAsAPersonWouldChoose(t *testing.T) {
	t.Parallel()
	dir := fixture.PublicDir()
	raw, err := os.ReadFile(filepath.Join(dir, "steps.json"))
	if err != nil {
		t.Skipf("no steps.json in %s", dir)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	byName := map[string]fixture.Fixture{}
	for _, fx := range fixture.Public(t) {
		byName[fx.Name] = fx
	}
	names := make([]string, 0, len(all))
	for n := range all {
		if !strings.HasPrefix(n, "_") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	python, _ := exec.LookPath("python3")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			fx, ok := byName[name]
			if !ok {
				t.Skipf("%s is not in the corpus here", name)
			}
			var lab stepLabel
			if err := json.Unmarshal(all[name], &lab); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := cli.Main([]string{"analyze", "--format", "json", "--no-stats", fx.SQLite(t)}, &stdout, &stderr); code != 0 {
				t.Fatalf("analyze: exit %d: %s", code, stderr.String())
			}
			var doc struct {
				Step    string   `json:"step"`
				Phases  []string `json:"phases"`
				Summary []struct {
					Arm     string `json:"arm"`
					Phase   string `json:"phase"`
					N       int    `json:"n"`
					Metrics map[string]*struct {
						Mean float64 `json:"mean"`
					} `json:"metrics"`
				} `json:"summary"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			match := func(rx, s string) bool { return regexp.MustCompile("(?i)" + rx).MatchString(s) }
			if !match(lab.Step, doc.Step) {
				t.Errorf("step %q does not match %q", doc.Step, lab.Step)
			}
			if lab.NotStep != "" && match(lab.NotStep, doc.Step) {
				t.Errorf("step %q matches %q, which a person would not choose", doc.Step, lab.NotStep)
			}
			var phases []string
			for _, p := range doc.Phases {
				if p != doc.Step {
					phases = append(phases, p)
				}
			}
			for _, rx := range lab.PhasesAny {
				found := false
				for _, p := range phases {
					found = found || match(rx, p)
				}
				if !found {
					t.Errorf("no phase matches %q (phases %q)", rx, phases)
				}
			}
			if lab.MaxPhases != nil && len(phases) > *lab.MaxPhases {
				t.Errorf("%d phases, want at most %d", len(phases), *lab.MaxPhases)
			}
			// covers (check_steps.py's rule): the rows other than the step,
			// each row's mean wall × its n per step (a null wall, a row
			// without ranges of its own, adds nothing), cover this share
			// of the step's.
			stepWall, ownRows, allRows := 0.0, 0.0, 0.0
			arm0 := ""
			if len(doc.Summary) > 0 {
				arm0 = doc.Summary[0].Arm
			}
			stepN := 0
			for _, r := range doc.Summary {
				if r.Arm == arm0 && r.Phase == doc.Step {
					stepN = r.N
					if w := r.Metrics["wall_ns"]; w != nil {
						stepWall = w.Mean
					}
				}
			}
			for _, r := range doc.Summary {
				w := r.Metrics["wall_ns"]
				if r.Arm != arm0 || r.Phase == doc.Step || w == nil || stepN == 0 {
					continue
				}
				v := w.Mean * float64(r.N) / float64(stepN)
				allRows += v
				if !nsphases.IsOtherThreadRow(r.Phase) {
					ownRows += v
				}
			}
			if lab.Covers != nil && stepWall > 0 && allRows/stepWall < *lab.Covers {
				t.Errorf("phases cover %.1f%% of the step, want at least %.0f%%", 100*allRows/stepWall, 100**lab.Covers)
			}
			// The step's own depth-1 rows (its phases and (unannotated))
			// add up to it (±0.1%) wherever it has any.
			if ownRows > 0 && math.Abs(ownRows-stepWall) > 0.001*stepWall {
				t.Errorf("depth-1 rows sum to %.0f ns per step, the step is %.0f ns (want ±0.1%%)", ownRows, stepWall)
			}
			if python != "" {
				js := filepath.Join(t.TempDir(), "analysis.json")
				if err := os.WriteFile(js, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command(python, filepath.Join(dir, "check_steps.py"), filepath.Join(dir, "steps.json"), name, js).CombinedOutput()
				if err != nil {
					t.Errorf("check_steps.py: %v: %s", err, out)
				}
			}
		})
	}
}
