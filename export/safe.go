package export

import (
	"io"
	"strings"
)

// Strings in a table come from someone else's program (the profiled one
// names its NVTX ranges, threads and kernels): every human format renders
// them as text. The reader (nsys.CleanName) already escapes control
// characters and invalid UTF-8 and bounds their length; the renderers add
// what each format needs: Markdown escapes HTML and link syntax, CSV
// neutralises spreadsheet formulas, and text output passes through
// ControlFilter as a last guard.

// csvFormulaLead are the first characters that make a spreadsheet
// (Excel, LibreOffice, Google Sheets) read a cell as a formula.
const csvFormulaLead = "=+-@\t\r"

// CSVCell neutralises a string cell that a spreadsheet would run as a
// formula (=HYPERLINK(…), +cmd|…, -2+3, @SUM(…)): it gets a leading
// apostrophe, which spreadsheets show as text and do not display.
func CSVCell(s string) string {
	if s != "" && strings.IndexByte(csvFormulaLead, s[0]) >= 0 {
		return "'" + s
	}
	return s
}

// markdownReplacer escapes what would make a cell more than text: "<"
// starts raw HTML or an autolink, "](" and "][" finish an inline or
// reference link or image (a bracket alone links nothing: the report's CIs
// keep theirs), a backquote opens a code span, "|" ends the cell.
var markdownReplacer = strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", "`", "\\`", "](", `\](`, "][", `\]\[`)

// EscapeMarkdown makes s literal text in Markdown, in a table cell or a
// paragraph: control characters escaped, no raw HTML (`<svg onload=…>`),
// no link or image syntax (`[x](javascript:…)`), no code span, no cell
// break.
func EscapeMarkdown(s string) string {
	return markdownReplacer.Replace(escapeControl(s))
}

// EscapeControl writes control characters as Go escapes (\x1b, \n).
func EscapeControl(s string) string { return escapeControl(s) }

// ControlFilter returns a writer that passes text to w with every control
// character but newline and tab written as a visible escape (\x1b, \x07,
// \r, \u007f, \u009b): nothing written through it can move the cursor, set
// a terminal title or clear the screen. DEL and C1 controls are written as
// JSON would escape them, so JSON on stdout stays JSON. The CLI installs it
// on stdout and stderr (internal/cli.Main).
func ControlFilter(w io.Writer) io.Writer { return &controlFilter{w: w} }

type controlFilter struct {
	w       io.Writer
	pending bool // the last byte written was 0xC2, the lead byte of a C1 control
	buf     []byte
}

func (f *controlFilter) Write(p []byte) (int, error) {
	clean := !f.pending
	for _, c := range p {
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == 0xc2 {
			clean = false
			break
		}
	}
	if clean {
		return f.w.Write(p)
	}
	const hex = "0123456789abcdef"
	b := f.buf[:0]
	for _, c := range p {
		if f.pending {
			f.pending = false
			if c >= 0x80 && c <= 0x9f {
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
				continue
			}
			b = append(b, 0xc2)
		}
		switch {
		case c == 0xc2:
			f.pending = true
		case c == 0x7f: // as JSON spells it: a raw DEL is valid JSON, \x7f is not
			b = append(b, '\\', 'u', '0', '0', '7', 'f')
		case c < 0x20 && c != '\n' && c != '\t':
			b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	f.buf = b
	if _, err := f.w.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a lead byte held back at the end of the output.
func (f *controlFilter) Flush() error {
	if !f.pending {
		return nil
	}
	f.pending = false
	_, err := f.w.Write([]byte{0xc2})
	return err
}

// FlushControlFilter flushes w when it is a ControlFilter.
func FlushControlFilter(w io.Writer) error {
	if f, ok := w.(*controlFilter); ok {
		return f.Flush()
	}
	return nil
}
