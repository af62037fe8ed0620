package stats

import (
	"fmt"

	"github.com/nsysphase/nsysphase/stats/internal/dgp"
)

var armNames = [2]string{"A", "B"}

// dgpUnits turns generated blocks into one-metric units of one profile.
func dgpUnits(blocks []dgp.Block) []Unit {
	units := make([]Unit, len(blocks))
	for i, b := range blocks {
		units[i] = Unit{
			ID:      fmt.Sprintf("run.sqlite#arm=%s block=%d", armNames[b.Arm], b.Round),
			Arm:     armNames[b.Arm],
			Profile: "run.sqlite",
			Start:   b.Start,
			Steps:   [][]float64{b.Steps},
		}
	}
	return units
}

// testConfig resolves options with the coverage suite's floor of B = 999.
func testConfig(metrics []string, opt Options) *config {
	cfg, err := resolveOptions(metrics, opt, 999)
	if err != nil {
		panic(err)
	}
	return cfg
}

func findCmp(r *Result, metric, stat string) *Comparison {
	for i := range r.Comparisons {
		c := &r.Comparisons[i]
		if c.Metric == metric && c.Stat == stat {
			return c
		}
	}
	return nil
}

func hasCode(ws []Warning, code, arm string) bool {
	for _, w := range ws {
		if w.Code == code && (arm == "" || w.Arm == arm) {
			return true
		}
	}
	return false
}
