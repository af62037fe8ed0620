package nsysphase_test

import (
	"context"
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
	var dirs []string
	for _, run := range []string{"sharing_null_1", "sharing_null_2", "sharing_mps_1"} {
		a, err := nsysphase.Analyze(ctx, []string{"testdata/nsys-2025.3-h200/" + run + ".sqlite.xz"}, opts)
		if err != nil {
			fmt.Println(err)
			return
		}
		dir := filepath.Join(tmp, run)
		if err := a.WriteDataset(dir); err != nil {
			fmt.Println(err)
			return
		}
		dirs = append(dirs, dir)
	}
	a, err := nsysphase.Analyze(ctx, []string{"testdata/nsys-2025.3-h200/sharing_mps_2.sqlite.xz"}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	rows, err := a.CompareWithHistory(ctx, dirs, opts.SkipSteps, 0.95)
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
