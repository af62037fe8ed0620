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
			if _, err := report.ParseFormat(opts.Format); err != nil {
				return usageErr("--format %q: want table, json, csv, markdown, parquet, arrow or html", opts.Format)
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
	cmd.Flags().StringVar(&opts.Format, "format", "table", "output format: table or json (everything), or csv, markdown, parquet, arrow or html (one row per export: versions, GPUs, totals)")
	addOutputFlags(cmd, &opts.OutputFlags)
	cmd.Flags().IntVar(&opts.Top, "top", 15, "rows of the per-kernel and per-API summaries in the table view (0 = all)")
	return cmd
}

func runInfo(cmd *cobra.Command, opts *InfoOptions) error {
	infos := make([]*nsys.Info, 0, len(opts.Files))
	for _, path := range opts.Files {
		in, err := describeFile(cmd, path)
		if err != nil {
			return err
		}
		infos = append(infos, in)
	}
	return opts.write(cmd, opts.Format, report.Infos(infos), report.Options{Top: opts.Top})
}

func describeFile(cmd *cobra.Command, path string) (*nsys.Info, error) {
	f, closeFn, err := analysis.OpenInput(cmd.Context(), path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return f.Describe()
}
