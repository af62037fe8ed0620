package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/internal/analysis"
)

// VerdictOptions are the inputs of `nsysphase verdict`.
type VerdictOptions struct {
	AnalysisFlags
	Phases      []string
	MinGainText string
	MinGain     float64 // parsed from MinGainText
	Format      string
	OutputFlags
}

// NewCmdVerdict builds `nsysphase verdict`; runF replaces the action in tests.
func NewCmdVerdict(runF func(*VerdictOptions) error) *cobra.Command {
	o := &VerdictOptions{}
	cmd := &cobra.Command{
		Use:   "verdict FILE... --phases A,B,C --min-gain 10%",
		Short: "Go / no-go for capturing phases as a CUDA graph, from the measured overhead and its CI",
		Long: `verdict decides whether capturing the phases named by --phases as a CUDA graph is worth doing.
It decides on the bounded saving (nsysphase boundary): per step, the host time (launch, cpu_other,
memcpy_api, other_api) of the region's phases that launch GPU work and hold no capture blocker, at most
step wall − the process's GPU time in the step (a captured step still waits for its GPU work), less the
replay's own cudaGraphLaunch (the mean of the inputs' own calls, else 20 µs). Phases that launch no
kernel keep their host time; blocked phases are listed with what they would add once fixed. The share
of step wall is a ratio of means over the kept steps, with a block-bootstrap CI (the unit is the block
or the profile, never the step). It is measured in --baseline, else in the first arm that has the
phases.

  go            the CI's lower bound is at least --min-gain
  no-go         the CI's upper bound is below --min-gain, or nothing is removable in any step
  inconclusive  the CI straddles --min-gain (or there is none): record more blocks

The reason is one sentence. With several arms, the measured step-wall gain and difference of each
other arm over that arm are shown too (the comparison analyze reports for the step): when an arm is
the captured version of the region, its measured saving is what the bound predicts. Blockers inside
the region (nsysphase boundary) are listed but do not change the verdict: they are work the change must do.

Exit status: 0 go, 1 no-go, 3 inconclusive (a warning on stderr), 2 unusable input or usage.`,
		Example: `  nsysphase verdict --phases action_apply,physics_step,scene_read_refresh,observation,reward --min-gain 10% testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz
  nsysphase verdict --phases termination,metrics --min-gain 0.5 --format json testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz   # exit 1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			g, err := parseGain(o.MinGainText)
			if err != nil {
				return usageErr("--min-gain %q: %v", o.MinGainText, err)
			}
			o.MinGain = g
			if err := validateRegion(&o.AnalysisFlags, &o.Format, verdictFormats, o.Phases); err != nil {
				return err
			}
			if err := o.OutputFlags.check(o.inputPaths()); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runVerdict(cmd, o)
		},
	}
	addRegionFlags(cmd, &o.AnalysisFlags, &o.Phases)
	cmd.Flags().StringVar(&o.MinGainText, "min-gain", "10%", "smallest share of step wall worth removing: a percentage (10%) or a fraction (0.10)")
	addFormatFlag(cmd, &o.Format, verdictFormats, "csv: one row")
	addOutputFlags(cmd, &o.OutputFlags)
	return cmd
}

// verdictFormats are verdict's --format choices.
var verdictFormats = []string{"table", "json", "csv", "markdown"}

// parseGain reads a share of step wall, "10%" or "0.10".
func parseGain(s string) (float64, error) {
	v, err := parseShare(s)
	if err != nil {
		return 0, err
	}
	if !(v > 0 && v < 1) {
		return 0, errors.New("want a share between 0 and 100%, exclusive")
	}
	return v, nil
}

func runVerdict(cmd *cobra.Command, o *VerdictOptions) error {
	files, frames, err := readRegion(cmd, &o.AnalysisFlags, &o.CommonFlags)
	if err != nil {
		return err
	}
	v, err := analysis.BuildVerdict(files, frames, o.Phases, o.MinGain, o.Options)
	if err != nil {
		return asExit(err)
	}
	warnMismatches(cmd.ErrOrStderr(), v.Mismatches)
	if err := o.write(cmd, o.Format, v, o.reportOptions()); err != nil {
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
