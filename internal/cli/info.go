package cli

import (
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/report"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/nsys"
)

// InfoOptions are the inputs of `nsysphase info`.
type InfoOptions struct {
	Files  []string
	Format string
	Top    int
	Jobs   int
	OutputFlags
}

// NewCmdInfo builds `nsysphase info`; runF replaces the action in tests.
func NewCmdInfo(runF func(*InfoOptions) error) *cobra.Command {
	opts := &InfoOptions{}
	cmd := &cobra.Command{
		Use:   "info FILE...",
		Short: "Provenance, table row counts and vendor-exact CUDA totals of exports",
		Long: `info prints what an export holds: nsys and schema versions, GPUs, driver and CUDA versions,
processes (an MPS server shows up here) and threads, the row count of every table, kernel totals
with a per-kernel summary, a per-API summary, memcpy/memset by kind and sync records by type.

Kernel and API totals equal nsys stats' cuda_gpu_kern_sum and cuda_api_sum on the same file.`,
		Example: `  nsysphase info testdata/nsys-2025.3-h200/eager_graph_small.sqlite.xz
  nsysphase info --format json testdata/nsys-2025.3-h200/eager_graph_small.sqlite.xz | jq '.[0].kernels.total_ns'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			f, err := checkFormat(opts.Format, infoFormats)
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
			if opts.Top < 0 {
				return usageErr("--top %d: want 0 (all) or more", opts.Top)
			}
			if runF != nil {
				return runF(opts)
			}
			return runInfo(cmd, opts)
		},
	}
	addFormatFlag(cmd, &opts.Format, infoFormats, "table and json: everything; the others: one row per export, versions, GPUs, totals")
	addJobsFlag(cmd, &opts.Jobs)
	addOutputFlags(cmd, &opts.OutputFlags)
	cmd.Flags().IntVar(&opts.Top, "top", 15, "rows of the per-kernel and per-API summaries in the table view (0 = all)")
	return cmd
}

// infoFormats are info's --format choices.
var infoFormats = []string{"table", "json", "csv", "markdown", "parquet", "arrow", "html"}

func runInfo(cmd *cobra.Command, opts *InfoOptions) error {
	files, err := expandFiles(opts.Files)
	if err != nil {
		return err
	}
	infos, err := eachFile(cmd, files, opts.Jobs, &opts.CommonFlags, describeFile)
	if err != nil {
		return err
	}
	ro := opts.reportOptions()
	ro.Top = opts.Top
	return opts.write(cmd, opts.Format, report.Infos(infos), ro)
}

func describeFile(cmd *cobra.Command, path string) (*nsys.Info, error) {
	f, closeFn, err := analysis.OpenInput(cmd.Context(), path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return f.Describe()
}
