package nsys

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nsysphase/nsysphase/internal/base/budget"
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

// TestLongNamesBudget: an export's long names are exact up to MaxNameBytes
// until budget.LongNamesBytes of them are kept; later ones keep
// budget.DisplayNameBytes with their length and hash; a name reads the same
// every time it is read, and distinct names stay distinct.
func TestLongNamesBudget(t *testing.T) {
	var f File
	n := budget.LongNamesBytes/MaxNameBytes + 3
	base := strings.Repeat("k", MaxNameBytes-64)
	seen := map[string]bool{}
	used := 0
	for i := range n {
		name := base + strings.Repeat("x", i%16) + string(rune('a'+i%26)) + strconv.Itoa(i)
		got := f.cleanName(name)
		if again := f.cleanName(name); again != got {
			t.Fatalf("name %d read twice gives two strings", i)
		}
		if seen[got] {
			t.Fatalf("name %d reads like an earlier one", i)
		}
		seen[got] = true
		exact := used < budget.LongNamesBytes
		used += len(got)
		switch {
		case exact && got != name:
			t.Errorf("name %d (%d bytes) within the budget is not exact", i, len(name))
		case !exact && (len(got) > budget.DisplayNameBytes+64 || !strings.Contains(got, "…["+strconv.Itoa(len(name))+" bytes, sha256 ")):
			t.Errorf("name %d past the budget: %d bytes, want its first %d with length and hash", i, len(got), budget.DisplayNameBytes)
		}
	}
	if short := "kernel_a"; f.cleanName(short) != short {
		t.Error("a short name past the budget is not exact")
	}
}
