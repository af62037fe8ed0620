package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"regexp"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/phases"
)

func doc(t *testing.T, name string, o analysis.Options) *analysis.Doc {
	t.Helper()
	cfg := analysis.Config{Files: []string{fixture.Get(t, name).XZ},
		Segment: phases.Options{ArmPattern: regexp.MustCompile(phases.DefaultArmPattern), Depth: 1, SkipSteps: 1}}
	files, err := analysis.ReadFiles(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Build(context.Background(), files, o, "test")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var svgRe = regexp.MustCompile(`(?s)<svg .*?</svg>`)

func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   analysis.Options
		forest bool
	}{
		{"stats", testStats, true},
		{"no-stats", analysis.Options{NoStats: true, SkipSteps: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := doc(t, "eager_graph_small", tc.opts)
			var b bytes.Buffer
			if err := Generate(&b, HTML, d, Options{Tool: "nsysphase test"}); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if got := strings.Contains(page, "forest plot"); got != tc.forest {
				t.Errorf("forest plot present %v, want %v", got, tc.forest)
			}
			// Each inline SVG is well-formed XML (browsers are lenient; other viewers are not).
			svgs := svgRe.FindAllString(page, -1)
			if len(svgs) < 2 {
				t.Fatalf("%d SVG plots, want the step and phase bars at least", len(svgs))
			}
			for _, s := range svgs {
				dec := xml.NewDecoder(strings.NewReader(s))
				for {
					if _, err := dec.Token(); err != nil {
						if err.Error() != "EOF" {
							t.Fatalf("SVG is not well-formed: %v", err)
						}
						break
					}
				}
			}
			for _, part := range Parts {
				if !strings.Contains(page, part.Color) {
					t.Errorf("no %s segment or legend", part.Label)
				}
			}
		})
	}
}

func TestTicks(t *testing.T) {
	ts, top := niceTicks(1737.8)
	if top < 1737.8 || len(ts) < 3 || len(ts) > 12 || ts[0] != 0 {
		t.Errorf("niceTicks(1737.8) = %v, %v", ts, top)
	}
	x := func(r float64) float64 { return 1000 * r }
	lt := logTicks(0.4, 1.3, x, 44)
	has1 := false
	for i, v := range lt {
		has1 = has1 || v == 1
		if i > 0 && x(v)-x(lt[i-1]) < 44 {
			t.Errorf("ticks %v and %v closer than 44 px", lt[i-1], v)
		}
	}
	if !has1 {
		t.Errorf("logTicks %v lack 1", lt)
	}
}
