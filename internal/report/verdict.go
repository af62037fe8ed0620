package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/phases"
)

func writeVerdictCSV(w io.Writer, v *analysis.Verdict) error {
	lo, hi := "", ""
	if v.Removable.CI != nil {
		lo, hi = strconv.FormatFloat(v.Removable.CI[0], 'g', -1, 64), strconv.FormatFloat(v.Removable.CI[1], 'g', -1, 64)
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	ns := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	ci := func(c *[2]float64) (string, string) {
		if c == nil {
			return "", ""
		}
		return ns(c[0]), ns(c[1])
	}
	b := v.Bound
	rlo, rhi := ci(b.RemovableNs.MeanCI)
	flo, fhi := ci(b.RemovableIfFixedNs.MeanCI)
	// RFC 4180 quoting (Go's %q is not CSV), names neutralised as formulas.
	cw := csv.NewWriter(w)
	err := cw.WriteAll([][]string{
		{"verdict", "arm", "phases", "min_gain", "removable_share", "ci_lo", "ci_hi", "method", "capturable", "reason",
			"removable_ns", "removable_ns_ci_lo", "removable_ns_ci_hi", "host_ns", "gpu_floor_ns", "replay_ns", "replay_source", "ceiling_ns",
			"no_launch_host_ns", "blocked_host_ns", "removable_if_fixed_ns", "removable_if_fixed_ns_ci_lo", "removable_if_fixed_ns_ci_hi", "step_wall_ns", "steps"},
		{string(v.Verdict), export.CSVCell(v.Arm), export.CSVCell(strings.Join(v.Phases, ",")), num(v.MinGain), num(v.Removable.Value),
			lo, hi, v.Removable.Method, strconv.FormatBool(v.Capturable), export.CSVCell(v.Reason),
			ns(b.RemovableNs.Mean), rlo, rhi, ns(b.HostNs.Mean), ns(b.GPUFloorNs.Mean), strconv.FormatInt(b.Replay.PerStepNs, 10), b.Replay.Source, ns(b.CeilingNs.Mean),
			ns(b.NoLaunchHostNs.Mean), ns(b.BlockedHostNs.Mean), ns(b.RemovableIfFixedNs.Mean), flo, fhi, ns(b.StepWallNs.Mean), strconv.Itoa(b.Steps)},
	})
	return err
}

func writeVerdictText(w io.Writer, v *analysis.Verdict, md bool, opt Options) error {
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
	code := map[analysis.Decision]int{analysis.VerdictGo: 0, analysis.VerdictNoGo: 1, analysis.VerdictInconclusive: 3}[v.Verdict] // the exit statuses of nsysphase verdict
	fmt.Fprintf(w, "verdict: %s (exit %d)\n", strings.ToUpper(string(v.Verdict)), code)
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
	arm := "arm " + esc(v.Arm)
	if v.Arm == "" || v.Arm == phases.SingleArm {
		arm = "no arm ranges: arm " + phases.SingleArm
	}
	fmt.Fprintf(w, "%sremovable: %.1f µs/step %s of %.1f µs/step step wall %s (%s, %d %s; %s)\n", bullet,
		v.RemovableNs.Mean/1e3, ci(v.RemovableNs.MeanCI), v.StepWallNs.Mean/1e3, ci(v.StepWallNs.MeanCI), arm, v.StepWallNs.N, plural.Of(v.StepWallNs.N, "step", "steps"), v.Removable.Method)
	fmt.Fprintf(w, "%sbefore the bound: launch + cpu_other of every region phase %.1f µs/step %s\n", bullet, v.HostUpperNs.Mean/1e3, ci(v.HostUpperNs.MeanCI))
	if md || opt.Wide {
		fmt.Fprintf(w, "%sdefinition: %s\n", bullet, esc(v.Definition))
	} else {
		fmt.Fprintf(w, "%sdefinition: %s\n", bullet, boundSummary)
	}
	fmt.Fprintf(w, "%sstatistics: unit = block or profile (never the step); %g%% CIs; B = %d resamples; seed %d; --skip-steps %d\n", bullet,
		100*v.Settings.Confidence, v.Settings.Resamples, v.Settings.Seed, v.Settings.SkipSteps)
	if md {
		fmt.Fprintf(w, "\n### The bound's parts (µs per step)\n\n")
	} else {
		fmt.Fprintf(w, "\nThe bound's parts (µs per step)\n")
	}
	f := Text
	if md {
		f = Markdown
	}
	if err := writeBound(w, f, []string{v.Arm}, map[string]*analysis.CaptureBound{v.Arm: v.Bound}); err != nil {
		return err
	}
	if !md {
		fmt.Fprintln(w)
	}
	if v.Capturable {
		fmt.Fprintf(w, "%scapture: no blocker inside the region in %s\n", bullet, esc(analysis.ArmName(v.Arm)))
	} else {
		var kinds []string
		for _, b := range v.Blockers {
			kinds = append(kinds, fmt.Sprintf("%s %s in %s (%.3g/step)", b.Kind, esc(b.API), esc(b.Phase), b.PerStep))
		}
		fmt.Fprintf(w, "%scapture: not capturable as it stands, %d %s (see nsysphase boundary): %s\n", bullet, len(v.Blockers), plural.Of(len(v.Blockers), "blocker", "blockers"), strings.Join(kinds, "; "))
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
			d := fmt.Sprintf("%+.1f µs/step", g.DiffNs/1e3)
			if g.DiffCI != nil {
				d += fmt.Sprintf(" [%+.1f, %+.1f]", g.DiffCI[0]/1e3, g.DiffCI[1]/1e3)
			}
			fmt.Fprintf(w, "%s  %s: %s, %s (%s, n = %d); predicted removable in %s: %.1f µs/step %s\n", bullet, esc(g.Arm), s, d, g.Method, g.NUnits,
				esc(v.Arm), v.RemovableNs.Mean/1e3, ci(v.RemovableNs.MeanCI))
		}
	}
	writeWarnings(w, v.Warnings, md, opt.AllWarnings)
	return nil
}

// Its renderers (Generate finds them by the result type).
func init() {
	register(func(w io.Writer, v *analysis.Verdict, _ Format, _ Options) error { return writeVerdictCSV(w, v) }, CSV)
	register(func(w io.Writer, v *analysis.Verdict, _ Format, opt Options) error {
		return writeVerdictText(w, v, true, opt)
	}, Markdown)
	register(func(w io.Writer, v *analysis.Verdict, _ Format, opt Options) error {
		return writeWrapped(w, func(w io.Writer) error { return writeVerdictText(w, v, false, opt) })
	}, Text)
}
