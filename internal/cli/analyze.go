package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// AnalyzeOptions are the inputs of `nsysphase analyze`.
type AnalyzeOptions struct {
	TableOutput
	Files      []string
	From       bool // Files are dataset directories written by --out
	Step       string
	Depth      int
	ArmPattern string
	SkipSteps  int
	Config     string
	Arms       []string
	ArmKey     string
	Manifest   string
	Jobs       int
	Baseline   string
	Confidence float64
	Resamples  int
	Seed       uint64
	Quantiles  bool
	NoStats    bool

	Stdout io.Writer
	Stderr io.Writer
}

// addSegmentFlags registers the flags shared by every command that segments exports.
func addSegmentFlags(cmd *cobra.Command, o *AnalyzeOptions) {
	f := cmd.Flags()
	f.StringVar(&o.Step, "step", "", "step range name (default: the name that repeats most inside arm blocks, or at top level)")
	f.IntVar(&o.Depth, "depth", 1, "phase depth below the step (1: direct children)")
	f.StringVar(&o.ArmPattern, "arm-pattern", phases.DefaultArmPattern, "regexp of arm block ranges; group 1 = arm, group 2 = block")
	f.IntVar(&o.SkipSteps, "skip-steps", 1, "warm-up: steps at the start of each block left out of the statistics (kept in phase_instances, flagged)")
	f.StringVar(&o.Config, "config", "", "rules file (TOML or YAML): step, phases, renames, process/thread selection")
	f.StringArrayVar(&o.Arms, "arm", nil, "NAME=GLOB: files matching GLOB form arm NAME, one block each (repeatable)")
	f.StringVar(&o.ArmKey, "arm-key", "", "dotted key of the run manifest beside each export that names its arm, e.g. training.cuda_process_sharing")
	f.StringVar(&o.Manifest, "manifest", "", "run manifest for a single input (default: NAME.manifest.json beside it)")
	f.IntVarP(&o.Jobs, "jobs", "j", 0, "files read in parallel (default: number of CPUs)")
}

// addStatsFlags registers the statistics flags.
func addStatsFlags(cmd *cobra.Command, o *AnalyzeOptions) {
	f := cmd.Flags()
	f.StringVar(&o.Baseline, "baseline", "", "baseline arm of comparisons (default: the arm of the earliest block)")
	f.Float64Var(&o.Confidence, "confidence", 0.95, "two-sided confidence level")
	f.IntVar(&o.Resamples, "resamples", 9999, "bootstrap resamples B (at least 1999)")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed: output is byte-identical for a seed")
	f.BoolVar(&o.Quantiles, "quantiles", false, "also p90/p99 CIs of wall_ns where the data allow them")
}

// NewCmdAnalyze builds `nsysphase analyze`; runF replaces the action in tests.
func NewCmdAnalyze(runF func(*AnalyzeOptions) error) *cobra.Command {
	o := &AnalyzeOptions{}
	cmd := &cobra.Command{
		Use:   "analyze FILE...",
		Short: "Per-phase breakdown per arm with block-bootstrap confidence intervals",
		Long: `analyze segments each export into arm blocks, steps and phases (NVTX ranges), measures every
step and phase instance (wall split into cpu_other, launch, sync, memcpy_api, alloc and other_api;
GPU work by correlation; copies; queueing; overlap with other processes; other-thread work), and
summarises each phase per arm with confidence intervals whose unit is the block or the profile,
never the step. Each arm is compared with the baseline, and mean wall differences are decomposed
into their six exclusive parts.

--out DIR writes phase_instances, phase_summary, comparisons, decomposition and provenance as
Parquet (--partition: a Hive-partitioned dataset by arm and file; --format arrow: Arrow IPC).
--from DIR... analyses such datasets instead of exports (one per CI job, say), with the same
statistics and the same JSON as a direct analysis of the exports they came from.
--format html writes one self-contained report page (inline SVG plots, no scripts).

Inputs are read -j at a time; the output order is the input order (globs sorted) whatever -j.
A progress bar shows on stderr only on an interactive terminal when CI is unset.

Exit status: 0 success, 2 unusable input or usage.`,
		Example: `  nsysphase analyze testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz
  nsysphase analyze --format json run.sqlite > analysis.json
  nsysphase analyze --format html -o report.html testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz
  nsysphase analyze --quiet --partition --out results/job1 run1.sqlite.xz
  nsysphase analyze --from results/job1 results/job2 --format markdown
  nsysphase analyze --arm-key training.cuda_process_sharing sharing_*.sqlite.xz --out results/
  nsysphase analyze --arm mps='runs/mps_*.sqlite' --arm null='runs/null_*.sqlite' --format markdown`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			o.Stdout, o.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if err := o.validate(); err != nil {
				return err
			}
			if err := o.TableOutput.validate("html"); err != nil {
				return err
			}
			if err := o.validateFrom(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runAnalyze(cmd, o)
		},
	}
	addSegmentFlags(cmd, o)
	addStatsFlags(cmd, o)
	addTableOutputFlags(cmd, &o.TableOutput, "phase_summary", "html")
	cmd.Flags().BoolVar(&o.From, "from", false, "the arguments are dataset directories written by --out (flat or --partition), not exports")
	cmd.Flags().BoolVar(&o.NoStats, "no-stats", false, "point values only, no confidence intervals (faster)")
	return cmd
}

func (o *AnalyzeOptions) validate() error {
	if len(o.Files) == 0 && len(o.Arms) == 0 {
		if o.From {
			return usageErr("--from: pass dataset directories written by nsysphase analyze --out")
		}
		return usageErr("no input: pass export files (or --arm NAME=GLOB)")
	}
	if o.Resamples < 1999 {
		return usageErr("--resamples %d: at least 1999 are needed for stable 95%% interval endpoints", o.Resamples)
	}
	if !(o.Confidence > 0.5 && o.Confidence < 1) {
		return usageErr("--confidence %v: want a level between 0.5 and 1, e.g. 0.95", o.Confidence)
	}
	if o.Depth < 1 {
		return usageErr("--depth %d: want ≥ 1", o.Depth)
	}
	if o.SkipSteps < 0 {
		return usageErr("--skip-steps %d: want ≥ 0", o.SkipSteps)
	}
	return nil
}

// config turns flags into the analysis configuration.
func (o *AnalyzeOptions) config() (analysis.Config, error) {
	pat, err := regexp.Compile(o.ArmPattern)
	if err != nil {
		return analysis.Config{}, usageErr("--arm-pattern: %v", err)
	}
	seg := phases.Options{ArmPattern: pat, Step: o.Step, Depth: o.Depth, SkipSteps: o.SkipSteps}
	if o.Config != "" {
		rules, err := phases.LoadRules(o.Config)
		if err != nil {
			return analysis.Config{}, &ExitError{Code: ExitInput, Err: fmt.Errorf("%s: %w", o.Config, err)}
		}
		seg.Rules = rules
	}
	var arms []analysis.FileArm
	for _, a := range o.Arms {
		name, glob, ok := strings.Cut(a, "=")
		if !ok || name == "" || glob == "" {
			return analysis.Config{}, usageErr("--arm %q: want NAME=GLOB", a)
		}
		arms = append(arms, analysis.FileArm{Name: name, Glob: glob})
	}
	return analysis.Config{Files: o.Files, FileArms: arms, ArmKey: o.ArmKey, Manifest: o.Manifest, Segment: seg, Jobs: o.Jobs}, nil
}

func (o *AnalyzeOptions) statsConfig() analysis.StatsConfig {
	return analysis.StatsConfig{Confidence: o.Confidence, Resamples: o.Resamples, Seed: o.Seed, Baseline: o.Baseline, Quantiles: o.Quantiles, Off: o.NoStats}
}

// buildDoc reads the inputs and computes the analysis.
// buildDoc reads the inputs and builds the analysis. merged, when not nil,
// is called once the instances are merged, before the statistics (see
// analysis.BuildThen); not for --from.
func buildDoc(cmd *cobra.Command, o *AnalyzeOptions, merged func(*analysis.Doc)) (doc *analysis.Doc, err error) {
	if o.From {
		return buildDocFrom(cmd, o)
	}
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	var pr *progress
	if progressWanted(o.Stderr, o.Quiet, o.NoProgress) {
		if inputs, _, err := analysis.ExpandInputs(cfg.Files, cfg.FileArms); err == nil {
			pr = newProgress(cmd.Context(), o.Stderr, true, len(inputs))
			cfg.Open = pr.opener()
		}
	}
	defer func() { pr.finish(err == nil) }()
	tuneMemory(cfg)
	files, err := analysis.ReadFiles(cmd.Context(), cfg)
	if err != nil {
		return nil, asExit(err)
	}
	pr.statsStarted()
	doc, err = analysis.BuildThen(cmd.Context(), files, o.statsConfig(), Version(), o.SkipSteps, merged)
	if err != nil {
		return nil, asExit(err)
	}
	return doc, nil
}

func asExit(err error) error {
	var ue *analysis.UsageError
	if errors.As(err, &ue) {
		return &ExitError{Code: ExitInput, Err: ue.Err}
	}
	return err
}

func runAnalyze(cmd *cobra.Command, o *AnalyzeOptions) error {
	var hashes *inputHashes
	if o.Out != "" || o.Format == "parquet" || o.Format == "arrow" {
		// The dataset names each input by its SHA-256: hashed while the
		// analysis runs, on cores the serial stretches leave idle.
		hashes = hashInputs(o.Files)
	}
	// With --out, the instances table (independent of the statistics) is
	// encoded while the statistics run. Its metadata names the inputs by
	// hash: the wait for the hashing happens off the main path too.
	var (
		md    map[string]string
		dw    *export.DatasetWriter
		dwErr error
		early chan struct{} // closed once the early writer is set up
	)
	merged := func(d *analysis.Doc) {
		var files []string
		md, files = datasetMetadata(d) // reads the Doc before the statistics run
		early = make(chan struct{})
		go func() {
			defer close(early)
			setInputHashes(md, files, hashes)
			if dw, dwErr = o.datasetWriter(md); dw != nil {
				dw.AddRows(d.NumInstances(), d.InstancesRows)
			}
		}()
	}
	doc, err := buildDoc(cmd, o, merged)
	if err == nil && early == nil { // --from: built without the early call
		merged(doc)
	}
	if early != nil {
		<-early
	}
	if err == nil {
		err = dwErr
	}
	if err != nil {
		if dw != nil {
			dw.Abort()
		}
		return err
	}
	warnMismatches(o.Stderr, doc.MismatchWarnings())
	if dw != nil {
		for _, t := range doc.TablesAfterInstances() {
			dw.Add(t)
		}
		if err := dw.Commit(); err != nil {
			return o.datasetError(err)
		}
	}
	if !o.printsReport() {
		return nil
	}
	f, _ := tableFormat(o.Format) // html: 0, not binary
	return o.emit(o.Stdout, f, func(w io.Writer) error { return renderAnalysis(w, doc, o.Format, md) })
}

// datasetMetadata is the provenance every Parquet file carries.
func datasetMetadata(doc *analysis.Doc) (md map[string]string, files []string) {
	md = map[string]string{
		export.MetaSchemaVersion: analysis.SchemaVersion,
		export.MetaVersion:       Version(),
	}
	var nsysV, gpus []string
	for _, p := range doc.Provenance {
		files = append(files, p.File)
		nsysV = appendUnique(nsysV, p.Provenance.NsysVersion)
		for _, g := range p.Provenance.GPUs {
			gpus = appendUnique(gpus, g.Name+" "+g.UUID)
		}
	}
	md[export.MetaNsysVersion] = strings.Join(nsysV, ";")
	md[export.MetaGPU] = strings.Join(gpus, ";")
	if c, err := doc.ContextMetadata(); err == nil {
		md[analysis.MetaContext] = c // lets analyze --from reproduce this analysis
	}
	return md, files
}

// setInputHashes adds the inputs, each with its SHA-256, to md.
func setInputHashes(md map[string]string, files []string, hashes *inputHashes) {
	var inputs []export.Input
	for _, f := range files {
		inputs = append(inputs, export.Input{Path: f, SHA256: hashes.sum(f)})
	}
	md[export.MetaInputs] = export.InputsMetadata(inputs)
}

func appendUnique(xs []string, s string) []string {
	for _, x := range xs {
		if x == s {
			return xs
		}
	}
	return append(xs, s)
}

// inputHashes are the SHA-256 sums of input files, computed in the
// background.
type inputHashes struct {
	done chan struct{}
	sums map[string]string
}

func hashInputs(paths []string) *inputHashes {
	h := &inputHashes{done: make(chan struct{}), sums: map[string]string{}}
	go func() {
		defer close(h.done)
		for _, p := range paths {
			h.sums[p] = fileSHA256(p)
		}
	}()
	return h
}

// sum returns the hash of path: from the background work when it covered
// path, else computed now ("" when the file cannot be read).
func (h *inputHashes) sum(path string) string {
	if h != nil {
		<-h.done
		if s, ok := h.sums[path]; ok {
			return s
		}
	}
	return fileSHA256(path)
}

func fileSHA256(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	// 1 MiB reads: a 108 MB export in ~100 system calls, not ~3,300.
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{f}, make([]byte, 1<<20)); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

func renderAnalysis(w io.Writer, doc *analysis.Doc, format string, md map[string]string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	case "csv":
		return export.Write(w, doc.SummaryTable(), export.FormatCSV, export.Options{})
	case "parquet":
		return export.Write(w, doc.SummaryTable(), export.FormatParquet, export.Options{Metadata: md})
	case "arrow":
		return export.Write(w, doc.SummaryTable(), export.FormatArrow, export.Options{Metadata: md})
	case "html":
		return writeHTMLReport(w, doc)
	case "markdown":
		return writeAnalysisText(w, doc, export.FormatMarkdown)
	}
	return writeAnalysisText(w, doc, export.FormatText)
}

// writeAnalysisText is the human report: header with n, units, confidence,
// B and seed; the breakdown per arm; the wall comparisons; one line per
// phase saying where a difference comes from; warnings.
func writeAnalysisText(w io.Writer, doc *analysis.Doc, f export.Format) error {
	md := f == export.FormatMarkdown
	h := func(s string) {
		if md {
			fmt.Fprintf(w, "\n### %s\n\n", s)
		} else {
			fmt.Fprintf(w, "\n%s\n", s)
		}
	}
	inputs := make([]string, len(doc.Inputs))
	for i, in := range doc.Inputs {
		inputs[i] = in.File
	}
	if md {
		fmt.Fprintf(w, "## nsysphase analyze\n\n")
	}
	fmt.Fprintf(w, "inputs: %s\n", strings.Join(inputs, ", "))
	if md {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "step %q, %d phases; arms %s (baseline %s); excluded: %d warm-up-range steps, %d skipped first steps per block, %d steps outside arm blocks, %d unclosed ranges\n",
		doc.Step, len(doc.Phases)-1, strings.Join(doc.Arms, ", "), doc.Baseline, doc.Excluded.WarmupSteps, doc.Excluded.SkippedSteps, doc.Excluded.OutsideArmSteps, doc.Excluded.UnclosedRanges)
	if md {
		fmt.Fprintln(w)
	}
	if len(doc.Results()) > 0 && doc.Results()[0] != nil {
		r := doc.Results()[0]
		fmt.Fprintf(w, "statistics: unit = block or profile (never the step); %g%% CIs; B = %d resamples; seed %d; %s with n = %d units\n",
			100*doc.Settings.Confidence, doc.Settings.Resamples, doc.Settings.Seed, r.Method, r.N)
	} else {
		fmt.Fprintf(w, "statistics: off (--no-stats): point values only\n")
	}
	h("Breakdown (mean per step instance; µs)")
	if err := export.Write(w, doc.BreakdownTable(), f, export.Options{FloatDigits: 8}); err != nil {
		return err
	}
	if len(doc.Comparisons) > 0 {
		h(fmt.Sprintf("Comparisons with %s: wall_ns mean (ratio = arm / baseline; ~ = no significant change)", doc.Baseline))
		t := export.NewTable("wall", "",
			export.Column{Name: "phase", Type: export.TypeString},
			export.Column{Name: "arm", Type: export.TypeString},
			export.Column{Name: "baseline µs", Type: export.TypeFloat64},
			export.Column{Name: "arm µs", Type: export.TypeFloat64},
			export.Column{Name: "ratio", Type: export.TypeString, Nullable: true},
			export.Column{Name: "CI", Type: export.TypeString, Nullable: true},
			export.Column{Name: "verdict", Type: export.TypeString},
			export.Column{Name: "method", Type: export.TypeString},
			export.Column{Name: "n", Type: export.TypeInt64},
		)
		for _, c := range doc.Comparisons {
			if c.Metric != "wall_ns" || c.Stat != stats.StatMean {
				continue
			}
			ratio, cis := export.Null(), export.Null()
			if c.Ratio != nil {
				ratio = export.Str(fmt.Sprintf("%.3f", *c.Ratio))
			}
			if c.RatioCI != nil {
				cis = export.Str(fmt.Sprintf("[%.3f, %.3f]", c.RatioCI[0], c.RatioCI[1]))
			}
			verdict := c.Verdict
			if verdict == "" {
				verdict = "no CI"
			}
			_ = t.AppendRow(export.Str(c.Phase), export.Str(c.Arm), export.Float(round1(c.BaseValue/1e3)), export.Float(round1(c.ArmValue/1e3)), ratio, cis, export.Str(verdict), export.Str(c.Method), export.Int(int64(c.NUnits)))
		}
		if err := export.Write(w, t, f, export.Options{FloatDigits: 8}); err != nil {
			return err
		}
	}
	if len(doc.Decomposition) > 0 {
		h("Where each mean wall difference comes from (arm − baseline, µs per step; CI; share of baseline wall)")
		for _, line := range decompositionLines(doc) {
			if md {
				fmt.Fprintf(w, "- %s\n", line)
			} else {
				fmt.Fprintf(w, "  %s\n", line)
			}
		}
	}
	if notes := doc.GPUWaitNotes(); len(notes) > 0 {
		h("Why phases wait (sync_ns split by what the process's GPUs ran; µs per instance)")
		for _, line := range notes {
			if md {
				fmt.Fprintf(w, "- %s\n", line)
			} else {
				fmt.Fprintf(w, "  %s\n", line)
			}
		}
	}
	if len(doc.Warnings) > 0 {
		writeAnalysisWarnings(w, doc.Warnings, h)
	}
	return nil
}

// writeAnalysisWarnings prints the warnings a reader must see — those about inputs,
// arms and wall time — in full, and counts the rest by code: per-metric
// diagnostics on forty metrics would otherwise bury them. JSON has them all.
func writeAnalysisWarnings(w io.Writer, ws []analysis.Warning, h func(string)) {
	// Identical diagnostics of several phases (the design's replication,
	// say) print once with the phases they concern.
	type group struct {
		w      analysis.Warning
		phases []string
	}
	var shown []*group
	byKey := map[string]*group{}
	rest := map[string]int{}
	nShown := 0
	for _, wr := range ws {
		if wr.Metric != "" && wr.Metric != "wall_ns" {
			rest[wr.Code]++
			continue
		}
		nShown++
		key := wr.Code + "\x00" + wr.Arm + "\x00" + wr.Metric + "\x00" + wr.Message
		g := byKey[key]
		if g == nil {
			g = &group{w: wr}
			byKey[key] = g
			shown = append(shown, g)
		}
		if wr.Phase != "" && !slices.Contains(g.phases, wr.Phase) {
			g.phases = append(g.phases, wr.Phase)
		}
	}
	h(fmt.Sprintf("Warnings (%d: %d on inputs, arms and wall_ns below; all in --format json)", len(ws), nShown))
	const limit = 25
	for i, g := range shown {
		if i == limit {
			fmt.Fprintf(w, "  … %d more\n", len(shown)-limit)
			break
		}
		where := strings.Join(g.phases, ", ")
		if len(g.phases) > 3 {
			where = fmt.Sprintf("%d phases", len(g.phases))
		}
		scope := strings.Trim(strings.Join([]string{where, g.w.Arm, g.w.Metric}, " "), " ")
		if scope != "" {
			scope = " [" + scope + "]"
		}
		fmt.Fprintf(w, "  %s%s: %s\n", g.w.Code, scope, g.w.Message)
	}
	if len(rest) > 0 {
		codes := make([]string, 0, len(rest))
		for c := range rest {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		parts := make([]string, len(codes))
		for i, c := range codes {
			parts[i] = fmt.Sprintf("%s ×%d", c, rest[c])
		}
		fmt.Fprintf(w, "  on other metrics: %s\n", strings.Join(parts, ", "))
	}
}

func round1(v float64) float64 { return float64(int64(v*10+copysignHalf(v))) / 10 }

func copysignHalf(v float64) float64 {
	if v < 0 {
		return -0.5
	}
	return 0.5
}

// decompositionLines says per phase and arm where the mean wall difference
// comes from: the parts whose CI excludes 0, largest first.
func decompositionLines(doc *analysis.Doc) []string {
	type key struct{ phase, arm string }
	var order []key
	parts := map[key][]analysis.DecompositionRow{}
	for _, r := range doc.Decomposition {
		if r.Of != "" { // inner parts: in GPUWaitNotes
			continue
		}
		k := key{r.Phase, r.Arm}
		if _, ok := parts[k]; !ok {
			order = append(order, k)
		}
		parts[k] = append(parts[k], r)
	}
	var out []string
	for _, k := range order {
		rs := parts[k]
		var total float64
		for _, r := range rs {
			total += r.DiffNs
		}
		var sig, rest []string
		for _, r := range sortByAbs(rs) {
			s := fmt.Sprintf("%s %+.1f", r.Component, r.DiffNs/1e3)
			if r.DiffCI != nil {
				s += fmt.Sprintf(" [%+.1f, %+.1f]", r.DiffCI[0]/1e3, r.DiffCI[1]/1e3)
				if r.DiffCI[0] > 0 || r.DiffCI[1] < 0 {
					sig = append(sig, s+fmt.Sprintf(" (%+.1f%%)", 100*r.Share))
					continue
				}
			}
			rest = append(rest, s)
		}
		line := fmt.Sprintf("%s, %s: %+.1f µs/step", k.phase, k.arm, total/1e3)
		switch {
		case len(sig) > 0:
			line += " = " + strings.Join(sig, ", ")
			if len(rest) > 0 {
				line += "; not significant: " + strings.Join(rest, ", ")
			}
		case len(rest) > 0 && rs[0].DiffCI == nil:
			line += " (no between-unit CI): " + strings.Join(rest, ", ")
		default:
			line += ": no part differs significantly (~)"
		}
		out = append(out, line)
	}
	return out
}

func sortByAbs(rs []analysis.DecompositionRow) []analysis.DecompositionRow {
	out := append([]analysis.DecompositionRow(nil), rs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && abs(out[j].DiffNs) > abs(out[j-1].DiffNs); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
