package cli

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/memtune"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

// RangesOptions are the inputs of `nsysphase ranges`.
type RangesOptions struct {
	Files  []string
	Format string
	Out    io.Writer
	ErrOut io.Writer // warnings in --format csv, whose stdout is the CSV alone
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
  nsysphase ranges --format csv run.sqlite > run_nvtx_gpu_proj_sum.csv
  nsysphase ranges --format json a.sqlite b.sqlite | jq '.[].ranges[0]'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			opts.Out, opts.ErrOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
			switch opts.Format {
			case "table", "json", "csv", "markdown", "parquet", "arrow":
			default:
				return usageErr("--format %q: want table, json, csv, markdown, parquet or arrow", opts.Format)
			}
			if (opts.Format == "parquet" || opts.Format == "arrow") && isTerminal(opts.Out) {
				return usageErr("--format %s is binary: redirect stdout to a file", opts.Format)
			}
			if runF != nil {
				return runF(opts)
			}
			return runRanges(cmd, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "table", "output format: table, json or csv (the vendor's columns), or markdown, parquet or arrow (the ranges table)")
	return cmd
}

// rangesResult is one file's view.
type rangesResult struct {
	File string
	*phases.VendorReport
}

// runRanges computes every file before printing anything, so that one
// unusable file fails the run with nothing half-written.
func runRanges(cmd *cobra.Command, opts *RangesOptions) error {
	memtune.SetMemoryTarget(opts.Files) // the same soft heap limit as analyze
	results := make([]rangesResult, 0, len(opts.Files))
	for _, path := range opts.Files {
		rep, err := projectFile(cmd, path)
		if err != nil {
			return err
		}
		results = append(results, rangesResult{File: path, VendorReport: rep})
	}
	switch opts.Format {
	case "json":
		return writeRangesJSON(opts.Out, results)
	case "markdown", "parquet", "arrow":
		f, _ := export.ParseFormat(opts.Format)
		return export.Write(opts.Out, rangesTable(results), f, export.Options{})
	case "csv":
		for _, r := range results {
			for _, w := range r.Warnings {
				fmt.Fprintf(opts.ErrOut, "warning: %s\n", w)
			}
		}
		return writeRangesCSV(opts.Out, results)
	}
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(opts.Out)
		}
		writeRangesTable(opts.Out, r)
	}
	return nil
}

func projectFile(cmd *cobra.Command, path string) (*phases.VendorReport, error) {
	f, closeFn, err := analysis.OpenInput(cmd.Context(), path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	rep, err := phases.VendorProjection(f)
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
var rangesColumns = []string{"Range", "Style", "Total Proj Time (ns)", "Total Range Time (ns)", "Range Instances",
	"Proj Avg (ns)", "Proj Med (ns)", "Proj Min (ns)", "Proj Max (ns)", "Proj StdDev (ns)",
	"Total GPU Ops", "Avg GPU Ops", "Avg Range Lvl", "Avg Num Child"}

// vendorFloat prints a statistic as the vendor does: one decimal.
func vendorFloat(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// rangesCells are a row's cells in rangesColumns order, as the vendor prints them.
func rangesCells(r phases.VendorRange) []string {
	lvl := ""
	if r.HasAvgLevel {
		lvl = vendorFloat(r.AvgLevel)
	}
	itoa := func(x int64) string { return strconv.FormatInt(x, 10) }
	return []string{r.Name, r.Style, itoa(r.ProjNs), itoa(r.RangeNs), itoa(r.Instances),
		vendorFloat(r.ProjMeanNs), vendorFloat(r.ProjMedianNs), itoa(r.ProjMinNs), itoa(r.ProjMaxNs), vendorFloat(r.ProjStdDevNs),
		itoa(r.GPUOps), vendorFloat(r.AvgGPUOps), lvl, vendorFloat(r.AvgChildren)}
}

// writeRangesCSV writes the vendor's CSV; with several files a leading File
// column tells their rows apart.
func writeRangesCSV(w io.Writer, results []rangesResult) error {
	cw := csv.NewWriter(w)
	several := len(results) > 1
	header := rangesColumns
	if several {
		header = append([]string{"File"}, rangesColumns...)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, res := range results {
		for _, r := range res.Ranges {
			cells := rangesCells(r)
			if several {
				cells = append([]string{res.File}, cells...)
			}
			if err := cw.Write(cells); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeRangesTable prints aligned columns with the vendor's names, numbers
// first and the range name last, where long names do not push columns apart.
func writeRangesTable(w io.Writer, res rangesResult) {
	fmt.Fprintf(w, "%s: NVTX GPU projection, as nsys stats -r nvtx_gpu_proj_sum\n", res.File)
	if len(res.Absent) > 0 {
		fmt.Fprintf(w, "  absent tables (none of that activity was recorded): %s\n", strings.Join(res.Absent, ", "))
	}
	if len(res.Ranges) == 0 {
		fmt.Fprintln(w, "  no NVTX range launched GPU work (kernel, memcpy or memset) from its own thread")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		numeric := rangesColumns[2:]
		fmt.Fprintf(tw, "  %s\t  %s\t  %s\n", strings.Join(numeric, "\t"), rangesColumns[1], rangesColumns[0])
		for _, r := range res.Ranges {
			cells := rangesCells(r)
			if !r.HasAvgLevel {
				cells[12] = "-"
			}
			fmt.Fprintf(tw, "  %s\t  %s\t  %s\n", strings.Join(cells[2:], "\t"), cells[1], cells[0])
		}
		tw.Flush()
	}
	for _, warn := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// rangesJSONRow is one range in --format json: counts and ns as integers,
// statistics as unrounded numbers.
type rangesJSONRow struct {
	Domain       string   `json:"domain"`
	Name         string   `json:"name"`
	Text         string   `json:"text"`
	Style        string   `json:"style"`
	Instances    int64    `json:"instances"`
	RangeNs      int64    `json:"range_ns"`
	ProjNs       int64    `json:"proj_ns"`
	ProjAvgNs    float64  `json:"proj_avg_ns"`
	ProjMedNs    float64  `json:"proj_med_ns"`
	ProjMinNs    int64    `json:"proj_min_ns"`
	ProjMaxNs    int64    `json:"proj_max_ns"`
	ProjStdDevNs float64  `json:"proj_stddev_ns"`
	GPUOps       int64    `json:"gpu_ops"`
	AvgGPUOps    float64  `json:"avg_gpu_ops"`
	AvgRangeLvl  *float64 `json:"avg_range_lvl"` // null where the vendor prints nothing
	AvgNumChild  float64  `json:"avg_num_child"`
}

type rangesJSONFile struct {
	File         string          `json:"file"`
	Ranges       []rangesJSONRow `json:"ranges"`
	AbsentTables []string        `json:"absent_tables"`
	Warnings     []string        `json:"warnings"`
}

// writeRangesJSON writes one object for one file, an array for several.
func writeRangesJSON(w io.Writer, results []rangesResult) error {
	docs := make([]rangesJSONFile, 0, len(results))
	for _, res := range results {
		d := rangesJSONFile{File: res.File, Ranges: []rangesJSONRow{}, AbsentTables: res.Absent, Warnings: nsys.WarningMessages(res.Warnings)}
		if d.AbsentTables == nil {
			d.AbsentTables = []string{}
		}
		if d.Warnings == nil {
			d.Warnings = []string{}
		}
		for _, r := range res.Ranges {
			row := rangesJSONRow{
				Domain: r.Domain, Name: r.Name, Text: r.Text, Style: r.Style,
				Instances: r.Instances, RangeNs: r.RangeNs, ProjNs: r.ProjNs,
				ProjAvgNs: r.ProjMeanNs, ProjMedNs: r.ProjMedianNs, ProjMinNs: r.ProjMinNs, ProjMaxNs: r.ProjMaxNs,
				ProjStdDevNs: r.ProjStdDevNs, GPUOps: r.GPUOps, AvgGPUOps: r.AvgGPUOps, AvgNumChild: r.AvgChildren,
			}
			if r.HasAvgLevel {
				lvl := r.AvgLevel
				row.AvgRangeLvl = &lvl
			}
			d.Ranges = append(d.Ranges, row)
		}
		docs = append(docs, d)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if len(docs) == 1 {
		return enc.Encode(docs[0])
	}
	return enc.Encode(docs)
}

// rangesTable is the vendor view as one table of the shared model (for
// Markdown, Parquet and Arrow): integers stay integers, Avg Range Lvl is
// null where the vendor prints nothing.
func rangesTable(results []rangesResult) *export.Table {
	t := export.NewTable("ranges", "nsys stats nvtx_gpu_proj_sum, reproduced exactly: per NVTX range name and style",
		export.Column{Name: "file", Type: export.TypeString, Doc: "the export, as given on the command line"},
		export.Column{Name: "domain", Type: export.TypeString, Doc: "NVTX domain name; empty for the default domain"},
		export.Column{Name: "name", Type: export.TypeString, Doc: "<domain>:<text>, the vendor's Range"},
		export.Column{Name: "style", Type: export.TypeString, Doc: "PushPop or StartEnd"},
		export.Column{Name: "instances", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "instances that launched GPU work"},
		export.Column{Name: "range_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "Total Range Time"},
		export.Column{Name: "proj_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "Total Proj Time"},
		export.Column{Name: "proj_mean_ns", Type: export.TypeFloat64, Unit: export.UnitNanoseconds, Doc: "Proj Avg: mean projection (last op end − first op start) per instance"},
		export.Column{Name: "proj_median_ns", Type: export.TypeFloat64, Unit: export.UnitNanoseconds, Doc: "Proj Med: median projection (mean of the middle two for an even count)"},
		export.Column{Name: "proj_min_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "Proj Min"},
		export.Column{Name: "proj_max_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "Proj Max"},
		export.Column{Name: "proj_stddev_ns", Type: export.TypeFloat64, Unit: export.UnitNanoseconds, Doc: "sample standard deviation (n−1)"},
		export.Column{Name: "gpu_ops", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "Total GPU Ops"},
		export.Column{Name: "avg_gpu_ops", Type: export.TypeFloat64, Unit: export.UnitCount, Doc: "Avg GPU Ops: gpu_ops / instances"},
		export.Column{Name: "avg_range_lvl", Type: export.TypeFloat64, Nullable: true, Doc: "Avg Range Lvl: mean nesting depth of the instances; null where the vendor prints nothing (no instance has a depth)"},
		export.Column{Name: "avg_num_child", Type: export.TypeFloat64, Unit: export.UnitCount, Doc: "Avg Num Child: children with GPU ops per instance"},
	)
	for _, res := range results {
		for _, r := range res.Ranges {
			_ = t.AppendRow(export.Str(res.File), export.Str(r.Domain), export.Str(r.Name), export.Str(r.Style),
				export.Int(r.Instances), export.Int(r.RangeNs), export.Int(r.ProjNs),
				export.Float(r.ProjMeanNs), export.Float(r.ProjMedianNs), export.Int(r.ProjMinNs), export.Int(r.ProjMaxNs), export.Float(r.ProjStdDevNs),
				export.Int(r.GPUOps), export.Float(r.AvgGPUOps), export.OptFloat(r.AvgLevel, r.HasAvgLevel), export.Float(r.AvgChildren))
		}
	}
	return t
}
