package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// htmlUtilBar is one phase's utilisation bar: the mean of SMs Active
// (Throughput %) drawn on 0–100 %.
type htmlUtilBar struct {
	Label, Text string
	W           float64 // bar width in px of utilBarWidth
}

const utilBarWidth = 300

// htmlTimeline draws the first input's GPU metrics over the run.
type htmlTimeline struct {
	Lines   []htmlLine
	Caption string
}

type htmlLine struct{ Name, Color, Points string }

// utilisationBars are the per-phase, per-arm bars of SMs Active (none
// when it was not recorded).
func utilisationBars(doc *analysis.Doc) []htmlUtilBar {
	h := doc.Hardware
	if h == nil {
		return nil
	}
	var out []htmlUtilBar
	for _, r := range h.GPUMetricRows {
		if r.Metric != "SMs Active" {
			continue
		}
		label := r.Phase
		if r.Arm != "" {
			label = r.Arm + " · " + r.Phase
		}
		b := htmlUtilBar{Label: label, Text: "— (not measured)"}
		if r.Mean != nil {
			b.W = utilBarWidth * math.Min(math.Max(*r.Mean, 0), 100) / 100
			b.Text = fmt.Sprintf("%.1f %s", *r.Mean, r.Unit)
		}
		out = append(out, b)
	}
	return out
}

// timelineMetrics are the metrics drawn over the run, where recorded.
var timelineMetrics = []struct{ name, color string }{{"SMs Active", "#2a7"}, {"SM Issue", "#27a"}, {"Tensor Active", "#a27"}, {"DRAM Read Bandwidth", "#a72"}, {"DRAM Write Bandwidth", "#777"}}

// gpuTimeline is the throughput metrics (0–100 %) over the run.
func gpuTimeline(doc *analysis.Doc) *htmlTimeline {
	h := doc.Hardware
	if h == nil || h.Timeline == nil {
		return nil
	}
	tl := &htmlTimeline{}
	for _, tm := range timelineMetrics {
		for m, mt := range h.GPUMetrics {
			if mt.Name != tm.name || m >= len(h.Timeline.Mean) {
				continue
			}
			row := h.Timeline.Mean[m]
			var pts []string
			for b, v := range row {
				if math.IsNaN(v) {
					continue
				}
				x := 600 * (float64(b) + 0.5) / float64(len(row))
				y := 110 - math.Min(math.Max(v, 0), 100)
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
			}
			if len(pts) > 0 {
				tl.Lines = append(tl.Lines, htmlLine{Name: mt.Name + " [" + mt.Unit + "]", Color: tm.color, Points: strings.Join(pts, " ")})
			}
		}
	}
	if len(tl.Lines) == 0 {
		return nil
	}
	var names []string
	for _, l := range tl.Lines {
		names = append(names, l.Name)
	}
	tl.Caption = fmt.Sprintf("%s over %.3f s of the run (0–100 %%, mean of all GPUs with metrics, %d %s)", strings.Join(names, ", "), float64(h.Timeline.End-h.Timeline.Start)/1e9,
		len(h.Timeline.Mean[0]), plural.Of(len(h.Timeline.Mean[0]), "bin", "bins"))
	return tl
}
