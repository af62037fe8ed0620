package report

import (
	"fmt"
	"math"

	"github.com/nsysphase/nsysphase/internal/analysis"
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

// rankHeatMaps are the heat maps of the ranks section: step wall by rank
// and step (when steps were matched), and lateness.
func rankHeatMaps(s *analysis.RanksSection) []*heatMap {
	var out []*heatMap
	walls := len(s.Steps) > 0
	for _, st := range s.Steps {
		walls = walls && st.StepWallNs != nil
	}
	if walls {
		if h := rankHeatMap(s, "step wall by rank and step", func(st analysis.StragglerStep) int64 { return *st.StepWallNs }, true,
			"Step wall of each rank per matched step; white = the shortest (%.1f µs), darkest = the longest (%.1f µs)."); h != nil {
			out = append(out, h)
		}
	}
	if h := rankHeatMap(s, "lateness by rank and "+s.Settings.Unit, func(st analysis.StragglerStep) int64 { return st.LatenessNs }, false,
		"Lateness per matched "+s.Settings.Unit+" (arrival at its collectives − the first rank's, summed); white = %.1f µs, darkest = %.1f µs."); h != nil {
		out = append(out, h)
	}
	return out
}

// rankHeatMap draws one value of s.Steps (nil without matched steps); fromMin
// scales colours from the smallest value, else from 0.
func rankHeatMap(s *analysis.RanksSection, title string, value func(analysis.StragglerStep) int64, fromMin bool, caption string) *heatMap {
	nr, ns := len(s.Ranks), s.Settings.Steps
	if nr == 0 || ns == 0 || len(s.Steps) != nr*ns {
		return nil
	}
	const rowH, labelW, plotW = 18.0, 70.0, 840.0
	cw := math.Max(1, math.Min(16, plotW/float64(ns)))
	h := &heatMap{Title: title, LabelW: labelW, Width: labelW + cw*float64(ns) + 10, Height: rowH*float64(nr) + 8}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, st := range s.Steps {
		lo, hi = min(lo, value(st)), max(hi, value(st))
	}
	if !fromMin {
		lo = 0
	}
	row := map[int]int{}
	for i, r := range s.Ranks {
		row[r.Rank] = i
		h.Rows = append(h.Rows, heatRow{Label: fmt.Sprintf("rank %d", r.Rank), Y: rowH*float64(i) + rowH/2 + 4})
	}
	for _, st := range s.Steps {
		v := 0.0
		if hi > lo {
			v = float64(value(st)-lo) / float64(hi-lo)
		}
		// white → vermillion (#D55E00), the palette of the wall parts
		c := func(a, b float64) int { return int(math.Round(a + (b-a)*v)) }
		fill := fmt.Sprintf("#%02X%02X%02X", c(255, 0xD5), c(255, 0x5E), c(255, 0x00))
		tip := fmt.Sprintf("%s, rank %d: %.1f µs late over %d collectives", st.Label, st.Rank, float64(st.LatenessNs)/1e3, st.Collectives)
		if st.StepWallNs != nil {
			tip += fmt.Sprintf("; step wall %.1f µs", float64(*st.StepWallNs)/1e3)
		}
		if st.Straggler {
			tip += " (last)"
		}
		h.Cells = append(h.Cells, heatCell{X: labelW + cw*float64(st.Step), Y: rowH * float64(row[st.Rank]), W: cw, H: rowH - 2, Fill: fill, Tooltip: tip})
	}
	h.Caption = fmt.Sprintf(caption, float64(lo)/1e3, float64(hi)/1e3)
	return h
}
