package report

import (
	"fmt"
	"math"

	"github.com/nsysphase/nsysphase/internal/analysis"
)

// heatMap is the ranks' lateness per matched step: one row per rank, one
// cell per step, darker = later.
type heatMap struct {
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

// rankHeatMap draws s.Steps (nil without matched steps).
func rankHeatMap(s *analysis.RanksSection) *heatMap {
	nr, ns := len(s.Ranks), s.Settings.Steps
	if nr == 0 || ns == 0 || len(s.Steps) != nr*ns {
		return nil
	}
	const rowH, labelW, plotW = 18.0, 70.0, 840.0
	cw := math.Max(1, math.Min(16, plotW/float64(ns)))
	h := &heatMap{LabelW: labelW, Width: labelW + cw*float64(ns) + 10, Height: rowH*float64(nr) + 8}
	var hi int64
	for _, st := range s.Steps {
		hi = max(hi, st.LatenessNs)
	}
	row := map[int]int{}
	for i, r := range s.Ranks {
		row[r.Rank] = i
		h.Rows = append(h.Rows, heatRow{Label: fmt.Sprintf("rank %d", r.Rank), Y: rowH*float64(i) + rowH/2 + 4})
	}
	for _, st := range s.Steps {
		v := 0.0
		if hi > 0 {
			v = float64(st.LatenessNs) / float64(hi)
		}
		// white → vermillion (#D55E00), the palette of the wall parts
		c := func(a, b float64) int { return int(math.Round(a + (b-a)*v)) }
		fill := fmt.Sprintf("#%02X%02X%02X", c(255, 0xD5), c(255, 0x5E), c(255, 0x00))
		tip := fmt.Sprintf("%s, rank %d: %.1f µs late over %d collectives", st.Label, st.Rank, float64(st.LatenessNs)/1e3, st.Collectives)
		if st.Straggler {
			tip += " (last)"
		}
		h.Cells = append(h.Cells, heatCell{X: labelW + cw*float64(st.Step), Y: rowH * float64(row[st.Rank]), W: cw, H: rowH - 2, Fill: fill, Tooltip: tip})
	}
	h.Caption = fmt.Sprintf("Lateness per matched %s (arrival at its collectives − the first rank's, summed); white = 0, darkest = %.1f µs.", s.Settings.Unit, float64(hi)/1e3)
	return h
}
