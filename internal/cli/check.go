package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/internal/analysis"
)

// CheckOptions are the inputs of `nsysphase check`.
type CheckOptions struct {
	AnalyzeOptions
	Phase         string
	Metric        string
	Stat          string
	MaxRegression string
	limit         float64
}

// NewCmdCheck builds `nsysphase check`, the CI gate.
func NewCmdCheck(runF func(*CheckOptions) error) *cobra.Command {
	o := &CheckOptions{}
	cmd := &cobra.Command{
		Use:   "check FILE...",
		Short: "CI gate: exit 1 when an arm is proven slower than the baseline by more than a limit",
		Long: `check compares every arm with the baseline on one phase, metric and statistic and fails (exit 1)
only for a proven regression: the arm's ratio CI (arm / baseline) lies entirely above 1 + limit.
A CI that straddles the limit is not proof and passes, with the reason printed. Exit 2 means
unusable input or usage. --format markdown prints a table for pull-request comments.`,
		Example: `  nsysphase check testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz --baseline eager --phase collector_step --max-regression 5%
  nsysphase check --arm-key training.cuda_process_sharing runs/*.sqlite.xz --baseline null --phase collector_step --metric wall_ns --stat median --format markdown`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			o.Stdout, o.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if o.Format == "" {
				o.Format = "table"
			}
			if o.Format != "table" && o.Format != "markdown" && o.Format != "json" {
				return usageErr("--format %q: want table, markdown or json", o.Format)
			}
			if err := o.AnalyzeOptions.validate(); err != nil {
				return err
			}
			if o.Phase == "" {
				return usageErr("--phase is required (the step name or one of its phases)")
			}
			lim, err := parsePercent(o.MaxRegression)
			if err != nil {
				return usageErr("--max-regression %q: %v", o.MaxRegression, err)
			}
			o.limit = lim
			switch o.Stat {
			case "mean", "median", "p90", "p99":
			default:
				return usageErr("--stat %q: want mean, median, p90 or p99", o.Stat)
			}
			if runF != nil {
				return runF(o)
			}
			return runCheck(cmd, o)
		},
	}
	addSegmentFlags(cmd, &o.AnalyzeOptions)
	addStatsFlags(cmd, &o.AnalyzeOptions)
	cmd.Flags().StringVar(&o.Phase, "phase", "", "phase (or step) to gate on")
	cmd.Flags().StringVar(&o.Metric, "metric", "wall_ns", "metric to gate on")
	cmd.Flags().StringVar(&o.Stat, "stat", "mean", "statistic: mean, median, p90 or p99")
	cmd.Flags().StringVar(&o.MaxRegression, "max-regression", "5%", "largest tolerated slowdown of arm over baseline (e.g. 5% or 0.05)")
	cmd.Flags().StringVar(&o.Format, "format", "table", "output: table, markdown or json")
	return cmd
}

// parseFraction reads "5%" or "0.05" as 0.05; percent reports which form
// was written. Callers check the range they accept.
func parseFraction(s string) (v float64, percent bool, err error) {
	s = strings.TrimSpace(s)
	percent = strings.HasSuffix(s, "%")
	v, err = strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, percent, fmt.Errorf("want a percentage like 5%% or a fraction like 0.05")
	}
	if percent {
		v /= 100
	}
	return v, percent, nil
}

// parsePercent reads a regression limit, "5%" or "0.05".
func parsePercent(s string) (float64, error) {
	v, _, err := parseFraction(s)
	if err != nil {
		return 0, err
	}
	if v < 0 || v >= 10 {
		return 0, fmt.Errorf("want a limit between 0%% and 1000%%")
	}
	return v, nil
}

// gateRow is one arm's outcome.
type gateRow struct {
	Arm     string      `json:"arm"`
	Ratio   *float64    `json:"ratio"`
	RatioCI *[2]float64 `json:"ratio_ci"`
	Method  string      `json:"method"`
	NUnits  int         `json:"n_units"`
	Outcome string      `json:"outcome"` // "regression", "pass"
	Reason  string      `json:"reason"`
}

func runCheck(cmd *cobra.Command, o *CheckOptions) error {
	o.AnalyzeOptions.Quantiles = o.Stat == "p90" || o.Stat == "p99"
	doc, err := buildDoc(cmd, &o.AnalyzeOptions, nil)
	if err != nil {
		return err
	}
	rows, err := gate(doc, o)
	if err != nil {
		return err
	}
	failed := false
	for _, r := range rows {
		if r.Outcome == "regression" {
			failed = true
		}
	}
	writeGate(o.Stdout, o, doc, rows, failed)
	if failed {
		return &ExitError{Code: ExitGate, Err: silentErr{}}
	}
	return nil
}

func gate(doc *analysis.Doc, o *CheckOptions) ([]gateRow, error) {
	known := false
	for _, p := range doc.Phases {
		known = known || p == o.Phase
	}
	if !known {
		return nil, usageErr("--phase %q: not a phase of these inputs (phases: %s)", o.Phase, strings.Join(doc.Phases, ", "))
	}
	var rows []gateRow
	for _, c := range doc.Comparisons {
		if c.Phase != o.Phase || c.Metric != o.Metric || c.Stat != o.Stat {
			continue
		}
		r := gateRow{Arm: c.Arm, Ratio: c.Ratio, RatioCI: c.RatioCI, Method: c.Method, NUnits: c.NUnits, Outcome: "pass"}
		bound := 1 + o.limit
		switch {
		case c.RatioCI == nil:
			r.Reason = fmt.Sprintf("no between-unit CI (%s, n = %d): a regression cannot be proven; record more blocks or runs", c.Method, c.NUnits)
		case c.RatioCI[0] > bound:
			r.Outcome = "regression"
			r.Reason = fmt.Sprintf("the whole CI [%.3f, %.3f] lies above %.3f: %s is proven slower than %s by more than %s", c.RatioCI[0], c.RatioCI[1], bound, c.Arm, c.Baseline, o.MaxRegression)
		case c.RatioCI[1] > bound:
			r.Reason = fmt.Sprintf("the CI [%.3f, %.3f] reaches above %.3f but also below it: not proven", c.RatioCI[0], c.RatioCI[1], bound)
		default:
			r.Reason = fmt.Sprintf("the CI [%.3f, %.3f] lies below %.3f", c.RatioCI[0], c.RatioCI[1], bound)
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, usageErr("nothing to compare for phase %q, metric %q, stat %q: need two arms (arms: %s) and a known metric", o.Phase, o.Metric, o.Stat, strings.Join(doc.Arms, ", "))
	}
	return rows, nil
}

func writeGate(w io.Writer, o *CheckOptions, doc *analysis.Doc, rows []gateRow, failed bool) {
	status := "PASS"
	if failed {
		status = "FAIL"
	}
	head := fmt.Sprintf("%s: %s %s of %s, each arm vs %s, limit +%s (%g%% CIs, B = %d, seed %d)",
		status, o.Stat, o.Metric, o.Phase, doc.Baseline, strings.TrimSuffix(o.MaxRegression, "%")+"%", 100*o.Confidence, o.Resamples, o.Seed)
	switch o.Format {
	case "json":
		fmt.Fprintf(w, "{\"status\": %q, \"phase\": %q, \"metric\": %q, \"stat\": %q, \"baseline\": %q, \"limit\": %g, \"arms\": [", status, o.Phase, o.Metric, o.Stat, doc.Baseline, o.limit)
		for i, r := range rows {
			if i > 0 {
				fmt.Fprint(w, ", ")
			}
			fmt.Fprintf(w, "{\"arm\": %q, \"outcome\": %q, \"ratio\": %s, \"ratio_ci\": %s, \"method\": %q, \"n_units\": %d, \"reason\": %q}",
				r.Arm, r.Outcome, jsonFloat(r.Ratio), jsonCI(r.RatioCI), r.Method, r.NUnits, r.Reason)
		}
		fmt.Fprintln(w, "]}")
	case "markdown":
		fmt.Fprintf(w, "**nsysphase check — %s**\n\n", head)
		fmt.Fprintln(w, "| arm | ratio | CI | method | n | outcome | why |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
		for _, r := range rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %s | %s |\n", r.Arm, fmtRatio(r.Ratio), fmtCI(r.RatioCI), r.Method, r.NUnits, r.Outcome, r.Reason)
		}
	default:
		fmt.Fprintln(w, head)
		for _, r := range rows {
			fmt.Fprintf(w, "  %s: ratio %s %s, %s, n = %d: %s — %s\n", r.Arm, fmtRatio(r.Ratio), fmtCI(r.RatioCI), r.Method, r.NUnits, r.Outcome, r.Reason)
		}
	}
}

func fmtRatio(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *p)
}

func fmtCI(c *[2]float64) string {
	if c == nil {
		return "(no CI)"
	}
	return fmt.Sprintf("[%.3f, %.3f]", c[0], c[1])
}

func jsonFloat(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

func jsonCI(c *[2]float64) string {
	if c == nil {
		return "null"
	}
	return "[" + strconv.FormatFloat(c[0], 'g', -1, 64) + ", " + strconv.FormatFloat(c[1], 'g', -1, 64) + "]"
}
