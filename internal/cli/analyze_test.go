package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Main(args, &out, &errb)
	return out.String(), errb.String(), code
}

// analyzeDoc is the part of the analyze JSON contract the tests read.
type analyzeDoc struct {
	SchemaVersion string   `json:"schema_version"`
	Step          string   `json:"step"`
	Phases        []string `json:"phases"`
	Arms          []string `json:"arms"`
	Baseline      string   `json:"baseline"`
	Inputs        []struct {
		File string `json:"file"`
	} `json:"inputs"`
	Summary []struct {
		Arm     string `json:"arm"`
		Phase   string `json:"phase"`
		N       int    `json:"n"`
		Blocks  int    `json:"blocks"`
		Metrics map[string]struct {
			Mean     float64     `json:"mean"`
			Median   float64     `json:"median"`
			P90      float64     `json:"p90"`
			P99      float64     `json:"p99"`
			MeanCI   *[2]float64 `json:"mean_ci"`
			MedianCI *[2]float64 `json:"median_ci"`
		} `json:"metrics"`
	} `json:"summary"`
	Comparisons []map[string]any `json:"comparisons"`
	Provenance  []struct {
		File     string         `json:"file"`
		Manifest map[string]any `json:"manifest"`
		Evidence struct {
			MPSActive bool  `json:"mps_active"`
			Overlap   int64 `json:"cross_process_gpu_overlap_ns"`
		} `json:"evidence"`
		Mismatches []string `json:"mismatches"`
	} `json:"provenance"`
	Warnings []map[string]any `json:"warnings"`
}

func analyzeJSON(t *testing.T, args ...string) analyzeDoc {
	t.Helper()
	out, errs, code := run(t, append([]string{"analyze", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var d analyzeDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("analyze JSON: %v", err)
	}
	return d
}

func TestAnalyzeInterleavedJSON(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "interleaved_graph")
	d := analyzeJSON(t, fx.XZ)
	if d.SchemaVersion == "" || d.Step != "collector_step" || !slices.Equal(d.Arms, []string{"eager", "graph"}) || d.Baseline != "eager" {
		t.Fatalf("schema %q step %q arms %v baseline %q", d.SchemaVersion, d.Step, d.Arms, d.Baseline)
	}
	if d.Phases[0] != "collector_step" || !slices.Contains(d.Phases, "graph_replay") {
		t.Fatalf("phases %v", d.Phases)
	}
	found := 0
	for _, s := range d.Summary {
		if s.Phase != "collector_step" {
			continue
		}
		found++
		w := s.Metrics["wall_ns"]
		// 3 blocks of 50 steps, the first of each block skipped (--skip-steps 1).
		if s.N != 147 || s.Blocks != 3 {
			t.Errorf("%s: n %d blocks %d, want 147 and 3", s.Arm, s.N, s.Blocks)
		}
		if w.MeanCI == nil || !(w.MeanCI[0] < w.Mean && w.Mean < w.MeanCI[1]) {
			t.Errorf("%s: mean %v outside its CI %v", s.Arm, w.Mean, w.MeanCI)
		}
		parts := 0.0
		for _, p := range []string{"cpu_other_ns", "launch_ns", "sync_ns", "memcpy_api_ns", "alloc_ns", "other_api_ns"} {
			parts += s.Metrics[p].Mean
		}
		if d := parts - w.Mean; d > 1e-6*w.Mean || d < -1e-6*w.Mean {
			t.Errorf("%s: mean parts %.1f != mean wall %.1f", s.Arm, parts, w.Mean)
		}
	}
	if found != 2 {
		t.Fatalf("%d collector_step summary rows, want 2", found)
	}
	var wallMean map[string]any
	for _, c := range d.Comparisons {
		if c["phase"] == "collector_step" && c["metric"] == "wall_ns" && c["stat"] == "mean" {
			wallMean = c
		}
	}
	if wallMean == nil {
		t.Fatal("no collector_step wall_ns mean comparison")
	}
	// The graph arm halves the step (recorded: 1.74 ms eager vs 0.83 ms graph).
	ci := wallMean["ratio_ci"].([]any)
	if r := wallMean["ratio"].(float64); r < 0.4 || r > 0.55 || ci[1].(float64) >= 1 || wallMean["significant"] != true {
		t.Errorf("graph/eager wall ratio %v CI %v significant %v", r, ci, wallMean["significant"])
	}
}

// TestAnalyzeSharingArmKey: the four sharing runs form arms null and mps from
// the run manifests; the evidence agrees with the manifests.
func TestAnalyzeSharingArmKey(t *testing.T) {
	t.Parallel()
	var files []string
	for _, n := range []string{"sharing_null_1", "sharing_mps_1", "sharing_null_2", "sharing_mps_2"} {
		files = append(files, fixture.Get(t, n).XZ)
	}
	d := analyzeJSON(t, append([]string{"--arm-key", "training.cuda_process_sharing", "--resamples", "1999"}, files...)...)
	if !slices.Equal(d.Arms, []string{"null", "mps"}) {
		t.Fatalf("arms %v, want [null mps]", d.Arms)
	}
	for _, p := range d.Provenance {
		isMPS := filepath.Base(p.File)[:11] == "sharing_mps"
		if p.Evidence.MPSActive != isMPS || p.Manifest == nil || len(p.Mismatches) != 0 {
			t.Errorf("%s: mps_active %v overlap %d manifest %v mismatches %v", p.File, p.Evidence.MPSActive, p.Evidence.Overlap, p.Manifest != nil, p.Mismatches)
		}
	}
	for _, s := range d.Summary {
		if s.Phase == "collector_step" && s.Blocks != 6 {
			t.Errorf("arm %s: %d blocks, want 2 files × 3 blocks", s.Arm, s.Blocks)
		}
	}
}

func TestAnalyzeOutWritesParquet(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small")
	dir := filepath.Join(t.TempDir(), "out")
	_, errs, code := run(t, "analyze", "--quiet", "--resamples", "1999", "--out", dir, fx.XZ)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, name := range []string{"phase_instances", "phase_summary", "comparisons", "decomposition", "provenance"} {
		st, err := os.Stat(filepath.Join(dir, name+".parquet"))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s.parquet: %v", name, err)
		}
	}
}

func TestAnalyzeUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"analyze"},
		{"analyze", "--format", "xml", "x.sqlite"},
		{"analyze", "--resamples", "100", "x.sqlite"},
		{"analyze", "--arm", "nonsense", "x.sqlite"},
		{"analyze", "missing.sqlite"},
	} {
		out, errs, code := run(t, args...)
		if code != 2 || out != "" || bytes.Count([]byte(errs), []byte("\n")) != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, out, errs)
		}
	}
}

// decompositionSums checks that the decomposition of a phase's mean wall
// difference adds up to the difference of the arms' mean walls.
func decompositionSums(t *testing.T, out, phase, arm string) (parts map[string]map[string]any) {
	t.Helper()
	var d struct {
		Summary []struct {
			Arm     string `json:"arm"`
			Phase   string `json:"phase"`
			Metrics map[string]struct {
				Mean float64 `json:"mean"`
			} `json:"metrics"`
		} `json:"summary"`
		Baseline      string           `json:"baseline"`
		Decomposition []map[string]any `json:"decomposition"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	means := map[string]float64{}
	for _, s := range d.Summary {
		if s.Phase == phase {
			means[s.Arm] = s.Metrics["wall_ns"].Mean
		}
	}
	parts = map[string]map[string]any{}
	var sum, syncSplit float64
	inner := 0
	for _, r := range d.Decomposition {
		if r["phase"] == phase && r["arm"] == arm {
			if of, _ := r["of"].(string); of != "" { // an inner part, outside the sum
				inner++
				if of == "sync_ns" {
					syncSplit += r["diff_ns"].(float64)
				}
				continue
			}
			parts[r["component"].(string)] = r
			sum += r["diff_ns"].(float64)
		}
	}
	if len(parts) != 6 || inner != 5 {
		t.Fatalf("%s %s: %d decomposition parts and %d inner parts, want 6 and 5", phase, arm, len(parts), inner)
	}
	if sd := parts["sync_ns"]["diff_ns"].(float64); abs(syncSplit-sd) > 1e-6*max(1, abs(sd)) {
		t.Errorf("%s %s: sync_ns's own/other/no-GPU parts sum to %.3f ns, sync_ns differs by %.3f ns", phase, arm, syncSplit, sd)
	}
	want := means[arm] - means[d.Baseline]
	if diff := sum - want; diff > 1e-6*max(1, abs(want)) || diff < -1e-6*max(1, abs(want)) {
		t.Errorf("%s %s: parts sum to %.3f ns, the mean walls differ by %.3f ns", phase, arm, sum, want)
	}
	return parts
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// TestAnalyzeSharingStatistics: mps vs null over the four sharing runs (two
// profiles per arm, three blocks each): comparisons with CIs and a
// decomposition that adds up.
func TestAnalyzeSharingStatistics(t *testing.T) {
	t.Parallel()
	var files []string
	for _, n := range []string{"sharing_null_1", "sharing_mps_1", "sharing_null_2", "sharing_mps_2"} {
		files = append(files, fixture.Get(t, n).XZ)
	}
	out, errs, code := run(t, append([]string{"analyze", "--format", "json", "--arm-key", "training.cuda_process_sharing", "--resamples", "1999"}, files...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var d analyzeDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range d.Comparisons {
		if c["phase"] == "collector_step" && c["metric"] == "wall_ns" && c["stat"] == "mean" {
			found = true
			if c["arm"] != "mps" || c["baseline"] != "null" || c["ratio_ci"] == nil || c["method"] == "" {
				t.Errorf("mps vs null: %v", c)
			}
			if r := c["ratio"].(float64); r < 0.5 || r > 2 {
				t.Errorf("mps/null step ratio %v is not sane", r)
			}
		}
	}
	if !found {
		t.Fatal("no collector_step comparison")
	}
	decompositionSums(t, out, "collector_step", "mps")
}

// TestAnalyzeLargeGraphVsEager: 8 interleaved rounds, so the paired block
// bootstrap applies; CUDA graphs shorten the step through launch and
// Python dispatch time.
func TestAnalyzeLargeGraphVsEager(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("large export")
	}
	fx := fixture.Get(t, fixture.LargeName)
	out, errs, code := run(t, "analyze", "--format", "json", "--resamples", "1999", fx.SQLite(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var d analyzeDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Comparisons {
		if c["phase"] == "collector_step" && c["metric"] == "wall_ns" && c["stat"] == "mean" {
			ci := c["ratio_ci"].([]any)
			if c["method"] != "bootstrap-expanded-percentile" || c["n_units"].(float64) != 8 || c["significant"] != true || ci[1].(float64) >= 1 {
				t.Errorf("graph vs eager: %v", c)
			}
		}
	}
	parts := decompositionSums(t, out, "collector_step", "graph")
	launch := parts["launch_ns"]
	if ci := launch["diff_ci"].([]any); launch["diff_ns"].(float64) >= 0 || ci[1].(float64) >= 0 {
		t.Errorf("launch part %v: graphs should cut launch time", launch)
	}
}

// TestAnalyzeParquetDir: a `--type parquetdir` export analyses end to end,
// provenance included, with the same arms as its SQLite form.
func TestAnalyzeParquetDir(t *testing.T) {
	t.Parallel()
	var xzPath string
	for _, fx := range fixture.Extra(t) {
		if fx.Name == "nvtx_streams" {
			xzPath = filepath.Join(filepath.Dir(fx.XZ), "nvtx_streams.parquetdir.tar.xz")
		}
	}
	if xzPath == "" {
		t.Skip("nvtx_streams absent")
	}
	dir := t.TempDir()
	fixture.UntarXZ(t, xzPath, dir)
	d := analyzeJSON(t, "--no-stats", filepath.Join(dir, "nvtx_streams.parquetdir"))
	if !slices.Equal(d.Arms, []string{"streams1", "streams4"}) || len(d.Provenance) != 1 || d.Provenance[0].File != filepath.Join(dir, "nvtx_streams.parquetdir") {
		t.Fatalf("arms %v, provenance %+v", d.Arms, d.Provenance)
	}
}
