package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/stats"
)

// Format is an output format of Generate: the one format enum of the
// module (package export's), tables and documents alike.
type Format = export.Format

// The output formats, as report's callers name them.
const (
	Text     = export.FormatText
	Markdown = export.FormatMarkdown
	JSON     = export.FormatJSON
	CSV      = export.FormatCSV
	Parquet  = export.FormatParquet
	Arrow    = export.FormatArrow
	HTML     = export.FormatHTML
)

// ParseFormat reads a --format value: table (or text), markdown (or md),
// json, csv, parquet, arrow or html. Case is ignored.
func ParseFormat(s string) (Format, error) { return export.ParseFormat(s) }

// Infos are the exports described by `nsysphase info`, in input order.
type Infos []*nsys.Info

// Generate writes result in format to w. result is the outcome of one
// command: *analysis.Doc (analyze), *Gate (check), *analysis.Verdict,
// *analysis.Boundary, *analysis.Inventory, Infos (info) or Ranges (ranges);
// each registers its renderers beside its own code (register), so a new
// result type adds a file, not a case here. JSON is every result's
// contract. A format a result has no rendering in is an error naming both.
func Generate(w io.Writer, format Format, result any, opt Options) error {
	if format == JSON {
		return generateJSON(w, result)
	}
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

// generate writes result with its renderer for format.
func generate(w io.Writer, format Format, result any, opt Options) error {
	byFormat, ok := renderers[reflect.TypeOf(result)]
	if !ok {
		return fmt.Errorf("report: no rendering of %T", result)
	}
	render, ok := byFormat[format]
	if !ok {
		return fmt.Errorf("no %s rendering of %T", format, result)
	}
	return render(w, result, opt)
}

// renderers are, per result type, its renderer per format.
var renderers = map[reflect.Type]map[Format]func(io.Writer, any, Options) error{}

// register installs fn as the renderer of results of type T in formats.
func register[T any](fn func(w io.Writer, r T, f Format, opt Options) error, formats ...Format) {
	t := reflect.TypeFor[T]()
	if renderers[t] == nil {
		renderers[t] = map[Format]func(io.Writer, any, Options) error{}
	}
	for _, f := range formats {
		renderers[t][f] = func(w io.Writer, r any, opt Options) error { return fn(w, r.(T), f, opt) }
	}
}

// tableRenderer renders a result as one table in the tabular formats.
func tableRenderer[T any](table func(T) *export.Table, metadata bool) func(io.Writer, T, Format, Options) error {
	return func(w io.Writer, r T, f Format, opt Options) error {
		eo := export.Options{}
		if metadata {
			eo.Metadata = opt.Metadata
		}
		return export.Write(w, table(r), f, eo)
	}
}

// generateJSON writes the JSON contract of a result, indented.
// json.Encoder with SetIndent holds the compact document, its indented copy
// and the growth of both: with 10⁴ phases (84 MB of JSON) that was most of
// the run's memory. The compact document is indented as it is written
// instead, to the same bytes.
func generateJSON(w io.Writer, result any) error {
	b, err := Marshal(result)
	if err != nil {
		return err
	}
	return writeIndented(w, b)
}

// Marshal is the JSON contract of a result, compact: what Generate writes in
// format JSON, before indenting. Lists of inputs (info, ranges) are always
// arrays, whatever their length, so `jq '.[]'` works on one input as on
// several.
func Marshal(result any) ([]byte, error) {
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
	return json.Marshal(v)
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
	if err := export.Write(w, t, f, export.Options{FloatDigits: 8}); err != nil {
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
	Verdict *stats.Verdict `json:"verdict"` // null for stats.VerdictNone
}

func docJSON(d *analysis.Doc) analysisJSON {
	out := analysisJSON{Doc: d, Comparisons: make([]comparisonJSON, len(d.Comparisons))}
	for i, c := range d.Comparisons {
		out.Comparisons[i].ComparisonRow = c
		if c.Verdict != stats.VerdictNone {
			v := c.Verdict
			out.Comparisons[i].Verdict = &v
		}
	}
	return out
}
