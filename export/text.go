package export

import (
	"bufio"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nsysphase/nsysphase/internal/base/budget"
)

// nullText is what text and Markdown print for a null cell.
const nullText = "—"

// textCell renders one cell for humans (text and Markdown).
func textCell(t *Table, row, col int, opt Options) string {
	c := &t.cols[col]
	if t.data[col].isNull(row) {
		return nullText
	}
	d := &t.data[col]
	switch c.Type {
	case TypeInt64:
		v := d.ints[row]
		if opt.HumanUnits {
			switch c.Unit {
			case UnitNanoseconds:
				return humanDuration(float64(v))
			case UnitBytes:
				return humanBytes(float64(v))
			}
		}
		return strconv.FormatInt(v, 10)
	case TypeFloat64:
		v := d.floats[row]
		if opt.HumanUnits && !math.IsNaN(v) && !math.IsInf(v, 0) {
			switch c.Unit {
			case UnitNanoseconds:
				return humanDuration(v)
			case UnitBytes:
				return humanBytes(v)
			}
		}
		digits := opt.FloatDigits
		if digits <= 0 {
			digits = 6
		}
		return formatFloatDigits(v, digits)
	case TypeBool:
		return strconv.FormatBool(d.ints[row] != 0)
	default:
		// Names are exact up to budget.NameBytes in machine formats; on
		// screen a longer one is shortened, with its length and hash.
		return escapeControl(budget.Shorten(d.dict[d.codes[row]], budget.DisplayNameBytes))
	}
}

// escapeControl replaces control characters, which would break the row
// layout, by Go escapes.
func escapeControl(s string) string {
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// formatFloatDigits prints f with about digits significant digits, in
// positional notation for everyday magnitudes, trailing zeros trimmed.
func formatFloatDigits(f float64, digits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case f == 0:
		return "0"
	}
	a := math.Abs(f)
	if a < 1e-4 || a >= 1e15 {
		s := strconv.FormatFloat(f, 'e', digits-1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		if strings.IndexByte(mant, '.') >= 0 {
			mant = strings.TrimSuffix(strings.TrimRight(mant, "0"), ".")
		}
		return mant + "e" + exp
	}
	exp := int(math.Floor(math.Log10(a)))
	prec := max(digits-1-exp, 0)
	s := strconv.FormatFloat(f, 'f', prec, 64)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// humanDuration prints nanoseconds with 4 significant digits in the
// largest unit below the value, as profilers do.
func humanDuration(ns float64) string {
	a := math.Abs(ns)
	switch {
	case a < 1e3:
		return formatFloatDigits(ns, 4) + " ns"
	case a < 1e6:
		return fixedDigits(ns/1e3, 4) + " µs"
	case a < 1e9:
		return fixedDigits(ns/1e6, 4) + " ms"
	default:
		return fixedDigits(ns/1e9, 4) + " s"
	}
}

// humanBytes prints a size in binary units with 4 significant digits.
func humanBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	a := math.Abs(b)
	i := 0
	for a >= 1024 && i < len(units)-1 {
		a /= 1024
		b /= 1024
		i++
	}
	if i == 0 {
		return formatFloatDigits(b, 4) + " B"
	}
	return fixedDigits(b, 4) + " " + units[i]
}

// fixedDigits prints v (1 <= |v| < 1000 after unit scaling) with a fixed
// number of significant digits, keeping trailing zeros so a column of
// humanised values lines up on the decimal point.
func fixedDigits(v float64, digits int) string {
	a := math.Abs(v)
	exp := 0
	if a >= 1 {
		exp = int(math.Floor(math.Log10(a)))
	}
	return strconv.FormatFloat(v, 'f', max(digits-1-exp, 0), 64)
}

// displayWidth approximates the terminal width of s: wide East Asian
// characters take two cells, combining marks none.
func displayWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == '\u200b':
		case isWide(r):
			n += 2
		default:
			n++
		}
	}
	return n
}

func isWide(r rune) bool {
	return r >= 0x1100 && (r <= 0x115f || // Hangul Jamo
		r >= 0x2e80 && r <= 0xa4cf && r != 0x303f || // CJK … Yi
		r >= 0xac00 && r <= 0xd7a3 || // Hangul syllables
		r >= 0xf900 && r <= 0xfaff || // CJK compatibility ideographs
		r >= 0xfe30 && r <= 0xfe4f ||
		r >= 0xff00 && r <= 0xff60 || r >= 0xffe0 && r <= 0xffe6 || // full width forms
		r >= 0x1f300 && r <= 0x1f64f || r >= 0x1f900 && r <= 0x1f9ff || // emoji
		r >= 0x20000 && r <= 0x3fffd)
}

func pad(bw *bufio.Writer, n int) {
	for ; n > 0; n-- {
		bw.WriteByte(' ')
	}
}

// renderCells formats the whole table once, so widths can be measured.
func renderCells(t *Table, opt Options, cell func(string) string) (cells [][]string, right []bool, widths []int) {
	nc := len(t.cols)
	right = make([]bool, nc)
	widths = make([]int, nc)
	for c, col := range t.cols {
		right[c] = col.Type == TypeInt64 || col.Type == TypeFloat64
		widths[c] = displayWidth(cell(escapeControl(col.Name)))
	}
	cells = make([][]string, t.rows)
	for r := range t.rows {
		row := make([]string, nc)
		for c := range nc {
			s := cell(textCell(t, r, c, opt))
			row[c] = s
			widths[c] = max(widths[c], displayWidth(s))
		}
		cells[r] = row
	}
	return cells, right, widths
}

// writeText writes aligned columns separated by two spaces, a header and a
// dashed rule, with no trailing blanks.
func writeText(bw *bufio.Writer, t *Table, opt Options) error {
	cells, right, widths := renderCells(t, opt, func(s string) string { return s })
	nc := len(t.cols)
	line := func(vals []string) {
		for c, s := range vals {
			w := displayWidth(s)
			last := c == nc-1
			if c > 0 {
				bw.WriteString("  ")
			}
			if right[c] {
				pad(bw, widths[c]-w)
			}
			bw.WriteString(s)
			if !right[c] && !last {
				pad(bw, widths[c]-w)
			}
		}
		bw.WriteByte('\n')
	}
	header := make([]string, nc)
	rule := make([]string, nc)
	for c, col := range t.cols {
		header[c] = escapeControl(col.Name)
		rule[c] = strings.Repeat("-", widths[c])
	}
	line(header)
	line(rule)
	for _, row := range cells {
		line(row)
	}
	if t.rows == 0 {
		bw.WriteString("(no rows)\n")
	}
	return nil
}

// escapeMarkdown keeps a cell inside its table cell and renders it as text
// (EscapeMarkdown). textCell has already escaped control characters.
func escapeMarkdown(s string) string {
	if !strings.ContainsAny(s, "|\\<`]") {
		return s
	}
	return markdownReplacer.Replace(s)
}

// writeMarkdown writes a GitHub-flavoured Markdown table, padded so the
// source is readable too; numeric columns are right-aligned.
func writeMarkdown(bw *bufio.Writer, t *Table, opt Options) error {
	if len(t.cols) == 0 {
		return nil
	}
	cells, right, widths := renderCells(t, opt, escapeMarkdown)
	for c := range widths {
		widths[c] = max(widths[c], 3) // room for the "---:" rule
	}
	line := func(vals []string) {
		bw.WriteByte('|')
		for c, s := range vals {
			bw.WriteByte(' ')
			w := displayWidth(s)
			if right[c] {
				pad(bw, widths[c]-w)
				bw.WriteString(s)
			} else {
				bw.WriteString(s)
				pad(bw, widths[c]-w)
			}
			bw.WriteString(" |")
		}
		bw.WriteByte('\n')
	}
	header := make([]string, len(t.cols))
	for c, col := range t.cols {
		header[c] = escapeMarkdown(escapeControl(col.Name))
	}
	line(header)
	bw.WriteByte('|')
	for c := range t.cols {
		bw.WriteByte(' ')
		if right[c] {
			bw.WriteString(strings.Repeat("-", widths[c]-1))
			bw.WriteByte(':')
		} else {
			bw.WriteString(strings.Repeat("-", widths[c]))
		}
		bw.WriteString(" |")
	}
	bw.WriteByte('\n')
	for _, row := range cells {
		line(row)
	}
	return nil
}
