package report

import (
	"bytes"
	"io"
	"regexp"
	"strings"
)

// tableRule is the dashed line under a text table's header.
var tableRule = regexp.MustCompile(`^-+(  +-+)*\s*$`)

// wrapProse re-wraps the prose lines of a text rendering at textWidth
// columns, continuation lines indented four more spaces than the line.
// Tables (a header line followed by a rule of dashes, up to the next blank
// line) are left as they are: their columns must stay aligned.
func wrapProse(text string) string {
	lines := strings.Split(text, "\n")
	var b strings.Builder
	inTable := false
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch {
		case strings.TrimSpace(l) == "":
			inTable = false
		case i+1 < len(lines) && tableRule.MatchString(lines[i+1]):
			inTable = true
		}
		if inTable || displayLen(l) <= textWidth {
			b.WriteString(l)
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
		b.WriteString(wrap(l, textWidth, indent+"    "))
	}
	return b.String()
}

// writeWrapped renders into a buffer and writes it with its prose wrapped.
func writeWrapped(w io.Writer, render func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	_, err := io.WriteString(w, wrapProse(buf.String()))
	return err
}
