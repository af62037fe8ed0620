package nsysphase_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nsysphase/nsysphase"
)

const fixture = "testdata/nsys-2025.3-h200/eager_graph_small.sqlite.xz"

// Analyze a compressed export: arms, phases, instances and the point
// summary of the step's wall time, without intervals.
func ExampleAnalyze() {
	opts := nsysphase.DefaultOptions()
	opts.NoStats = true
	a, err := nsysphase.Analyze(context.Background(), []string{fixture}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("arms:", a.Arms())
	fmt.Println("phases:", a.Phases())
	fmt.Println("instances:", len(a.Instances()))
	for _, s := range a.Summary() {
		if s.Phase == a.Phases()[0] {
			fmt.Printf("%s %s: n=%d blocks=%d mean wall %.0f ns\n", s.Arm, s.Phase, s.N, s.Blocks, s.Metrics["wall_ns"].Mean)
		}
	}
	// Output:
	// arms: [eager graph]
	// phases: [collector_step policy_action_publish action_apply physics_step scene_read_refresh observation reward termination metrics events reset_mask packed_reset post_reset_observation replay_publish graph_replay (unannotated)]
	// instances: 1040
	// eager collector_step: n=38 blocks=2 mean wall 1869865 ns
	// graph collector_step: n=38 blocks=2 mean wall 823134 ns
}

// Compare the arms with intervals: the step's mean wall ratio of each arm
// against the baseline, and the warnings' codes.
func ExampleAnalysis_Comparisons() {
	opts := nsysphase.DefaultOptions()
	opts.Resamples = 1999
	a, err := nsysphase.Analyze(context.Background(), []string{fixture}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	step := a.Phases()[0]
	for _, c := range a.Comparisons() {
		if c.Phase == step && c.Metric == "wall_ns" && c.Stat == "mean" {
			ci := "no between-block CI"
			if c.RatioCI != nil {
				ci = fmt.Sprintf("CI [%.3f, %.3f]", c.RatioCI[0], c.RatioCI[1])
			}
			fmt.Printf("%s vs %s: ratio %.3f, %s, method %s\n", c.Arm, c.Baseline, *c.Ratio, ci, c.Method)
		}
	}
	codes := map[string]bool{}
	for _, w := range a.Warnings() {
		if !codes[w.Code] {
			codes[w.Code] = true
			fmt.Println("warning:", w.Code)
		}
	}
	// Output:
	// graph vs eager: ratio 0.440, no between-block CI, method none
	// warning: no_replication
	// warning: ci_excludes_run_to_run_variance
	// warning: tail_limited_mean
	// warning: low_replication
	// warning: conditional_on_profiles
	// warning: autocorrelation
	// warning: head_effect
}

// Write the Parquet dataset of `nsysphase analyze --out`.
func ExampleAnalysis_WriteDataset() {
	opts := nsysphase.DefaultOptions()
	opts.NoStats = true
	a, err := nsysphase.Analyze(context.Background(), []string{fixture}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	tmp, err := os.MkdirTemp("", "nsysphase-example-*")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "out")
	if err := a.WriteDataset(dir); err != nil {
		fmt.Println(err)
		return
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	for _, n := range names {
		fmt.Println(filepath.Base(n))
	}
	// Output:
	// comparisons.parquet
	// decomposition.parquet
	// phase_instances.parquet
	// phase_summary.parquet
	// provenance.parquet
}

// Gate one run against earlier runs of the baseline, one profile each
// (`nsysphase check --history`): each earlier run's dataset is kept, and
// the new run's step is compared with their run-to-run spread.
func ExampleAnalysis_CompareWithHistory() {
	ctx := context.Background()
	opts := nsysphase.DefaultOptions()
	opts.NoStats = true
	tmp, err := os.MkdirTemp("", "nsysphase-example-*")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(tmp)
	dirs, err := historyDatasets(ctx, opts, tmp, "sharing_null_1", "sharing_null_2", "sharing_mps_1")
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := nsysphase.Analyze(ctx, []string{"testdata/nsys-2025.3-h200/sharing_mps_2.sqlite.xz"}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	rows, err := a.CompareWithHistory(ctx, dirs, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := rows[0] // the step
	fmt.Printf("%s, arm %s: %d history runs, run-to-run CV %.1f%%, ratio %.3f, interval [%.3f, %.3f], %s\n",
		r.Phase, r.Arm, r.HistoryRuns, 100*r.CV, *r.Ratio, r.RatioCI[0], r.RatioCI[1], r.Method)
	// Output:
	// collector_step, arm eager: 3 history runs, run-to-run CV 24.8%, ratio 0.536, interval [0.159, 1.807], history-prediction-t
}

// Read the instances, one row per step and phase instance: a metric that
// was not measured is null, never a zero (here the (unannotated) row's GPU
// busy time, which does not split into parts).
func ExampleAnalysis_Instances() {
	opts := nsysphase.DefaultOptions()
	opts.NoStats = true
	a, err := nsysphase.Analyze(context.Background(), []string{fixture}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	shown := map[string]bool{}
	for _, x := range a.Instances() {
		if x.Warmup || x.Depth > 1 || shown[x.Phase] || (x.Phase != a.Step() && x.Phase != "physics_step" && x.Phase != "(unannotated)") {
			continue
		}
		shown[x.Phase] = true
		wall, _ := x.Metric("wall_ns")
		busy := "null"
		if v, ok := x.Metric("gpu_busy_ns"); ok {
			busy = fmt.Sprint(v, " ns")
		}
		fmt.Printf("%s %s block %d step %d: wall %d ns, gpu_busy %s\n", x.Arm, x.Phase, x.Block, x.Step, wall, busy)
	}
	// Output:
	// eager collector_step block 0 step 1: wall 1840584 ns, gpu_busy 149184 ns
	// eager physics_step block 0 step 1: wall 440816 ns, gpu_busy 43488 ns
	// eager (unannotated) block 0 step 1: wall 25950 ns, gpu_busy null
}

// What produced each input, and what its trace shows.
func ExampleAnalysis_Provenance() {
	opts := nsysphase.DefaultOptions()
	opts.NoStats = true
	a, err := nsysphase.Analyze(context.Background(), []string{fixture}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range a.Provenance() {
		fmt.Printf("%s: nsys %s, %d GPU(s), first %s, CUDA %s, graph trace %q, step %s × %d, MPS %v, manifest %v, %d mismatches\n",
			filepath.Base(p.File), p.NsysVersion, len(p.GPUs), p.GPUs[0].Name, p.CUDADriverVersion, p.GraphTraceMode, p.Step, p.Steps,
			p.MPSActive, p.Manifest != nil, len(p.Mismatches))
	}
	// Output:
	// eager_graph_small.sqlite.xz: nsys 2025.3.2.0, 1 GPU(s), first NVIDIA H200, CUDA 13.0, graph trace "Graph", step collector_step × 80, MPS false, manifest true, 0 mismatches
}

// Where the step's mean wall difference between the arms comes from: the
// six exclusive parts of wall, each with its share of the baseline's mean
// wall.
func ExampleAnalysis_Decomposition() {
	a, err := nsysphase.Analyze(context.Background(), []string{interleaved}, nsysphase.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range a.Decomposition() {
		if d.Phase == a.Step() && d.Of == "" {
			fmt.Printf("%s − %s %-13s %+9.0f ns/step (%+.1f%% of %s's wall)\n", d.Arm, d.Baseline, d.Component, d.DiffNs, 100*d.Share, d.Baseline)
		}
	}
	// Output:
	// graph − eager cpu_other_ns    -608149 ns/step (-35.0% of eager's wall)
	// graph − eager launch_ns       -277351 ns/step (-16.0% of eager's wall)
	// graph − eager sync_ns           +5756 ns/step (+0.3% of eager's wall)
	// graph − eager memcpy_api_ns    -24538 ns/step (-1.4% of eager's wall)
	// graph − eager alloc_ns             +0 ns/step (+0.0% of eager's wall)
	// graph − eager other_api_ns      -7285 ns/step (-0.4% of eager's wall)
}

// The JSON document of `nsysphase analyze --format json` is the analysis
// marshalled (Render with "json" writes it indented): read what this
// package does not carry as Go fields, here the step's choice.
func ExampleAnalysis_MarshalJSON() {
	opts := nsysphase.DefaultOptions()
	opts.NoStats = true
	a, err := nsysphase.Analyze(context.Background(), []string{fixture}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := json.Marshal(a)
	if err != nil {
		fmt.Println(err)
		return
	}
	var doc struct {
		SchemaVersion string `json:"schema_version"`
		StepChoice    struct {
			Rule string `json:"rule"`
		} `json:"step_choice"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("schema", doc.SchemaVersion == nsysphase.SchemaVersion, "step chosen by", doc.StepChoice.Rule)
	// Output:
	// schema true step chosen by repeats most in arm blocks
}

// historyDatasets analyses each bundled run and writes its dataset under
// dir, as each earlier CI job of a history would (`analyze --out`),
// returning the dataset directories in order.
func historyDatasets(ctx context.Context, opts nsysphase.Options, dir string, runs ...string) ([]string, error) {
	var dirs []string
	for _, run := range runs {
		a, err := nsysphase.Analyze(ctx, []string{"testdata/nsys-2025.3-h200/" + run + ".sqlite.xz"}, opts)
		if err != nil {
			return nil, err
		}
		out := filepath.Join(dir, run)
		if err := a.WriteDataset(out); err != nil {
			return nil, err
		}
		dirs = append(dirs, out)
	}
	return dirs, nil
}
