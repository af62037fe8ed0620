package report

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
)

// InfosTable is info's one row per export for the table formats (CSV,
// Markdown, Parquet, Arrow, HTML): versions, GPUs, processes and the
// vendor-exact CUDA totals. The table and JSON views hold everything.
func InfosTable(infos Infos) *export.Table {
	t := export.NewTable("info", "One row per export: provenance and CUDA totals (nsys stats' cuda_gpu_kern_sum and cuda_api_sum)", append(analysis.ProvenanceColumns(),
		export.Column{Name: "profiled_pids", Type: export.TypeString},
		export.Column{Name: "processes", Type: export.TypeInt64},
		export.Column{Name: "threads", Type: export.TypeInt64},
		export.Column{Name: "kernels", Type: export.TypeInt64},
		export.Column{Name: "kernel_total_ns", Type: export.TypeInt64},
		export.Column{Name: "api_calls", Type: export.TypeInt64},
		export.Column{Name: "api_total_ns", Type: export.TypeInt64},
		export.Column{Name: "absent_activity_tables", Type: export.TypeString},
		export.Column{Name: "warnings", Type: export.TypeInt64},
	)...)
	for _, in := range infos {
		prov := analysis.Provenance{NsysVersion: in.NsysVersion, SchemaVersion: in.ExportSchemaVersion, GPUs: in.GPUs,
			DriverVersion: in.DriverVersion, CUDADriverVersion: in.CUDADriverVersion, GraphTraceMode: in.GraphTraceMode}
		pids := make([]string, len(in.ProfiledPids))
		for i, p := range in.ProfiledPids {
			pids[i] = fmt.Sprint(p)
		}
		_ = t.AppendRow(append(prov.Cells(in.File),
			export.Str(strings.Join(pids, ";")), export.Int(int64(len(in.Processes))), export.Int(int64(len(in.Threads))),
			export.Int(in.Kernels.Count), export.Int(in.Kernels.TotalNs), export.Int(in.API.Count), export.Int(in.API.TotalNs),
			export.Str(strings.Join(in.AbsentTables, ";")), export.Int(int64(len(in.Warnings))))...)
	}
	return t
}

// writeInfoHTML is info's table as one self-contained page.
func writeInfoHTML(w io.Writer, t *export.Table) error {
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>nsysphase info</title>\n")
	b.WriteString("<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}</style></head><body>\n")
	fmt.Fprintf(&b, "<h1>nsysphase info</h1>\n<p>%s</p>\n<table>\n<tr>", html.EscapeString(t.Doc))
	for _, c := range t.Columns() {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(c.Name))
	}
	b.WriteString("</tr>\n")
	for r := range t.Len() {
		b.WriteString("<tr>")
		for c := range t.NumColumns() {
			fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(cellText(t, r, c)))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func cellText(t *export.Table, r, c int) string {
	if t.IsNull(r, c) {
		return ""
	}
	switch t.Column(c).Type {
	case export.TypeString:
		v, _ := t.String(r, c)
		return v
	case export.TypeInt64:
		v, _ := t.Int64(r, c)
		return fmt.Sprint(v)
	case export.TypeFloat64:
		v, _ := t.Float64(r, c)
		return fmt.Sprint(v)
	}
	return fmt.Sprint(t.Value(r, c))
}
