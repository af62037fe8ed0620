package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/nsys"
)

// Format is an output format of Generate.
type Format int

// Output formats. The zero Format is invalid so a forgotten field is caught.
const (
	Text Format = iota + 1
	Markdown
	JSON
	CSV
	Parquet
	Arrow
	HTML
)

var formatNames = map[Format]string{Text: "table", Markdown: "markdown", JSON: "json", CSV: "csv", Parquet: "parquet", Arrow: "arrow", HTML: "html"}

func (f Format) String() string { return formatNames[f] }

// Binary reports whether f is not text (Parquet, Arrow): such output never
// goes to a terminal.
func (f Format) Binary() bool { return f == Parquet || f == Arrow }

// ParseFormat reads a --format value: table (or text), markdown (or md),
// json, csv, parquet, arrow or html. Case is ignored.
func ParseFormat(s string) (Format, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	if l == "html" {
		return HTML, nil
	}
	ef, err := export.ParseFormat(l)
	if err != nil {
		return 0, err
	}
	return fromExport(ef), nil
}

func fromExport(ef export.Format) Format {
	switch ef {
	case export.FormatText:
		return Text
	case export.FormatMarkdown:
		return Markdown
	case export.FormatJSON:
		return JSON
	case export.FormatCSV:
		return CSV
	case export.FormatParquet:
		return Parquet
	case export.FormatArrow:
		return Arrow
	}
	return 0
}

// ExportFormat is f as a table format of package export; ok is false for HTML.
func (f Format) ExportFormat() (export.Format, bool) {
	switch f {
	case Text:
		return export.FormatText, true
	case Markdown:
		return export.FormatMarkdown, true
	case JSON:
		return export.FormatJSON, true
	case CSV:
		return export.FormatCSV, true
	case Parquet:
		return export.FormatParquet, true
	case Arrow:
		return export.FormatArrow, true
	}
	return 0, false
}

// Infos are the exports described by `nsysphase info`, in input order.
type Infos []*nsys.Info

// Generate writes result in format to w. result is the outcome of one
// command: *analysis.Doc (analyze), *Gate (check), *analysis.Verdict,
// *analysis.Boundary, *analysis.Inventory, Infos (info) or Ranges (ranges).
// A format a result has no rendering in is an error naming both.
func Generate(w io.Writer, format Format, result any, opt Options) error {
	if format != Text && format != Markdown {
		return generate(w, format, result, opt)
	}
	// Names come from someone else's program: no control character reaches
	// a terminal or a PR comment raw, whatever the renderer.
	fw := export.ControlFilter(w)
	err := generate(fw, format, result, opt)
	if ferr := export.FlushControlFilter(fw); err == nil {
		err = ferr
	}
	return err
}

func generate(w io.Writer, format Format, result any, opt Options) error {
	if format == JSON {
		return generateJSON(w, result)
	}
	unsupported := fmt.Errorf("no %s rendering of %T", format, result)
	switch r := result.(type) {
	case *analysis.Doc:
		switch format {
		case Text, Markdown:
			return writeAnalysisText(w, r, format, opt)
		case HTML:
			return writeHTML(w, r, opt)
		case CSV, Parquet, Arrow:
			ef, _ := format.ExportFormat()
			return export.Write(w, r.SummaryTable(), ef, export.Options{Metadata: opt.Metadata})
		}
	case *Gate:
		switch format {
		case Text, Markdown:
			return writeGate(w, r, format)
		}
	case *analysis.Verdict:
		switch format {
		case CSV:
			return writeVerdictCSV(w, r)
		case Markdown:
			return writeVerdictText(w, r, true)
		case Text:
			return writeWrapped(w, func(w io.Writer) error { return writeVerdictText(w, r, false) })
		}
	case *analysis.Boundary:
		switch format {
		case Markdown:
			return writeBoundaryText(w, r, format)
		case Text:
			return writeWrapped(w, func(w io.Writer) error { return writeBoundaryText(w, r, format) })
		case CSV, Parquet, Arrow:
			ef, _ := format.ExportFormat()
			return export.Write(w, BlockersTable(r.Blockers), ef, export.Options{})
		}
	case *analysis.Inventory:
		switch format {
		case Text, Markdown:
			return writeInventoryText(w, r, format)
		case CSV, Parquet, Arrow:
			ef, _ := format.ExportFormat()
			return export.Write(w, r.Table(), ef, export.Options{Metadata: opt.Metadata})
		}
	case Infos:
		switch format {
		case Text:
			for i, in := range r {
				if i > 0 {
					fmt.Fprintln(w)
				}
				writeInfoTable(w, in, opt.Top)
			}
			return nil
		case HTML:
			return writeInfoHTML(w, InfosTable(r))
		case CSV, Markdown, Parquet, Arrow:
			ef, _ := format.ExportFormat()
			return export.Write(w, InfosTable(r), ef, export.Options{Metadata: opt.Metadata})
		}
	case Ranges:
		switch format {
		case Text:
			for i, f := range r {
				if i > 0 {
					fmt.Fprintln(w)
				}
				writeRangesTable(w, f)
			}
			return nil
		case CSV:
			return writeRangesCSV(w, r)
		case Markdown, Parquet, Arrow:
			ef, _ := format.ExportFormat()
			return export.Write(w, RangesTable(r), ef, export.Options{})
		}
	default:
		return fmt.Errorf("report: no rendering of %T", result)
	}
	return unsupported
}

// generateJSON writes the JSON contract of a result. Lists of inputs (info,
// ranges) are always arrays, whatever their length, so `jq '.[]'` works on
// one input as on several.
func generateJSON(w io.Writer, result any) error {
	v := result
	switch r := result.(type) {
	case Infos:
		if r == nil {
			r = Infos{}
		}
		v = r
	case Ranges:
		v = rangesJSON(r)
	case *analysis.Doc:
		v = docJSON(r)
	}
	// json.Encoder with SetIndent holds the compact document, its indented
	// copy and the growth of both: with 10⁴ phases (84 MB of JSON) that was
	// most of the run's memory. The compact document is indented as it is
	// written instead, to the same bytes.
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeIndented(w, b)
}

// writeIndented writes the compact JSON src to w indented by two spaces and
// followed by a newline, exactly as json.Encoder with SetIndent("", "  ")
// writes it (empty objects and arrays stay {} and []), without building
// the indented copy in memory.
func writeIndented(w io.Writer, src []byte) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	depth := 0
	inString, escaped, needIndent := false, false, false
	newline := func() {
		bw.WriteByte('\n')
		for range depth {
			bw.WriteString("  ")
		}
	}
	for _, c := range src {
		if inString {
			bw.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			newline()
		}
		switch c {
		case '{', '[':
			needIndent = true // {} and [] stay on one line
			bw.WriteByte(c)
		case ',':
			bw.WriteByte(c)
			newline()
		case ':':
			bw.WriteString(": ")
		case '}', ']':
			if needIndent {
				needIndent = false
			} else {
				depth--
				newline()
			}
			bw.WriteByte(c)
		case '"':
			inString = true
			bw.WriteByte(c)
		default:
			bw.WriteByte(c)
		}
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// writeTable renders one table of a text or Markdown report.
func writeTable(w io.Writer, t *export.Table, f Format) error {
	ef, ok := f.ExportFormat()
	if !ok {
		return fmt.Errorf("no %s rendering of table %s", f, t.Name)
	}
	if err := export.Write(w, t, ef, export.Options{FloatDigits: 8}); err != nil {
		return err
	}
	if f == Markdown {
		// A blank line ends the table: a sentence right after it would
		// otherwise be read as one more row.
		_, err := fmt.Fprintln(w)
		return err
	}
	return nil
}

// analysisJSON is analyze's JSON: the Doc, with a verdict of null (not "")
// where there is no between-unit CI, as the table prints "no CI".
type analysisJSON struct {
	*analysis.Doc
	Comparisons []comparisonJSON `json:"comparisons"`
}

type comparisonJSON struct {
	analysis.ComparisonRow
	Verdict *string `json:"verdict"` // "changed", "~", or null without a between-unit CI
}

func docJSON(d *analysis.Doc) analysisJSON {
	out := analysisJSON{Doc: d, Comparisons: make([]comparisonJSON, len(d.Comparisons))}
	for i, c := range d.Comparisons {
		out.Comparisons[i].ComparisonRow = c
		if c.Verdict != "" {
			v := c.Verdict
			out.Comparisons[i].Verdict = &v
		}
	}
	return out
}
