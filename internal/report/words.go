package report

import (
	"math"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/export"
)

// Words for every renderer: wrapping and clipping to the terminal, short
// distinct names, Markdown escapes and rounding.

func appendNew(xs []string, s string) []string {
	if slices.Contains(xs, s) {
		return xs
	}
	return append(xs, s)
}

// wrap breaks s at spaces so that no line exceeds width; continuation lines
// start with indent.
func wrap(s string, width int, indent string) string {
	if width <= 0 || displayLen(s) <= width {
		return s
	}
	var b strings.Builder
	line := 0
	for i, word := range strings.Split(s, " ") {
		wl := displayLen(word)
		if i > 0 {
			if line+1+wl > width && line > len(indent) {
				b.WriteString("\n" + indent)
				line = len(indent)
			} else {
				b.WriteByte(' ')
				line++
			}
		}
		b.WriteString(word)
		line += wl
	}
	return b.String()
}

func displayLen(s string) int { return len([]rune(s)) }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// shortName clips s to n runes keeping its head and its tail, where names
// that share a long prefix differ ("MatrixMul…/MemcpyH2D").
func shortName(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 5 {
		return clip(s, n)
	}
	head := (n - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(n-1-head):])
}

// distinctNames clips every name to n runes so that distinct names stay
// distinct: head and tail first, then more of the tail for names that
// still collide, then the full name.
func distinctNames(names []string, n int) map[string]string {
	out := make(map[string]string, len(names))
	for _, s := range names {
		out[s] = shortName(s, n)
	}
	for _, headRunes := range []int{n / 4, 3, 1} {
		clash := map[string]int{}
		for _, v := range out {
			clash[v]++
		}
		done := true
		for s, v := range out {
			if clash[v] < 2 {
				continue
			}
			done = false
			r := []rune(s)
			if len(r) <= n {
				continue
			}
			out[s] = string(r[:headRunes]) + "…" + string(r[len(r)-(n-1-headRunes):])
		}
		if done {
			break
		}
	}
	clash := map[string]int{}
	for _, v := range out {
		clash[v]++
	}
	for s, v := range out {
		if clash[v] > 1 {
			out[s] = s // the tail is shared too: only the whole name tells them apart
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// escapeSummary makes a <details> title (which may name the baseline arm)
// text: &, < and > escaped (quotes are text outside an attribute, so the
// title keeps its apostrophes), and no link syntax for renderers that read
// Markdown inside the tag.
func escapeSummary(s string) string {
	return summaryReplacer.Replace(export.EscapeControl(s))
}

var summaryReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "](", "]&#40;")

// escapeMarkdownText keeps a sentence a paragraph of plain text: a leading
// "|", "-", "#" or digit-dot would turn it into a table row, list or
// heading, and names from the export may hold HTML (every "<" is escaped)
// or link syntax ("](" and "][" are escaped: the report's own brackets,
// CIs such as [+615, +714 µs], stay as they are). Control characters are
// escaped too.
func escapeMarkdownText(s string) string {
	return markdownTextReplacer.Replace(export.EscapeControl(s))
}

var markdownTextReplacer = strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", "*", `\*`, "_", `\_`, "`", "\\`", "](", `\](`, "][", `\]\[`)

func round1(v float64) float64 { return float64(int64(v*10+copysignHalf(v))) / 10 }

// roundShown is round1, except that a value it would show as 0 that is not
// 0 keeps two significant digits: a 12 µs step in a table of ms reads
// 0.012, never a measured 0.
func roundShown(v float64) float64 {
	if r := round1(v); r != 0 || v == 0 || math.IsNaN(v) {
		return r
	}
	scale := math.Pow(10, math.Floor(math.Log10(math.Abs(v)))-1)
	return math.Round(v/scale) * scale
}

func copysignHalf(v float64) float64 {
	if v < 0 {
		return -0.5
	}
	return 0.5
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
