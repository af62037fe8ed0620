package cli_test

// Provenance in analyze, reviewed with the inventory work: the evidence the
// trace gives against the run manifest, and mismatches reported loudly.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

type provenanceDoc struct {
	Provenance []struct {
		File       string         `json:"file"`
		Manifest   map[string]any `json:"manifest"`
		Mismatches []string       `json:"mismatches"`
		Claims     *struct {
			CUDAProcessSharing *string        `json:"cuda_process_sharing"`
			CUDAGraphEnabled   *bool          `json:"cuda_graph_enabled"`
			StepsByArm         map[string]int `json:"steps_by_arm"`
		} `json:"claims"`
		Provenance struct {
			GPUs []struct {
				UUID string `json:"uuid"`
			} `json:"gpus"`
			CUDAContexts []struct {
				GPU, Pid, ContextID int64
			} `json:"cuda_contexts"`
		} `json:"provenance"`
		Evidence struct {
			MPSActive  bool             `json:"mps_active"`
			Overlap    int64            `json:"cross_process_gpu_overlap_ns"`
			GraphByArm map[string]int64 `json:"graph_launches_by_arm"`
			StepsByArm map[string]int64 `json:"steps_by_arm"`
			GPUClients []struct {
				GPU      int64   `json:"gpu"`
				Pid      int64   `json:"pid"`
				Process  string  `json:"process"`
				Contexts []int64 `json:"contexts"`
				BusyNs   int64   `json:"busy_ns"`
			} `json:"gpu_clients"`
		} `json:"evidence"`
	} `json:"provenance"`
}

func provenanceJSON(t *testing.T, args ...string) (provenanceDoc, string) {
	t.Helper()
	out, errs, code := run(t, append([]string{"analyze", "--no-stats", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("analyze %v: exit %d: %s", args, code, errs)
	}
	var d provenanceDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	return d, errs
}

// TestProvenanceEvidence: the MPS runs show kernels of the learner and the
// collector overlapping on the GPU, the null runs exactly none; both list the
// two processes with their context on GPU 0. The graph arm launches one
// graph per step, the eager arm none. The manifests agree with the traces.
func TestProvenanceEvidence(t *testing.T) {
	t.Parallel()
	var files []string
	for _, n := range []string{"sharing_null_1", "sharing_mps_1", "sharing_null_2", "sharing_mps_2"} {
		files = append(files, fixture.Get(t, n).XZ)
	}
	d, errs := provenanceJSON(t, append([]string{"--arm-key", "training.cuda_process_sharing"}, files...)...)
	if len(d.Provenance) != 4 || strings.Contains(errs, "mismatch") {
		t.Fatalf("%d provenance rows; stderr %s", len(d.Provenance), errs)
	}
	for _, p := range d.Provenance {
		mps := strings.Contains(p.File, "mps")
		ev := p.Evidence
		if ev.MPSActive != mps || (mps && ev.Overlap <= 0) || (!mps && ev.Overlap != 0) {
			t.Errorf("%s: mps_active %v, overlap %d ns", p.File, ev.MPSActive, ev.Overlap)
		}
		if len(ev.GPUClients) != 2 || len(p.Provenance.CUDAContexts) != 2 {
			t.Fatalf("%s: gpu clients %+v, contexts %+v", p.File, ev.GPUClients, p.Provenance.CUDAContexts)
		}
		for _, c := range ev.GPUClients {
			if c.GPU != 0 || c.Process != "python3" || len(c.Contexts) != 1 || c.Contexts[0] != 1 || c.BusyNs <= 0 {
				t.Errorf("%s: client %+v", p.File, c)
			}
		}
		if len(p.Mismatches) != 0 || p.Claims == nil || (p.Claims.CUDAProcessSharing != nil) != mps {
			t.Errorf("%s: mismatches %v, claims %+v", p.File, p.Mismatches, p.Claims)
		}
	}

	d, _ = provenanceJSON(t, fixture.Get(t, "interleaved_graph").XZ)
	ev := d.Provenance[0].Evidence
	if ev.GraphByArm["graph"] != ev.StepsByArm["graph"] || ev.StepsByArm["graph"] != 150 || ev.GraphByArm["eager"] != 0 {
		t.Errorf("graph launches %v over steps %v", ev.GraphByArm, ev.StepsByArm)
	}
	if c := d.Provenance[0].Claims; c == nil || c.CUDAGraphEnabled == nil || !*c.CUDAGraphEnabled || c.StepsByArm["eager"] != 150 {
		t.Errorf("claims %+v", c)
	}
}

// TestProvenanceMismatchWarnings: a manifest that claims MPS, another GPU
// and other arms for a null run is contradicted loudly, one stderr line per
// claim, in the text view too.
func TestProvenanceMismatchWarnings(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "sharing_null_1")
	data, err := os.ReadFile(fixture.Get(t, "interleaved_graph").Manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	// interleaved_graph's manifest: another GPU, arms eager+graph, 300 steps.
	m["training"].(map[string]any)["cuda_process_sharing"] = "mps"
	data, _ = json.Marshal(m)
	man := filepath.Join(t.TempDir(), "wrong.manifest.json")
	if err := os.WriteFile(man, data, 0o644); err != nil {
		t.Fatal(err)
	}
	d, errs := provenanceJSON(t, "--manifest", man, fx.XZ)
	got := strings.Join(d.Provenance[0].Mismatches, "\n")
	for _, want := range []string{
		"cuda_process_sharing=mps, but kernels of the processes never overlapped",
		"no MPS daemon",
		"but the trace was recorded on",
		`manifest lists arm "graph"`,
		`manifest's blocks of arm "eager" hold 150 steps, the trace 180`,
		"no arm's steps launched a CUDA graph",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("mismatches lack %q:\n%s", want, got)
		}
	}
	if n := strings.Count(errs, "nsysphase: warning: manifest mismatch: "); n != len(d.Provenance[0].Mismatches) {
		t.Errorf("%d stderr warnings for %d mismatches:\n%s", n, len(d.Provenance[0].Mismatches), errs)
	}
	_, errs, code := run(t, "analyze", "--no-stats", "--manifest", man, fx.XZ)
	if code != 0 || !strings.Contains(errs, "warning: manifest mismatch") {
		t.Errorf("text view: exit %d, stderr %q", code, errs)
	}
}
