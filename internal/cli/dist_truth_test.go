package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// distTruthDir holds the distributed recordings of scripts/record/record_dist.sh:
// runs whose straggler (rank, phase, steps, delay) and hardware-bound phases
// are known in advance, each with its truth in the manifest. They need a
// machine with two or more GPUs; until one records them the tests skip.
const distTruthDir = "../../testdata/nsys-2025.3-h200-dist"

// distManifest is the part of dist_train.py's run manifest the tests read.
type distManifest struct {
	Mode          string `json:"mode"`
	Backend       string `json:"backend"` // nccl, or gloo (host-side collectives, not traced)
	WorldSize     int    `json:"world_size"`
	StepsPerBlock int    `json:"steps_per_block"`
	Truth         struct {
		Straggler *struct {
			Rank         int    `json:"rank"`
			Phase        string `json:"phase"`
			CountedSteps [2]int `json:"counted_steps"`
			DelayNs      int64  `json:"delay_ns"`
		} `json:"straggler"`
		MemoryBound    *string `json:"memory_bound_phase"`
		LaunchBound    *string `json:"launch_bound_phase"`
		LaunchFunction *string `json:"launch_function"`
	} `json:"truth"`
}

// distRuns returns each recorded run: its manifest and its exports (one per
// node, or one per rank, NAME_rank<R>).
func distRuns(t *testing.T) map[string][]string {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(distTruthDir, "*.manifest.json"))
	runs := map[string][]string{}
	for _, m := range ms {
		name := strings.TrimSuffix(filepath.Base(m), ".manifest.json")
		if i := strings.LastIndex(name, "_rank"); i > 0 {
			if _, err := strconv.Atoi(name[i+5:]); err == nil {
				base := name[:i]
				runs[base] = append(runs[base], filepath.Join(distTruthDir, name+".sqlite.xz"))
				continue
			}
		}
		runs[name] = append(runs[name], filepath.Join(distTruthDir, name+".sqlite.xz"))
	}
	if len(runs) == 0 {
		t.Skipf("no distributed recordings in %s: record them on a machine with 2+ GPUs with scripts/record/record_dist.sh", distTruthDir)
	}
	for _, fs := range runs {
		slices.Sort(fs)
	}
	return runs
}

func readDistManifest(t *testing.T, export string) distManifest {
	t.Helper()
	b, err := os.ReadFile(strings.TrimSuffix(export, ".sqlite.xz") + ".manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m distManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// stragglerStep is one rank's row of ranks.straggler_steps (lateness at
// the step's collectives) or of ranks.step_ends.rows (behind_first_ns: how
// long after the first rank it ended the step).
type stragglerStep struct {
	Label     string  `json:"label"`
	Rank      int     `json:"rank"`
	LatenessN float64 `json:"lateness_ns"`
	BehindNs  float64 `json:"behind_first_ns"`
}

var blockStep = regexp.MustCompile(`block (\d+) step (\d+)$`)

// TestDistributedStragglerTruth: on runs where one rank sleeps a known time
// in a known phase of known steps, the rank view makes that rank late by
// the delay in exactly those steps (within 25%), and no rank is late by
// half the delay elsewhere; on runs without injection no rank is late by
// a millisecond in the median step. Lateness is at the step's collectives
// where they are traced (NCCL), else at the step's end (gloo: the
// straggler sleeps after the step's last collective), where the rank view
// also names the injected rank as the straggler.
func TestDistributedStragglerTruth(t *testing.T) {
	for name, exports := range distRuns(t) {
		t.Run(name, func(t *testing.T) {
			m := readDistManifest(t, exports[0])
			out, errs, code := run(t, append([]string{"analyze", "--format", "json", "--skip-steps", "0", "--no-stats"}, exports...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var doc struct {
				Ranks *struct {
					StragglerSteps []stragglerStep `json:"straggler_steps"`
					StepEnds       *struct {
						Straggler *int            `json:"straggler_rank"`
						Rows      []stragglerStep `json:"rows"`
					} `json:"step_ends"`
				} `json:"ranks"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Ranks == nil {
				t.Fatalf("no rank view on a %d-rank run", m.WorldSize)
			}
			rows := doc.Ranks.StragglerSteps
			if m.Backend == "gloo" {
				if doc.Ranks.StepEnds == nil {
					t.Fatal("no step-end skew on a run without traced communication")
				}
				rows = doc.Ranks.StepEnds.Rows
				for i := range rows {
					rows[i].LatenessN = rows[i].BehindNs
				}
				if st := m.Truth.Straggler; st != nil && (doc.Ranks.StepEnds.Straggler == nil || *doc.Ranks.StepEnds.Straggler != st.Rank) {
					t.Errorf("step ends name straggler %v, want rank %d", doc.Ranks.StepEnds.Straggler, st.Rank)
				}
			}
			if len(rows) == 0 {
				t.Fatalf("no per-step lateness on a %d-rank run", m.WorldSize)
			}
			late := map[int][]float64{} // rank → lateness of each step
			for _, s := range rows {
				sm := blockStep.FindStringSubmatch(s.Label)
				if sm == nil {
					t.Fatalf("step label %q names no block and step", s.Label)
				}
				b, _ := strconv.Atoi(sm[1])
				k, _ := strconv.Atoi(sm[2])
				counted := b*m.StepsPerBlock + k
				if st := m.Truth.Straggler; st != nil {
					injected := s.Rank == st.Rank && counted >= st.CountedSteps[0] && counted < st.CountedSteps[1]
					d := float64(st.DelayNs)
					switch {
					case injected && (s.LatenessN < 0.75*d || s.LatenessN > 1.5*d):
						t.Errorf("%s, rank %d: late %.0f ns in an injected step, want %d ns ± 25%%", s.Label, s.Rank, s.LatenessN, st.DelayNs)
					case !injected && s.LatenessN > d/2:
						t.Errorf("%s, rank %d: late %.0f ns in a step without injection", s.Label, s.Rank, s.LatenessN)
					}
				}
				late[s.Rank] = append(late[s.Rank], s.LatenessN)
			}
			if m.Truth.Straggler == nil {
				for r, xs := range late {
					slices.Sort(xs)
					if med := xs[len(xs)/2]; med > 1e6 {
						t.Errorf("rank %d: median lateness %.0f ns on a run without a straggler", r, med)
					}
				}
			}
		})
	}
}

// TestDistributedHardwareTruth: in the run with a bandwidth-bound phase and
// a launch-bound one, the GPU metrics and CPU samples say so: memory_bound
// has a higher DRAM throughput than launch_bound and little tensor
// activity; launch_bound has fewer SMs active; launch_bound's host hot
// spots name the launch path, in a larger share of its samples than any
// other phase's (the step, which holds launch_bound, aside).
func TestDistributedHardwareTruth(t *testing.T) {
	hw := map[string][]string{}
	for name, exports := range distRuns(t) {
		if m := readDistManifest(t, exports[0]); m.Truth.MemoryBound != nil && m.Truth.LaunchBound != nil {
			hw[name] = exports
		}
	}
	if len(hw) == 0 {
		t.Skip("no run with hardware-bound phases bundled: scripts/record/record_dist.sh records hw_node (GPU metrics at 2 kHz)")
	}
	for name, exports := range hw {
		m := readDistManifest(t, exports[0])
		t.Run(name, func(t *testing.T) {
			out, errs, code := run(t, append([]string{"analyze", "--format", "json"}, exports...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var doc struct {
				Step     string `json:"step"`
				Hardware *struct {
					Rows []struct {
						Phase, Metric string
						Mean          *float64
					} `json:"gpu_metric_rows"`
					Hotspots []struct {
						Phase     string        `json:"phase"`
						Functions []hotFunction `json:"functions"`
					} `json:"host_hotspots"`
				} `json:"hardware"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Hardware == nil {
				t.Fatal("no hardware section on a run recorded with GPU metrics and CPU sampling")
			}
			mean := func(phase, metric string) float64 {
				for _, r := range doc.Hardware.Rows {
					if r.Phase == phase && strings.Contains(r.Metric, metric) && r.Mean != nil {
						return *r.Mean
					}
				}
				t.Fatalf("no %q mean for phase %s", metric, phase)
				return 0
			}
			// Over each phase's GPU window (its own kernels and copies):
			// over its host range the copies launched in memory_bound ran
			// while the host was in launch_bound, and the two read alike.
			mem, launch := *m.Truth.MemoryBound, *m.Truth.LaunchBound
			if a, b := mean(mem, "DRAM Read"), mean(launch, "DRAM Read"); a < 1.5*b {
				t.Errorf("DRAM read throughput: %s %.1f, not 1.5× %s's %.1f", mem, a, launch, b)
			}
			if v := mean(mem, "Tensor Active"); v > 5 {
				t.Errorf("%s: tensor activity %.1f%%, want about 0", mem, v)
			}
			if a, b := mean(launch, "SMs Active"), mean(mem, "SMs Active"); a > 0.75*b {
				t.Errorf("SMs active: %s %.1f, more than 0.75× %s's %.1f", launch, a, mem, b)
			}
			// The launching Python function where the export links Python
			// frames to the samples; nsys 2025.3's SQLite export keeps their
			// names but links none, so there the launch path itself
			// (cudaLaunchKernel, under torch's add_ dispatch) stands for it.
			want := "cudaLaunchKernel"
			for _, h := range doc.Hardware.Hotspots {
				for _, f := range h.Functions {
					if f.Python {
						want = *m.Truth.LaunchFunction
					}
				}
			}
			shares := map[string]float64{}
			for _, h := range doc.Hardware.Hotspots {
				for _, f := range h.Functions {
					if strings.Contains(f.Function, want) {
						shares[h.Phase] = max(shares[h.Phase], f.InclusiveShare)
					}
				}
			}
			if shares[launch] < 0.1 {
				t.Fatalf("%s: %s in %.0f%% of its CPU samples, want 10%% or more", launch, want, 100*shares[launch])
			}
			for ph, v := range shares {
				if ph != launch && ph != doc.Step && v >= shares[launch] {
					t.Errorf("%s in %.0f%% of %s's samples, not fewer than launch_bound's %.0f%%", want, 100*v, ph, 100*shares[launch])
				}
			}
		})
	}
}

// hotFunction is one function of a phase's host hot spots.
type hotFunction struct {
	Function       string  `json:"function"`
	Python         bool    `json:"python"`
	Inclusive      int     `json:"inclusive_samples"`
	InclusiveShare float64 `json:"inclusive_share_of_samples"`
}
