package nsysphase_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nsysphase/nsysphase"
)

const interleaved = "testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz"

// Render an analysis as the command prints it: here the Markdown for a
// pull-request comment (its first line).
func ExampleRender() {
	opts := nsysphase.DefaultOptions()
	opts.NoStats = true
	a, err := nsysphase.Analyze(context.Background(), []string{fixture}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := os.CreateTemp("", "analysis-*.md")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(f.Name())
	if err := nsysphase.Render(f, a, "markdown"); err != nil {
		fmt.Println(err)
	}
	f.Close()
	b, _ := os.ReadFile(f.Name())
	first, _, _ := bytes.Cut(b, []byte("\n"))
	fmt.Println(string(first))
	// Output:
	// ### nsysphase analyze: collector_step
}

// Read a dataset back: analyze --out, then analyze --from, in Go.
func ExampleAnalyzeDatasets() {
	opts := nsysphase.DefaultOptions()
	opts.NoStats = true
	a, err := nsysphase.Analyze(context.Background(), []string{fixture}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "dataset-*")
	defer os.RemoveAll(dir)
	ds := filepath.Join(dir, "run1")
	if err := a.WriteDataset(ds); err != nil {
		fmt.Println(err)
		return
	}
	b, err := nsysphase.AnalyzeDatasets(context.Background(), []string{ds}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("same instances:", len(b.Instances()) == len(a.Instances()), "same phases:", fmt.Sprint(b.Phases()) == fmt.Sprint(a.Phases()))
	// Output:
	// same instances: true same phases: true
}

// List the blocking host interactions a CUDA graph capture would meet.
func ExampleInventory() {
	inv, err := nsysphase.Inventory(context.Background(), []string{interleaved}, nsysphase.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("interactions listed:", inv.Items() > 0)
	// Output:
	// interactions listed: true
}

// Check a capture region: its blockers and the bounded saving.
func ExampleBoundary() {
	b, err := nsysphase.Boundary(context.Background(), []string{interleaved}, nsysphase.DefaultOptions(),
		[]string{"action_apply", "physics_step", "scene_read_refresh", "observation", "reward"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("capturable:", b.Capturable(), "blockers:", b.Blockers())
	// Output:
	// capturable: true blockers: 0
}

// Decide whether capturing a region is worth 10% of the step.
func ExampleVerdict() {
	opts := nsysphase.DefaultOptions()
	opts.Baseline = "eager"
	v, err := nsysphase.Verdict(context.Background(), []string{interleaved}, opts,
		[]string{"action_apply", "physics_step", "scene_read_refresh", "observation", "reward"}, 0.10)
	if err != nil {
		fmt.Println(err)
		return
	}
	share, ci := v.Removable()
	fmt.Printf("%s: %.1f%% of step wall removable, CI [%.1f%%, %.1f%%]\n", v.Decision(), 100*share, 100*ci[0], 100*ci[1])
	// Output:
	// go: 51.5% of step wall removable, CI [51.1%, 51.9%]
}

// Gate a change in CI: graph against eager on the step's mean wall, failing
// only for a proven slowdown of more than 5%.
func ExampleAnalysis_Check() {
	a, err := nsysphase.Analyze(context.Background(), []string{interleaved}, nsysphase.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := a.Check(nsysphase.CheckSpec{Limit: 0.05})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("failed:", r.Failed())
	// Output:
	// failed: false
}
