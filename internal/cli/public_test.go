package cli_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// TestPublicCorpusCommands runs the real command entry over every export of
// the public corpus (third-party files, nsys 2020.3 → 2026.1, skipped where
// ../shared is absent): `info` and `ranges` exit 0 on every export and 2 on
// the one file that is not an export; `analyze` exits 0 with a non-empty
// summary on every export with CUDA API calls or closed NVTX ranges, and 2
// with one line saying there is nothing to analyse on the others.
func TestPublicCorpusCommands(t *testing.T) {
	t.Parallel()
	for _, fx := range fixture.Public(t) {
		t.Run(fx.Name, func(t *testing.T) {
			path := fx.SQLite(t)
			run := func(args ...string) (int, string, string) {
				var stdout, stderr bytes.Buffer
				code := cli.Main(append(args, path), &stdout, &stderr)
				return code, stdout.String(), stderr.String()
			}
			if fx.Name == fixture.NotNsysPublic {
				for _, cmd := range []string{"info", "ranges", "analyze"} {
					code, _, stderr := run(cmd)
					if code != 2 || !strings.Contains(stderr, "not an Nsight Systems export") {
						t.Errorf("%s: exit %d, stderr %q; want 2 and “not an Nsight Systems export”", cmd, code, stderr)
					}
				}
				return
			}
			for _, cmd := range []string{"info", "ranges"} {
				if code, _, stderr := run(cmd); code != 0 {
					t.Errorf("%s: exit %d: %s", cmd, code, stderr)
				}
			}
			events := hasEvents(t, path)
			code, stdout, stderr := run("analyze", "--format", "json", "--resamples", "1999")
			if !events {
				if code != 2 || !strings.Contains(stderr, "no events to analyse") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
					t.Errorf("analyze on an export without events: exit %d, stderr %q; want 2 and one line “no events to analyse”", code, stderr)
				}
				return
			}
			if code != 0 {
				t.Fatalf("analyze: exit %d: %s", code, stderr)
			}
			var doc struct {
				Step    string            `json:"step"`
				Summary []json.RawMessage `json:"summary"`
				Inputs  []struct {
					StepChoice struct {
						Mode, Why string
					} `json:"step_choice"`
				} `json:"inputs"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatalf("analyze json: %v", err)
			}
			if len(doc.Summary) == 0 {
				t.Error("analyze: empty summary")
			}
			if len(doc.Inputs) != 1 || doc.Inputs[0].StepChoice.Why == "" || !strings.Contains(doc.Inputs[0].StepChoice.Why, doc.Step) {
				t.Errorf("analyze: the step choice is not stated: %+v (step %q)", doc.Inputs, doc.Step)
			}
			t.Logf("step %q (%s), %d summary rows", doc.Step, doc.Inputs[0].StepChoice.Mode, len(doc.Summary))
		})
	}
}

// hasEvents reports whether an export holds CUDA API calls or closed NVTX
// ranges: what analyze needs.
func hasEvents(t *testing.T, path string) bool {
	t.Helper()
	f, err := nsys.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ext, err := f.APIExtents()
	if err != nil {
		t.Fatal(err)
	}
	if len(ext) > 0 {
		return true
	}
	// CPU samples alone make one whole-process phase per sampled process.
	if samples, err := f.SampleExtents(); err != nil {
		t.Fatal(err)
	} else if len(samples) > 0 {
		return true
	}
	for e, err := range f.NVTXEvents() {
		if err != nil {
			t.Fatal(err)
		}
		if nsys.IsRange(e.EventType) && e.HasEnd {
			return true
		}
	}
	return false
}
