package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
)

func writeVerdictCSV(w io.Writer, v *analysis.Verdict) error {
	lo, hi := "", ""
	if v.Removable.CI != nil {
		lo, hi = strconv.FormatFloat(v.Removable.CI[0], 'g', -1, 64), strconv.FormatFloat(v.Removable.CI[1], 'g', -1, 64)
	}
	// RFC 4180 quoting (Go's %q is not CSV), names neutralised as formulas.
	cw := csv.NewWriter(w)
	err := cw.WriteAll([][]string{
		{"verdict", "arm", "phases", "min_gain", "removable_share", "ci_lo", "ci_hi", "method", "capturable", "reason"},
		{v.Verdict, export.CSVCell(v.Arm), export.CSVCell(strings.Join(v.Phases, ",")), strconv.FormatFloat(v.MinGain, 'g', -1, 64),
			strconv.FormatFloat(v.Removable.Value, 'g', -1, 64), lo, hi, v.Removable.Method, strconv.FormatBool(v.Capturable), export.CSVCell(v.Reason)},
	})
	return err
}

func writeVerdictText(w io.Writer, v *analysis.Verdict, md bool) error {
	bullet := "  "
	if md {
		fmt.Fprintf(w, "## nsysphase verdict\n\n")
		bullet = "- "
	}
	esc := func(s string) string { // names from the export render as text
		if md {
			return export.EscapeMarkdown(s)
		}
		return s
	}
	code := map[string]int{analysis.VerdictGo: 0, analysis.VerdictNoGo: 1, analysis.VerdictInconclusive: 3}[v.Verdict] // the exit statuses of nsysphase verdict
	fmt.Fprintf(w, "verdict: %s (exit %d)\n", strings.ToUpper(v.Verdict), code)
	if md {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%s.\n", esc(v.Reason))
	if md {
		fmt.Fprintln(w)
	}
	ci := func(c *[2]float64) string {
		if c == nil {
			return "no CI"
		}
		return fmt.Sprintf("[%.1f, %.1f]", c[0]/1e3, c[1]/1e3)
	}
	fmt.Fprintf(w, "%sremovable: %.1f µs/step %s of %.1f µs/step step wall %s (arm %s, %d steps; %s)\n", bullet,
		v.RemovableNs.Mean/1e3, ci(v.RemovableNs.MeanCI), v.StepWallNs.Mean/1e3, ci(v.StepWallNs.MeanCI), esc(v.Arm), v.StepWallNs.N, v.Removable.Method)
	fmt.Fprintf(w, "%sdefinition: %s\n", bullet, esc(v.Definition))
	if v.Capturable {
		fmt.Fprintf(w, "%scapture: no blocker inside the region in %s\n", bullet, esc(v.Arm))
	} else {
		var kinds []string
		for _, b := range v.Blockers {
			kinds = append(kinds, fmt.Sprintf("%s %s in %s (%.3g/step)", b.Kind, esc(b.API), esc(b.Phase), b.PerStep))
		}
		fmt.Fprintf(w, "%scapture: not capturable as it stands, %d blockers (see nsysphase boundary): %s\n", bullet, len(v.Blockers), strings.Join(kinds, "; "))
	}
	if len(v.ArmGains) > 0 {
		fmt.Fprintf(w, "%smeasured gains over %s (step wall_ns mean, 1 − ratio):\n", bullet, esc(v.Arm))
		for _, g := range v.ArmGains {
			s := "no ratio"
			if g.Gain != nil {
				s = fmt.Sprintf("%+.1f%%", 100**g.Gain)
			}
			if g.GainCI != nil {
				s += fmt.Sprintf(" [%+.1f%%, %+.1f%%]", 100*g.GainCI[0], 100*g.GainCI[1])
			}
			fmt.Fprintf(w, "%s  %s: %s (%s, n = %d)\n", bullet, esc(g.Arm), s, g.Method, g.NUnits)
		}
	}
	writeWarnings(w, v.Warnings, md)
	return nil
}
