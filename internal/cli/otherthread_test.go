package cli_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
	nsphases "github.com/nsysphase/nsysphase/phases"
)

// TestOtherThreadRowsNeverCountTwice: the two-process FSDP captures
// (emit_nvtx, two PyTorch autograd threads per process, neither with
// ranges of its own). With no option the step is the whole process; with a
// step named, each autograd thread gets its own row per step, with no wall:
// no summary row or rank row counts a step twice or carries the step's
// span as its wall. Skipped without ../shared.
func TestOtherThreadRowsNeverCountTwice(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("two public exports, a few seconds each")
	}
	var fxs []fixture.Fixture
	for _, fx := range fixture.Public(t) {
		if fx.Name == "GindaChen__nsys-ai__mfu_2gpu_before" {
			fxs = append(fxs, fx)
		}
	}
	fxs = append(fxs, fixture.Multirank(t, "GindaChen__nsys-ai__mfu_2gpu_after")...)
	for _, fx := range fxs {
		t.Run(fx.Name, func(t *testing.T) {
			path := fx.SQLite(t)
			var doc struct {
				Step    string `json:"step"`
				Summary []struct {
					Phase   string `json:"phase"`
					N       int    `json:"n"`
					Metrics map[string]*struct {
						Mean float64 `json:"mean"`
					} `json:"metrics"`
				} `json:"summary"`
				Ranks *struct {
					Phases []struct {
						Phase string  `json:"phase"`
						Rank  int     `json:"rank"`
						N     int     `json:"n"`
						Wall  float64 `json:"wall_mean_ns"`
					} `json:"phases"`
				} `json:"ranks"`
			}
			for _, args := range [][]string{nil, {"--step", "FlashAttnFunc"}} {
				var stdout, stderr bytes.Buffer
				argv := append(append([]string{"analyze", "--format", "json", "--no-stats"}, args...), path)
				if code := cli.Main(argv, &stdout, &stderr); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
				}
				if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
				if args == nil {
					if doc.Step != nsphases.WholeProcess {
						t.Errorf("step %q with no option, want %q (every range is an operator's)", doc.Step, nsphases.WholeProcess)
					}
					continue
				}
				stepN, stepWall, others := 0, 0.0, 0
				for _, r := range doc.Summary {
					if r.Phase == doc.Step {
						stepN, stepWall = r.N, r.Metrics["wall_ns"].Mean
					}
				}
				for _, r := range doc.Summary {
					if !nsphases.IsOtherThreadRow(r.Phase) {
						continue
					}
					others++
					if r.N > stepN {
						t.Errorf("%q: n %d, more than the step's %d", r.Phase, r.N, stepN)
					}
					if w := r.Metrics["wall_ns"]; w != nil {
						t.Errorf("%q: wall %.0f ns, want null (the thread has no ranges)", r.Phase, w.Mean)
					}
				}
				if others != 2 {
					t.Errorf("%d other-thread rows, want 2 (pt_autograd_0 and pt_autograd_1, each its own)", others)
				}
				if doc.Ranks == nil {
					t.Fatal("no rank view on a two-process capture")
				}
				perRank := map[int]int{}
				for _, r := range doc.Ranks.Phases {
					if r.Phase == doc.Step {
						perRank[r.Rank] = r.N
					}
				}
				for _, r := range doc.Ranks.Phases {
					if nsphases.IsOtherThreadRow(r.Phase) {
						t.Errorf("rank %d: row %q (n %d, wall %.0f ns) for a thread without a wall", r.Rank, r.Phase, r.N, r.Wall)
					}
					if r.N > perRank[r.Rank] || (r.Phase != doc.Step && r.Wall > stepWall*2) {
						t.Errorf("rank %d %q: n %d (step %d), wall %.0f ns", r.Rank, r.Phase, r.N, perRank[r.Rank], r.Wall)
					}
				}
			}
		})
	}
}
