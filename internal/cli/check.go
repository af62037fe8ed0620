package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/dataset"
	"github.com/nsysphase/nsysphase/stats"
)

// CheckOptions are the flags and arguments of `nsysphase check`.
type CheckOptions struct {
	AnalysisFlags
	Phases        []string // --phases (alias --phase): the phases (or step) to gate on
	Metric        string
	Stat          string
	MaxRegression string
	Limit         float64 // parsed from MaxRegression: 0.05 for "5%"
	Format        string
	History       []string // --history: dataset directories (globs) of earlier baseline runs
	WithinRun     bool     // --within-run: stationary bootstrap over the steps of single runs
	From          bool     // --from: the arguments are datasets written by analyze --out
	OutputFlags
}

// NewCmdCheck builds `nsysphase check`, the CI gate.
func NewCmdCheck(runF func(*CheckOptions) error) *cobra.Command {
	o := &CheckOptions{}
	cmd := &cobra.Command{
		Use:   "check [--history DIR]... FILE...",
		Short: "CI gate: exit 1 when an arm is proven slower than the baseline by more than a limit",
		Long: `check compares every arm with the baseline on one phase, metric and statistic and fails (exit 1)
only for a proven regression: the arm's ratio CI (arm / baseline) lies entirely above 1 + limit.
A CI that straddles the limit is not proof and passes, with the reason printed. Only a
between-unit CI (several blocks or files per arm) can prove anything: without one, or with a
within-run CI (one block or file per arm, which leaves out run-to-run variance), the outcome is
"inconclusive" and the gate passes, as analyze prints "no CI".

--history DIR (repeatable, globs quoted) compares the FILE(s), the candidate run(s), with the datasets
written by analyze --out in earlier runs of the baseline (one run each, restored from an artifact store):
this works with one profile per commit. Each run (one export; its blocks pooled) gives one number (its
median by default, or the mean, p90 or p99 of the phase with --stat: the median, since a run's rare
slow steps move its mean from run to run and hide a regression), and the interval of candidate / history is the t prediction interval on the log scale with the
history's run-to-run spread (n − 1 degrees of freedom; docs/statistics.md §11). At least 3 history runs
give an interval; the false-alarm rate (at most half of 1 − confidence) is stated for 5 or more. A
candidate arm is compared with the history of the same arm, or of the history's only arm, or of
--baseline when given.

--within-run compares two single runs (one profile or block per arm) by a stationary bootstrap over
their steps (blocks twice the Politis–White length and no shorter than the autocorrelation's upper
bound allows, widened for what they miss): it keeps the steps' autocorrelation but leaves out
run-to-run variance, so it says whether these runs differ, not whether the code does. Runs shorter
than 6 blocks get no interval (inconclusive, passes).
Off by default; every line it produces says "within-run", and with it the gate can fail.

--max-regression is a percentage (5%) or a fraction (0.05); a bare number of 1 or more ("5") is
refused, since it could mean 5% or 500%. The limit printed is the limit used.

Exit status: 0 pass, 1 a proven regression, 2 unusable input or usage (a bad limit included).
--format markdown prints a table for pull-request comments.`,
		Example: `  nsysphase check testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz --baseline eager --phase collector_step --max-regression 5%
  nsysphase check testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz --baseline graph --phase collector_step --max-regression 0.05   # exit 1
  nsysphase check --arm-key training.cuda_process_sharing 'testdata/nsys-2025.3-h200/sharing_*.sqlite.xz' --baseline null --phase collector_step --stat median --format markdown
  nsysphase analyze --quiet --no-stats --out history/run1 testdata/nsys-2025.3-h200/sharing_null_1.sqlite.xz   # earlier runs of the baseline
  nsysphase analyze --quiet --no-stats --out history/run2 testdata/nsys-2025.3-h200/sharing_null_2.sqlite.xz
  nsysphase analyze --quiet --no-stats --out history/run3 testdata/nsys-2025.3-h200/sharing_mps_1.sqlite.xz
  nsysphase check --history 'history/*' testdata/nsys-2025.3-h200/sharing_mps_2.sqlite.xz --phase collector_step --format markdown
  nsysphase check --within-run --step collector_step --arm-pattern '^none(x)(y)$' --arm mps=testdata/nsys-2025.3-h200/sharing_mps_1.sqlite.xz --arm null=testdata/nsys-2025.3-h200/sharing_null_1.sqlite.xz --baseline mps --phase collector_step   # exit 1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			f, err := checkFormat(o.Format, checkFormats)
			if err != nil {
				return err
			}
			o.Format = f
			o.Datasets = o.From // as analyze --from
			if err := o.AnalysisFlags.validate(); err != nil {
				return err
			}
			if err := checkPhasesGiven(o.Phases, "the step name or some of its phases, comma-separated"); err != nil {
				return err
			}
			lim, err := parseShare(o.MaxRegression)
			if err == nil && lim >= 10 {
				err = fmt.Errorf("want a limit below 1000%%")
			}
			if err != nil {
				return usageErr("--max-regression %q: %v", o.MaxRegression, err)
			}
			o.Limit = lim
			if o.Stat == "" {
				o.Stat = "mean"
				if len(o.History) > 0 {
					o.Stat = stats.DefaultHistoryStat
				}
			}
			switch o.Stat {
			case "mean", "median", "p90", "p99":
			default:
				return usageErr("--stat %q: want mean, median, p90 or p99", o.Stat)
			}
			if err := o.OutputFlags.check(append(o.inputPaths(), expandDirs(o.History)...)); err != nil {
				return err
			}
			if err := (&AnalyzeOptions{From: o.From}).validateFrom(cmd); err != nil {
				return err
			}
			if o.WithinRun && len(o.History) > 0 {
				return usageErr("--within-run and --history: pick one (--history compares with earlier runs, --within-run the steps of one run per arm)")
			}
			if runF != nil {
				return runF(o)
			}
			return runCheck(cmd, o)
		},
	}
	addSegmentFlags(cmd, &o.AnalysisFlags)
	addStatsFlags(cmd, &o.AnalysisFlags, false)
	cmd.Flags().StringSliceVar(&o.Phases, "phases", nil, "phases (or the step) to gate on, comma-separated; --phase is the same flag")
	aliasFlag(cmd, "phase", "phases")
	cmd.Flags().StringVar(&o.Metric, "metric", "wall_ns", "metric to gate on")
	cmd.Flags().StringVar(&o.Stat, "stat", "", "statistic: mean, median, p90 or p99 (default mean; median with --history, where a run's rare slow steps would hide a regression)")
	cmd.Flags().StringVar(&o.MaxRegression, "max-regression", "5%", "largest tolerated slowdown of arm over baseline: a percentage (5%) or a fraction (0.05); a bare number of 1 or more is refused")
	addFormatFlag(cmd, &o.Format, checkFormats, "markdown: a table for pull-request comments")
	addOutputFlags(cmd, &o.OutputFlags)
	cmd.Flags().BoolVar(&o.From, "from", false, "the arguments are dataset directories written by analyze --out, not exports")
	cmd.Flags().BoolVar(&o.WithinRun, "within-run", false, "compare single runs by a stationary bootstrap over steps (leaves out run-to-run variance; labelled within-run)")
	cmd.Flags().StringArrayVar(&o.History, "history", nil, "dataset directory (analyze --out) of an earlier baseline run; repeatable, globs quoted")
	return cmd
}

// checkFormats are check's --format choices.
var checkFormats = []string{"table", "json", "markdown"}

// knownPhases refuses a --phases entry that is not a phase of doc.
func knownPhases(doc *analysis.Doc, phs []string) error {
	if err := analysis.KnownPhases(doc, phs); err != nil {
		return usageErr("%v", err)
	}
	return nil
}

// aliasFlag makes --alias another spelling of --name.
func aliasFlag(cmd *cobra.Command, alias, name string) {
	prev := cmd.Flags().GetNormalizeFunc()
	cmd.Flags().SetNormalizeFunc(func(f *pflag.FlagSet, n string) pflag.NormalizedName {
		if n == alias {
			n = name
		}
		return prev(f, n)
	})
}

// parseShare reads a share written as a percentage ("5%") or a fraction
// ("0.05"), both 0.05. A bare number of 1 or more is refused: "5" could mean
// 5% or 500%, and a CI gate must not guess. Callers check the upper bound.
func parseShare(s string) (float64, error) {
	s = strings.TrimSpace(s)
	percent := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("want a percentage like 5% or a fraction like 0.05")
	}
	if !percent && v >= 1 {
		return 0, fmt.Errorf("a bare number of 1 or more is ambiguous: write %g%% (or %g as a fraction)", v, v/100)
	}
	if percent {
		v /= 100
	}
	if v < 0 {
		return 0, errors.New("want a share of 0 or more")
	}
	return v, nil
}

func runCheck(cmd *cobra.Command, o *CheckOptions) error {
	if len(o.History) > 0 {
		return runCheckHistory(cmd, o)
	}
	if o.WithinRun {
		return runCheckWithinRun(cmd, o)
	}
	a := &AnalyzeOptions{AnalysisFlags: o.AnalysisFlags, From: o.From}
	a.Quiet, a.NoProgress = o.Quiet, o.NoProgress
	a.Quantiles = o.Stat == "p90" || o.Stat == "p99"
	doc, err := buildDoc(cmd, a, nil)
	if err != nil {
		return err
	}
	g, err := analysis.ArmsGate(doc, o.spec())
	if err != nil {
		return asExit(err)
	}
	if err := o.write(cmd, o.Format, g, o.reportOptions()); err != nil {
		return err
	}
	return gateExit(g)
}

// spec is what the gate judges.
func (o *CheckOptions) spec() analysis.GateSpec {
	return analysis.GateSpec{Phases: o.Phases, Metric: o.Metric, Stat: o.Stat, Limit: o.Limit, Confidence: o.Confidence, Resamples: o.Resamples, Seed: o.Seed}
}

func gateExit(g *analysis.Gate) error {
	if g.Status == analysis.GateFail {
		return &ExitError{Code: ExitGate, Err: silentErr{}}
	}
	return nil
}

// expandDirs expands the glob patterns of dataset directories, each sorted;
// a pattern that matches nothing is kept for the loader to name. As in a
// shell, a wildcard does not match a leading dot: `--history 'h/*' --out
// h/new` would otherwise pick up h/.new.tmp-PID-…, the staging directory of
// its own output (and any other run's, half written).
func expandDirs(patterns []string) []string {
	var dirs []string
	for _, a := range patterns {
		matches, err := filepath.Glob(a)
		if err != nil || len(matches) == 0 {
			dirs = append(dirs, a)
			continue
		}
		if !strings.HasPrefix(filepath.Base(a), ".") {
			matches = slices.DeleteFunc(matches, func(m string) bool { return strings.HasPrefix(filepath.Base(m), ".") })
			if len(matches) == 0 {
				dirs = append(dirs, a)
				continue
			}
		}
		slices.Sort(matches)
		dirs = append(dirs, matches...)
	}
	return dirs
}

// loadHistory loads --history's datasets with the candidate's options, cand
// (Doc.Options), whose warm-up rule is the one its analysis applied (--skip-steps, the rules file's
// skip_steps, or, with --from, the candidate datasets' own), so that both
// sides leave out the same steps. A history that finds no dataset (a quoted
// glob that matches nothing, a directory not there yet: the first pull
// requests of a CI workflow) is empty, not an error: every comparison with
// it is inconclusive and passes.
func loadHistory(cmd *cobra.Command, patterns []string, cand analysis.Options) (*analysis.HistoryRuns, error) {
	dirs, looked := historyDirs(patterns)
	if len(dirs) == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "nsysphase: warning: history: %s found no dataset: no run to compare with, the gate passes as inconclusive\n", strings.Join(looked, ", "))
		return analysis.NoHistory(looked), nil
	}
	h, warns, err := dataset.LoadHistory(cmd.Context(), dirs, cand, Version())
	if err != nil {
		return nil, asExit(err)
	}
	for _, w := range warns {
		fmt.Fprintf(cmd.ErrOrStderr(), "nsysphase: warning: history: %s\n", w.Message)
	}
	return h, nil
}

// historyDirs expands --history's patterns (each sorted); looked are the
// patterns that found nothing: a glob without a match or a missing path.
func historyDirs(patterns []string) (dirs, looked []string) {
	for _, p := range expandDirs(patterns) {
		if _, err := os.Stat(p); err != nil && errors.Is(err, fs.ErrNotExist) {
			looked = append(looked, p)
			continue
		}
		dirs = append(dirs, p)
	}
	return dirs, looked
}

// checkHistoryArgs answers `--history d1 d2 FILE`, where d2 lands among the
// candidates: a directory there is a history run meant for --history, or a
// dataset that needs --from.
func checkHistoryArgs(files []string, from bool) error {
	if from {
		return nil
	}
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.IsDir() {
			return usageErr("%s is a directory among the candidate exports: --history takes one directory a flag (--history d1 --history d2, or a quoted glob --history 'history/*'); a candidate dataset needs --from", f)
		}
	}
	return nil
}

// runCheckHistory gates the candidate FILE(s) against the history runs.
func runCheckHistory(cmd *cobra.Command, o *CheckOptions) error {
	if err := checkHistoryArgs(o.Files, o.From); err != nil {
		return err
	}
	a := &AnalyzeOptions{AnalysisFlags: o.AnalysisFlags, From: o.From}
	a.Quiet, a.NoProgress, a.NoStats = o.Quiet, o.NoProgress, true
	a.Baseline = "" // names a history arm here, not a candidate arm
	doc, err := buildDoc(cmd, a, nil)
	if err != nil {
		return err
	}
	if err := knownPhases(doc, o.Phases); err != nil {
		return err
	}
	h, err := loadHistory(cmd, o.History, doc.Options())
	if err != nil {
		return err
	}
	rows, err := doc.CompareWithHistory(h, o.Phases, o.Metric, o.Stat, o.Baseline, o.Confidence)
	if err != nil {
		return asExit(err)
	}
	g := analysis.HistoryGate(rows, h, o.spec())
	if err := o.write(cmd, o.Format, g, o.reportOptions()); err != nil {
		return err
	}
	return gateExit(g)
}

// runCheckWithinRun gates each arm against the baseline with the
// stationary bootstrap over the steps of their runs (--within-run).
func runCheckWithinRun(cmd *cobra.Command, o *CheckOptions) error {
	a := &AnalyzeOptions{AnalysisFlags: o.AnalysisFlags, From: o.From}
	a.Quiet, a.NoProgress, a.NoStats = o.Quiet, o.NoProgress, true
	doc, err := buildDoc(cmd, a, nil)
	if err != nil {
		return err
	}
	if err := knownPhases(doc, o.Phases); err != nil {
		return err
	}
	if len(doc.Arms) < 2 {
		return usageErr("--within-run compares an arm with the baseline, and these inputs hold one arm (%s): pass one export per arm with --arm NAME=FILE", strings.Join(doc.Arms, ", "))
	}
	g, err := analysis.WithinRunGate(doc, o.spec())
	if err != nil {
		return asExit(err)
	}
	if err := o.write(cmd, o.Format, g, o.reportOptions()); err != nil {
		return err
	}
	return gateExit(g)
}
