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
