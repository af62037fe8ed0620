package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/memtune"
	"github.com/nsysphase/nsysphase/internal/report"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/projection"
)

// RangesOptions are the inputs of `nsysphase ranges`.
type RangesOptions struct {
	Files  []string
	Format string
	Jobs   int
	OutputFlags
}

// NewCmdRanges builds `nsysphase ranges`; runF replaces the action in tests.
func NewCmdRanges(runF func(*RangesOptions) error) *cobra.Command {
	opts := &RangesOptions{}
	cmd := &cobra.Command{
		Use:   "ranges FILE...",
		Short: "NVTX ranges projected onto the GPU, exactly as nsys stats' nvtx_gpu_proj_sum",
		Long: `ranges reproduces ` + "`nsys stats -r nvtx_gpu_proj_sum`" + ` exactly, so its numbers can be
reconciled with existing nsys workflows: per NVTX range name and style, the instances that
launched GPU work, their CPU time, and their projection onto the GPU (first op start to last op
end, idle gaps included), with the same column names.

It keeps the vendor's blind spots, on purpose:
  - only launches from the range's own thread count (PyTorch's autograd thread is missed);
  - only kernels, memcpys and memsets count: with --cuda-graph-trace=graph, graph launches
    are invisible, and a graph launched per node counts as one op;
  - "Proj" is a span, not GPU busy time;
  - ranges that launched nothing, and start/end ranges ended on another thread, are left out.
` + "`nsysphase analyze`" + ` measures busy time, graph work and other-thread work instead.`,
		Example: `  nsysphase ranges testdata/nsys-2025.3-h200/eager_graph_small.sqlite.xz
  nsysphase ranges --format csv testdata/nsys-2025.3-h200/eager_graph_small.sqlite.xz > eager_graph_small_nvtx_gpu_proj_sum.csv
  nsysphase ranges --format json testdata/nsys-2025.3-h200/eager_graph_small.sqlite.xz testdata/nsys-2025.3-h200/graph_whole.sqlite.xz | jq '.[].ranges[0]'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			f, err := checkFormat(opts.Format, rangesFormats)
			if err != nil {
				return err
			}
			opts.Format = f
			if err := checkJobs(opts.Jobs); err != nil {
				return err
			}
			if err := opts.OutputFlags.check(opts.Files); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runRanges(cmd, opts)
		},
	}
	addFormatFlag(cmd, &opts.Format, rangesFormats, "table, json and csv: the vendor's columns; the others: the ranges table")
	addJobsFlag(cmd, &opts.Jobs)
	addOutputFlags(cmd, &opts.OutputFlags)
	return cmd
}

// rangesResult is one file's view.
// unusable file fails the run with nothing half-written.
func runRanges(cmd *cobra.Command, opts *RangesOptions) error {
	files, err := expandFiles(opts.Files)
	if err != nil {
		return err
	}
	memtune.SetMemoryTarget(files) // the same soft heap limit as analyze
	reps, err := eachFile(cmd, files, opts.Jobs, &opts.CommonFlags, projectFile)
	if err != nil {
		return err
	}
	results := make(report.Ranges, 0, len(files))
	for i, rep := range reps {
		results = append(results, report.RangesFile{File: files[i], Report: rep})
	}
	if opts.Format == "csv" { // stdout is the CSV alone: warnings go to stderr
		for _, r := range results {
			for _, w := range r.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
			}
		}
	}
	return opts.write(cmd, opts.Format, results, opts.reportOptions())
}

// rangesFormats are ranges' --format choices.
var rangesFormats = []string{"table", "json", "csv", "markdown", "parquet", "arrow"}

func projectFile(cmd *cobra.Command, path string) (*projection.Report, error) {
	f, closeFn, err := analysis.OpenInput(cmd.Context(), path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	rep, err := projection.Project(f)
	if err != nil {
		var ie *nsys.InputError
		if errors.As(err, &ie) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: project NVTX ranges: %w", path, err)
	}
	return rep, nil
}

// rangesColumns are the vendor's CSV header, in its order.
