package cli_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

var (
	decompLine = regexp.MustCompile(`^  \S+, \S+: ([+-][0-9.]+) µs = (.*)$`)
	partValue  = regexp.MustCompile(`^\S+ ([+-][0-9.]+)`)
)

// TestDefaultOutputFits: the default analyze output of every bundled
// export fits 120 columns, lists its warnings in at most 6 lines, and each
// "where the difference comes from" line adds up to its total (the parts
// not significant summed as "others").
func TestDefaultOutputFits(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("analyses every bundled export")
	}
	fxs := append(fixture.All(t), fixture.Extra(t)...)
	for _, fx := range fxs {
		out, errs, code := run(t, "analyze", "--resamples", "1999", fx.XZ)
		if code != 0 {
			t.Errorf("%s: analyze exits %d: %s", fx.Name, code, strings.TrimSpace(errs))
			continue
		}
		lines := strings.Split(out, "\n")
		warn := 0
		inWarn, inDecomp := false, false
		joined := ""
		for _, l := range lines {
			if n := len([]rune(l)); n > 120 {
				t.Errorf("%s: line of %d columns: %s", fx.Name, n, l)
			}
			switch {
			case strings.HasPrefix(l, "Warnings"):
				inWarn = true
				continue
			case strings.HasPrefix(l, "Where each"):
				inDecomp = true
				continue
			case l == "":
				inDecomp = false
			}
			if inWarn && strings.TrimSpace(l) != "" {
				warn++
			}
			if inDecomp {
				if strings.HasPrefix(l, "      ") {
					joined += " " + strings.TrimSpace(l)
					continue
				}
				checkDecompLine(t, fx.Name, joined)
				joined = l
			}
		}
		checkDecompLine(t, fx.Name, joined)
		if warn > 6 {
			t.Errorf("%s: %d warning lines", fx.Name, warn)
		}
	}
}

// checkDecompLine checks that a decomposition line's parts sum to its
// total within the rounding of the printed values.
func checkDecompLine(t *testing.T, name, l string) {
	t.Helper()
	m := decompLine.FindStringSubmatch(l)
	if m == nil {
		return
	}
	total, _ := strconv.ParseFloat(m[1], 64)
	var sum float64
	items := strings.Split(strings.TrimSuffix(m[2], ", not significant"), ", ")
	for _, it := range items {
		pm := partValue.FindStringSubmatch(it)
		if pm == nil {
			t.Errorf("%s: unreadable part %q in %s", name, it, l)
			return
		}
		v, _ := strconv.ParseFloat(pm[1], 64)
		sum += v
	}
	if d := sum - total; d > 0.05*float64(len(items)+1) || d < -0.05*float64(len(items)+1) {
		t.Errorf("%s: parts sum to %.1f, not %.1f: %s", name, sum, total, l)
	}
}
