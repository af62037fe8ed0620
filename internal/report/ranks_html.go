package report

import (
	"fmt"
	"math"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// heatMap is the ranks' lateness per matched step: one row per rank, one
// cell per step, darker = later.
type heatMap struct {
	Title         string
	Width, Height float64
	LabelW        float64
	Rows          []heatRow
	Cells         []heatCell
	Caption       string
}

type heatRow struct {
	Label string
	Y     float64
}

type heatCell struct {
	X, Y, W, H float64
	Fill       string
	Tooltip    string
}

// heatItem is one cell's value: a step (or collective) of a rank.
type heatItem struct {
	step, rank int
	value      int64
	tip        string
}

// rankHeatMaps are the heat maps of the ranks section: step wall by rank
// and step (when steps are matched), beside the step-end straggler
// sentence, and lateness at the collectives.
func rankHeatMaps(s *analysis.RanksSection) []*heatMap {
	var out []*heatMap
	if e := s.StepEnds; e != nil {
		var items []heatItem
		for _, r := range e.Rows {
			tip := fmt.Sprintf("%s, rank %d: step wall %.1f µs; ends %.1f µs after the first rank", r.Label, r.Rank, float64(r.WallNs)/1e3, float64(r.BehindNs)/1e3)
			if r.Last {
				tip += " (last)"
			}
			items = append(items, heatItem{r.Step, r.Rank, r.WallNs, tip})
		}
		if h := rankHeatMap(s, e.Steps, "step wall by rank and step", items, true,
			"Step wall of each rank per matched step; white = the shortest (%.1f µs), darkest = the longest (%.1f µs). "+e.Sentence+"."); h != nil {
			out = append(out, h)
		}
	}
	var late []heatItem
	for _, st := range s.Steps {
		tip := fmt.Sprintf("%s, rank %d: %.1f µs late over %d %s", st.Label, st.Rank, float64(st.LatenessNs)/1e3, st.Collectives, plural.Of(st.Collectives, "collective", "collectives"))
		if st.StepWallNs != nil {
			tip += fmt.Sprintf("; step wall %.1f µs", float64(*st.StepWallNs)/1e3)
		}
		if st.Straggler {
			tip += " (last)"
		}
		late = append(late, heatItem{st.Step, st.Rank, st.LatenessNs, tip})
	}
	if h := rankHeatMap(s, s.Settings.Steps, "lateness by rank and "+s.Settings.Unit, late, false,
		"Lateness per matched "+s.Settings.Unit+" (arrival at its collectives − the first rank's, summed); white = %.1f µs, darkest = %.1f µs."); h != nil {
		out = append(out, h)
	}
	return out
}

// rankHeatMap draws items, ns steps of every rank (nil without them);
// fromMin scales colours from the smallest value, else from 0.
func rankHeatMap(s *analysis.RanksSection, ns int, title string, items []heatItem, fromMin bool, caption string) *heatMap {
	nr := len(s.Ranks)
	if nr == 0 || ns == 0 || len(items) != nr*ns {
		return nil
	}
	const rowH, labelW, plotW = 18.0, 70.0, 840.0
	cw := math.Max(1, math.Min(16, plotW/float64(ns)))
	h := &heatMap{Title: title, LabelW: labelW, Width: labelW + cw*float64(ns) + 10, Height: rowH*float64(nr) + 8}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, it := range items {
		lo, hi = min(lo, it.value), max(hi, it.value)
	}
	if !fromMin {
		lo = 0
	}
	row := map[int]int{}
	for i, r := range s.Ranks {
		row[r.Rank] = i
		h.Rows = append(h.Rows, heatRow{Label: fmt.Sprintf("rank %d", r.Rank), Y: rowH*float64(i) + rowH/2 + 4})
	}
	for _, it := range items {
		v := 0.0
		if hi > lo {
			v = float64(it.value-lo) / float64(hi-lo)
		}
		// white → vermillion (#D55E00), the palette of the wall parts
		c := func(a, b float64) int { return int(math.Round(a + (b-a)*v)) }
		fill := fmt.Sprintf("#%02X%02X%02X", c(255, 0xD5), c(255, 0x5E), c(255, 0x00))
		h.Cells = append(h.Cells, heatCell{X: labelW + cw*float64(it.step), Y: rowH * float64(row[it.rank]), W: cw, H: rowH - 2, Fill: fill, Tooltip: it.tip})
	}
	h.Caption = fmt.Sprintf(caption, float64(lo)/1e3, float64(hi)/1e3)
	return h
}
