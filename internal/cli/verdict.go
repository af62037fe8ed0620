package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/internal/analysis"
)

// ExitInconclusive is verdict's exit status when the CI straddles the
// minimum gain: neither a go (0) nor a no-go (1), and not a usage error (2).
const ExitInconclusive = 3

// VerdictOptions are the inputs of `nsysphase verdict`.
type VerdictOptions struct {
	AnalyzeOptions // segmentation and statistics flags, --format
	Phases         []string
	MinGainText    string
	MinGain        float64
}

// NewCmdVerdict builds `nsysphase verdict`; runF replaces the action in tests.
func NewCmdVerdict(runF func(*VerdictOptions) error) *cobra.Command {
	o := &VerdictOptions{}
	cmd := &cobra.Command{
		Use:   "verdict FILE... --phases A,B,C --min-gain 10%",
		Short: "Go / no-go for capturing phases as a CUDA graph, from the measured overhead and its CI",
		Long: `verdict decides whether removing the host overhead of the phases named by --phases is worth doing.
The removable overhead is saving_ns = launch_ns + cpu_other_ns of those phases per step (what a CUDA
graph replay could remove at most), as a share of step wall: a ratio of means over the kept steps,
with a block-bootstrap CI (the unit is the block or the profile, never the step). It is measured in
--baseline, else in the first arm that has the phases.

  go            the CI's lower bound is at least --min-gain
  no-go         the CI's upper bound is below --min-gain
  inconclusive  the CI straddles --min-gain (or there is none): record more blocks

The reason is one sentence. With several arms, the measured step-wall gain of each other arm over
that arm is shown too (the comparison analyze reports for the step). Blockers inside the region
(nsysphase boundary) are listed but do not change the verdict: they are work the change must do.

Exit status: 0 go, 1 no-go, 3 inconclusive (a warning on stderr), 2 unusable input or usage.`,
		Example: `  nsysphase verdict --phases action_apply,physics_step,scene_read_refresh,observation,reward --min-gain 10% testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz
  nsysphase verdict --phases termination,metrics --min-gain 0.5 --format json testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			o.Stdout, o.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			g, err := parseGain(o.MinGainText)
			if err != nil {
				return usageErr("--min-gain %q: %v", o.MinGainText, err)
			}
			o.MinGain = g
			if err := validateRegion(&o.AnalyzeOptions, o.Phases); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runVerdict(cmd, o)
		},
	}
	addRegionFlags(cmd, &o.AnalyzeOptions, &o.Phases)
	cmd.Flags().StringVar(&o.MinGainText, "min-gain", "", "smallest share of step wall worth removing: 10% or 0.10")
	_ = cmd.MarkFlagRequired("min-gain")
	cmd.Flags().StringVar(&o.Format, "format", "table", "output: table, json, csv (one row) or markdown")
	return cmd
}

// parseGain reads a share of step wall, "10%" or "0.10".
func parseGain(s string) (float64, error) {
	v, percent, err := parseFraction(s)
	if err != nil {
		return 0, errors.New("want a share such as 10% or 0.10")
	}
	if !percent && v >= 1 {
		return 0, fmt.Errorf("a share is below 1: write %g%% or %g", v, v/100)
	}
	if !(v > 0 && v < 1) {
		return 0, errors.New("want a share between 0 and 100%, exclusive")
	}
	return v, nil
}

func runVerdict(cmd *cobra.Command, o *VerdictOptions) error {
	files, frames, err := readRegion(cmd, &o.AnalyzeOptions)
	if err != nil {
		return err
	}
	v, err := analysis.BuildVerdict(files, frames, o.Phases, o.MinGain, o.statsConfig(), o.SkipSteps)
	if err != nil {
		return asExit(err)
	}
	warnMismatches(o.Stderr, v.Mismatches)
	switch o.Format {
	case "json":
		enc := json.NewEncoder(o.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(v)
	case "csv":
		err = writeVerdictCSV(o.Stdout, v)
	default:
		err = writeVerdictText(o.Stdout, v, o.Format == "markdown")
	}
	if err != nil {
		return err
	}
	switch v.Verdict {
	case analysis.VerdictNoGo:
		return &ExitError{Code: ExitGate, Err: silentErr{}}
	case analysis.VerdictInconclusive:
		return &ExitError{Code: ExitInconclusive, Err: fmt.Errorf("warning: verdict inconclusive (exit %d): %s", ExitInconclusive, v.Reason)}
	}
	return nil
}

func writeVerdictCSV(w io.Writer, v *analysis.Verdict) error {
	lo, hi := "", ""
	if v.Removable.CI != nil {
		lo, hi = strconv.FormatFloat(v.Removable.CI[0], 'g', -1, 64), strconv.FormatFloat(v.Removable.CI[1], 'g', -1, 64)
	}
	_, err := fmt.Fprintf(w, "verdict,arm,phases,min_gain,removable_share,ci_lo,ci_hi,method,capturable,reason\n%s,%s,%q,%s,%s,%s,%s,%s,%t,%q\n",
		v.Verdict, v.Arm, strings.Join(v.Phases, ","), strconv.FormatFloat(v.MinGain, 'g', -1, 64), strconv.FormatFloat(v.Removable.Value, 'g', -1, 64),
		lo, hi, v.Removable.Method, v.Capturable, v.Reason)
	return err
}

func writeVerdictText(w io.Writer, v *analysis.Verdict, md bool) error {
	bullet := "  "
	if md {
		fmt.Fprintf(w, "## nsysphase verdict\n\n")
		bullet = "- "
	}
	code := map[string]int{analysis.VerdictGo: ExitOK, analysis.VerdictNoGo: ExitGate, analysis.VerdictInconclusive: ExitInconclusive}[v.Verdict]
	fmt.Fprintf(w, "verdict: %s (exit %d)\n", strings.ToUpper(v.Verdict), code)
	if md {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%s.\n", v.Reason)
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
		v.RemovableNs.Mean/1e3, ci(v.RemovableNs.MeanCI), v.StepWallNs.Mean/1e3, ci(v.StepWallNs.MeanCI), v.Arm, v.StepWallNs.N, v.Removable.Method)
	fmt.Fprintf(w, "%sdefinition: %s\n", bullet, v.Definition)
	if v.Capturable {
		fmt.Fprintf(w, "%scapture: no blocker inside the region in %s\n", bullet, v.Arm)
	} else {
		var kinds []string
		for _, b := range v.Blockers {
			kinds = append(kinds, fmt.Sprintf("%s %s in %s (%.3g/step)", b.Kind, b.API, b.Phase, b.PerStep))
		}
		fmt.Fprintf(w, "%scapture: not capturable as it stands, %d blockers (see nsysphase boundary): %s\n", bullet, len(v.Blockers), strings.Join(kinds, "; "))
	}
	if len(v.ArmGains) > 0 {
		fmt.Fprintf(w, "%smeasured gains over %s (step wall_ns mean, 1 − ratio):\n", bullet, v.Arm)
		for _, g := range v.ArmGains {
			s := "no ratio"
			if g.Gain != nil {
				s = fmt.Sprintf("%+.1f%%", 100**g.Gain)
			}
			if g.GainCI != nil {
				s += fmt.Sprintf(" [%+.1f%%, %+.1f%%]", 100*g.GainCI[0], 100*g.GainCI[1])
			}
			fmt.Fprintf(w, "%s  %s: %s (%s, n = %d)\n", bullet, g.Arm, s, g.Method, g.NUnits)
		}
	}
	writeWarnings(w, v.Warnings)
	return nil
}
