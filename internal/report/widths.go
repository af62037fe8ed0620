package report

import (
	"bytes"
	"io"
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
