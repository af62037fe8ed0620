package report

import (
	"fmt"
	"strings"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// stepWallPlot is one arm's step wall over its run: the kept steps in
// order, block after block, with each block's warm-up (--skip-steps, left
// out of the statistics) marked before it. Drift, spikes and a slow block
// are what a person looks for first.
type stepWallPlot struct {
	Arm                 string
	Caption             string
	Width, Height       float64
	PlotX, PlotW        float64
	PlotTop, PlotBottom float64
	Points              string // the polyline
	Warmups             []plotBand
	Blocks              []plotBand // block separators (X) with labels
	YTicks              []plotTick
}

type plotBand struct {
	X, W  float64
	Label string
}

type plotTick struct {
	Y     float64
	Label string
}

// stepWallPlots draws every arm's step wall_ns over the run, one plot an
// arm on a shared time scale; nil without a step or steps.
func stepWallPlots(doc *analysis.Doc) []*stepWallPlot {
	if doc.Step == "" {
		return nil
	}
	series, err := doc.ArmSeries(doc.Step, "wall_ns")
	if err != nil || len(series) == 0 {
		return nil
	}
	top := 0.0
	for _, units := range series {
		for _, u := range units {
			for _, v := range u {
				if v == v && v > top {
					top = v
				}
			}
		}
	}
	if top <= 0 {
		return nil
	}
	sc := scaleFor(top)
	ticks, hi := niceTicks(top / sc.ns)
	skip := doc.Settings.SkipSteps
	var out []*stepWallPlot
	for _, arm := range doc.Arms {
		units := series[arm]
		n := 0
		for _, u := range units {
			n += len(u) + skip
		}
		if n == 0 {
			continue
		}
		p := &stepWallPlot{Arm: arm, Width: 760, Height: 170, PlotX: 60, PlotW: 680, PlotTop: 10, PlotBottom: 140}
		x := func(i int) float64 { return p.PlotX + p.PlotW*(float64(i)+0.5)/float64(n) }
		y := func(v float64) float64 { return p.PlotBottom - (p.PlotBottom-p.PlotTop)*v/sc.ns/hi }
		var pts []string
		i, steps := 0, 0
		for b, u := range units {
			start := p.PlotX + p.PlotW*float64(i)/float64(n)
			if skip > 0 {
				p.Warmups = append(p.Warmups, plotBand{X: start, W: p.PlotW * float64(skip) / float64(n)})
			}
			p.Blocks = append(p.Blocks, plotBand{X: start, Label: fmt.Sprintf("block %d", b+1)})
			i += skip
			for _, v := range u {
				if v == v {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
				}
				i++
			}
			steps += len(u)
		}
		p.Points = strings.Join(pts, " ")
		for _, t := range ticks {
			p.YTicks = append(p.YTicks, plotTick{Y: y(t * sc.ns), Label: fmt.Sprintf("%s %s", trimFloat(t), sc.unit)})
		}
		warm := ""
		if skip > 0 {
			warm = fmt.Sprintf("; shaded: the first %d %s of each block, warm-up left out of the statistics (not drawn)", skip, plural.Of(skip, "step", "steps"))
		}
		p.Caption = fmt.Sprintf("%s: wall of %s, %d %s in %d %s, in run order%s", arm, doc.Step, steps, plural.Of(steps, "step", "steps"), len(units), plural.Of(len(units), "block", "blocks"), warm)
		out = append(out, p)
	}
	return out
}
