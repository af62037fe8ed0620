package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/base/budget"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/projection"
)

// RangesFile is one export's NVTX GPU projection (`nsysphase ranges`).
type RangesFile struct {
	File string // as given on the command line
	*projection.Report
}

// Ranges are the projections of every input, in input order.
type Ranges []RangesFile

var rangesColumns = []string{"Range", "Style", "Total Proj Time (ns)", "Total Range Time (ns)", "Range Instances",
	"Proj Avg (ns)", "Proj Med (ns)", "Proj Min (ns)", "Proj Max (ns)", "Proj StdDev (ns)",
	"Total GPU Ops", "Avg GPU Ops", "Avg Range Lvl", "Avg Num Child"}

// vendorFloat prints a statistic as the vendor does: one decimal.
func vendorFloat(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// rangesCells are a row's cells in rangesColumns order, as the vendor prints them.
func rangesCells(r projection.Range) []string {
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
func writeRangesCSV(w io.Writer, results Ranges) error {
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
			cells[0] = export.CSVCell(cells[0]) // the range name: no formula
			if several {
				cells = append([]string{export.CSVCell(res.File)}, cells...)
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
//
// The default leaves out the min, max and stddev of the projection and the
// averages of ops, level and children (--wide, CSV and JSON have them), and
// shortens names so that a row fits the width.
func writeRangesTable(w io.Writer, res RangesFile, opt Options) {
	head := res.File + ": NVTX GPU projection, as nsys stats -r nvtx_gpu_proj_sum"
	if !opt.Wide {
		head = wrap(head, textWidth, "  ")
	}
	fmt.Fprintln(w, head)
	if len(res.Absent) > 0 {
		fmt.Fprintf(w, "  absent tables (none of that activity was recorded): %s\n", strings.Join(res.Absent, ", "))
	}
	if len(res.Ranges) == 0 {
		fmt.Fprintln(w, "  no NVTX range launched GPU work (kernel, memcpy or memset) from its own thread")
	} else {
		cols := []int{2, 3, 4, 5, 6, 10} // totals, instances, mean, median, GPU ops
		if opt.Wide {
			cols = []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
		}
		pick := func(cells []string) []string {
			out := make([]string, 0, len(cols)+2)
			for _, c := range cols {
				out = append(out, cells[c])
			}
			out[0] = "  " + out[0]
			return append(out, "  "+cells[1], "  "+cells[0])
		}
		header := rangesColumns
		if !opt.Wide { // short headers, the vendor's own in --wide, CSV and JSON
			header = slices.Clone(rangesColumns)
			header[2], header[3], header[4], header[5], header[6], header[10] = "proj (ns)", "range (ns)", "instances", "proj mean (ns)", "proj median (ns)", "GPU ops"
		}
		rows := [][]string{pick(header)}
		for _, r := range res.Ranges {
			cells := rangesCells(r)
			if !r.HasAvgLevel {
				cells[12] = "-"
			}
			// Exact in CSV, JSON and Parquet; shortened on screen.
			cells[0] = budget.Shorten(cells[0], budget.DisplayNameBytes)
			rows = append(rows, pick(cells))
		}
		_ = writeFitted(w, rows, tabwriter.AlignRight, fitWidth(opt))
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

// rangesJSON is the JSON contract of ranges: an array of files, whatever their number.
func rangesJSON(results Ranges) []rangesJSONFile {
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
	return docs
}

// RangesTable is the vendor view as one table of the shared model (for
// Markdown, Parquet and Arrow): integers stay integers, Avg Range Lvl is
// null where the vendor prints nothing.
func RangesTable(results Ranges) *export.Table {
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

// Its renderers (Generate finds them by the result type).
func init() {
	register(func(w io.Writer, r Ranges, _ Format, opt Options) error {
		for i, f := range r {
			if i > 0 {
				fmt.Fprintln(w)
			}
			writeRangesTable(w, f, opt)
		}
		return nil
	}, Text)
	register(func(w io.Writer, r Ranges, _ Format, _ Options) error { return writeRangesCSV(w, r) }, CSV)
	register(tableRenderer(RangesTable, false), Markdown, Parquet, Arrow)
}
