package nsys

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCleanName: real names pass unchanged (no copy); control characters,
// invalid bytes and bidi overrides become escapes; distinct inputs stay
// distinct; long names are bounded with their length and hash.
func TestCleanName(t *testing.T) {
	for in, want := range map[string]string{
		"collector_step":                  "collector_step",
		"ünï 日本 aten::mm ✓":               "ünï 日本 aten::mm ✓",
		"m\xffx":                          `m\xffx`,
		"m\xfex":                          `m\xfex`,
		"a\x1b]0;t\x07b":                  `a\x1b]0;t\x07b`,
		"line\nbreak\r":                   `line\x0abreak\x0d`,
		"c1\u009bx":                       `c1\u009bx`,
		"bidi\u202eevil":                  `bidi\u202eevil`,
		"\xe2\x82":                        `\xe2\x82`, // a rune cut short
		"replacement \uFFFD kept":         "replacement \uFFFD kept",
		"del\x7f":                         `del\x7f`,
		"tab\tin":                         `tab\x09in`,
		"=HYPERLINK(\"x\")":               "=HYPERLINK(\"x\")", // formulas are the CSV writer's business
		"<svg onload=alert(1)>":           "<svg onload=alert(1)>",
		strings.Repeat("a", MaxNameBytes): strings.Repeat("a", MaxNameBytes),
	} {
		if got := CleanName(in); got != want {
			t.Errorf("CleanName(%q) = %q, want %q", in, got, want)
		}
	}
	long1 := strings.Repeat("x", 100<<20)
	long2 := long1[:len(long1)-1] + "y"
	a, b := CleanName(long1), CleanName(long2)
	if a == b || len(a) > MaxNameBytes+64 || !strings.HasPrefix(a, strings.Repeat("x", MaxNameBytes)) || !strings.Contains(a, "…[104857600 bytes, sha256 ") {
		t.Errorf("100 MiB names: %q… (%d bytes) and %q… (%d bytes)", a[MaxNameBytes-8:], len(a), b[MaxNameBytes-8:], len(b))
	}
	// Escapes near the bound never leave half an escape or rune.
	c := CleanName(strings.Repeat("é", MaxNameBytes) + "\x1b")
	if !utf8.ValidString(c) || len(c) > MaxNameBytes+64 {
		t.Errorf("bounded name with multi-byte runes: invalid or too long (%d bytes)", len(c))
	}
}
