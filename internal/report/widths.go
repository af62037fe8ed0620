package report

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/nsysphase/nsysphase/export"
)

// fitWidth is the width a rendering fits: textWidth by default, none with
// --wide (0).
func fitWidth(opt Options) int {
	if opt.Wide {
		return 0
	}
	return textWidth
}

// writeFitted writes rows as tab-aligned columns (tabwriter flags), the
// last cell of each row a name that is not aligned. With width > 0, a
// line that would pass width has its name shortened, keeping its head and
// the tail that tells it from the others (distinctNames). The first row is
// the header.
func writeFitted(w io.Writer, rows [][]string, flags uint, width int) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', flags)
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r[len(r)-1]
		if _, err := tw.Write([]byte(strings.Join(r[:len(r)-1], "\t") + "\t\n")); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	prefixes := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	avail := 0
	for _, p := range prefixes {
		avail = max(avail, width-displayLen(p))
	}
	short := map[string]string{}
	if width > 0 {
		short = fittedNames(names[1:], max(avail, 12)) // the full names are in --wide
	}
	var out strings.Builder
	for i, p := range prefixes {
		name := names[i]
		if s, ok := short[name]; ok && i > 0 {
			name = s
		}
		out.WriteString(strings.TrimRight(p+name, " ") + "\n")
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// selectColumns is t with only the named columns, in that order.
func selectColumns(t *export.Table, names ...string) *export.Table {
	var cols []export.Column
	var idx []int
	for _, n := range names {
		if i := t.ColumnIndex(n); i >= 0 {
			cols, idx = append(cols, t.Column(i)), append(idx, i)
		}
	}
	out := export.NewTable(t.Name, t.Doc, cols...)
	for r := range t.Len() {
		vals := make([]export.Value, len(idx))
		for j, i := range idx {
			vals[j] = t.Value(r, i)
		}
		_ = out.AppendRow(vals...)
	}
	return out
}

// armLabel is arm shortened to n runes keeping the tail that tells it from
// the other arms ("sharing_…ll_1", "sharing_…ps_1"), not a head they share.
func armLabel(arms []string, arm string, n int) string {
	if displayLen(arm) <= n {
		return arm
	}
	if v, ok := fittedNames(arms, n)[arm]; ok {
		return v
	}
	return shortName(arm, n)
}

// columnWidths are the printed widths of t's columns in text (header or
// widest cell), read off the rule under its header.
func columnWidths(t *export.Table) []int {
	var buf bytes.Buffer
	if err := writeTable(&buf, t, Text); err != nil {
		return nil
	}
	lines := strings.SplitN(buf.String(), "\n", 3)
	if len(lines) < 2 {
		return nil
	}
	var out []int
	for _, rule := range strings.Fields(lines[1]) {
		out = append(out, len(rule))
	}
	return out
}

// splitToFit is t whole where its text fits width, else t's columns in
// order across as few tables as fit, each repeating the key columns
// (those of keys that t has) on the left.
func splitToFit(t *export.Table, keys []string, width int) []*export.Table {
	widths := columnWidths(t)
	if len(widths) != t.NumColumns() {
		return []*export.Table{t}
	}
	total := -2
	for _, w := range widths {
		total += w + 2
	}
	if total <= width {
		return []*export.Table{t}
	}
	var keyNames []string
	keyW := -2
	for i := range t.NumColumns() {
		if n := t.Column(i).Name; slices.Contains(keys, n) {
			keyNames, keyW = append(keyNames, n), keyW+widths[i]+2
		}
	}
	var out []*export.Table
	cur, curW := slices.Clone(keyNames), keyW
	for i := range t.NumColumns() {
		n := t.Column(i).Name
		if slices.Contains(keyNames, n) {
			continue
		}
		if len(cur) > len(keyNames) && curW+2+widths[i] > width {
			out = append(out, selectColumns(t, cur...))
			cur, curW = slices.Clone(keyNames), keyW
		}
		cur, curW = append(cur, n), curW+2+widths[i]
	}
	return append(out, selectColumns(t, cur...))
}
