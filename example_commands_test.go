package nsysphase_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
	sa, _ := json.Marshal(a.Summary())
	sb, _ := json.Marshal(b.Summary())
	fmt.Println("same summary:", bytes.Equal(sa, sb))
	// Output:
	// same instances: true same phases: true
	// same summary: true
}

// List the blocking host interactions a CUDA graph capture would meet,
// ranked by host time per step: here the first three rows of the CSV
// (`nsysphase inventory --format csv`), first columns. SkipSteps 0 counts
// every step, as the command does.
func ExampleInventory() {
	opts := nsysphase.DefaultOptions()
	opts.SkipSteps = 0
	inv, err := nsysphase.Inventory(context.Background(), []string{interleaved}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("interactions:", inv.Items())
	var buf bytes.Buffer
	if err := nsysphase.Render(&buf, inv, "csv"); err != nil {
		fmt.Println(err)
		return
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rows[:4] {
		fmt.Println(strings.Join(r[:6], ","))
	}
	// Output:
	// interactions: 14
	// arm,phase,kind,api,blocking,calls
	// eager,packed_reset,pageable_h2d,cudaMemcpyAsync+cudaStreamSynchronize,true,444
	// graph,packed_reset,pageable_h2d,cudaMemcpyAsync+cudaStreamSynchronize,true,450
	// graph,termination,scalar_read,cudaMemcpyAsync+cudaStreamSynchronize,true,150
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

// Render one analysis in every format `nsysphase analyze` offers: the
// report as text, Markdown or HTML, the JSON document, and phase_summary
// as CSV, Parquet or Arrow IPC. Each writes what the command prints.
func ExampleRender_formats() {
	opts := nsysphase.DefaultOptions()
	opts.NoStats = true
	a, err := nsysphase.Analyze(context.Background(), []string{fixture}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, format := range []string{"table", "markdown", "html", "json", "csv", "parquet", "arrow"} {
		var buf bytes.Buffer
		if err := nsysphase.Render(&buf, a, format); err != nil {
			fmt.Println(err)
			return
		}
		first, _, _ := bytes.Cut(buf.Bytes(), []byte("\n"))
		switch format {
		case "parquet":
			first = first[:4] // the magic number of a Parquet file
		case "arrow":
			first = first[:6] // of an Arrow IPC file
		}
		fmt.Printf("%s: %.40q\n", format, first)
	}
	// Output:
	// table: "step collector_step (repeats most in arm"
	// markdown: "### nsysphase analyze: collector_step"
	// html: "<!DOCTYPE html>"
	// json: "{"
	// csv: "arm,phase,metric,metric_unit,n,steps,blo"
	// parquet: "PAR1"
	// arrow: "ARROW1"
}

// Gate a new run against earlier runs of the baseline, one profile each
// (`nsysphase check --history`): each earlier run's dataset is kept, and
// the gate fails only when the new run is proven slower than their
// run-to-run spread allows by more than the limit.
func ExampleAnalysis_CheckHistory() {
	ctx := context.Background()
	opts := nsysphase.DefaultOptions()
	opts.NoStats = true
	tmp, err := os.MkdirTemp("", "nsysphase-example-*")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(tmp)
	history, err := historyDatasets(ctx, opts, tmp, "sharing_null_1", "sharing_null_2", "sharing_mps_1")
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := nsysphase.Analyze(ctx, []string{"testdata/nsys-2025.3-h200/sharing_mps_2.sqlite.xz"}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := a.CheckHistory(ctx, history, nsysphase.CheckSpec{Limit: 0.05})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("failed:", r.Failed())
	if err := nsysphase.Render(os.Stdout, r, "table"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// failed: false
	// PASS: mean wall_ns of collector_step vs the history of eager, limit +5% (95% t prediction intervals over runs, log
	//   scale)
	//   eager: 1836.5 µs vs 3424.8 µs (3 history runs, CV 24.8%, df 2), ratio 0.536 [0.159, 1.807]: pass — the interval
	//       reaches above 1.050 and below it: not proven
	//   warning few_history_runs (eager): fewer than 5 history runs; the interval is exact only for normal run values, keep at
	//       least 5
}
