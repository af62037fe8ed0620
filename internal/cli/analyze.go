package cli

import (
	"errors"
	"github.com/nsysphase/nsysphase/internal/base/marks"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/internal/base/filehash"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/dataset"
	"github.com/nsysphase/nsysphase/internal/report"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// AnalyzeOptions are the flags and arguments of `nsysphase analyze`.
type AnalyzeOptions struct {
	AnalysisFlags
	TableOutput
	From      bool     // Files are dataset directories written by --out
	Hotspots  bool     // each phase's top host functions by CPU samples
	RankGlobs []string // --ranks GLOB: exports that hold ranks of one job
	History   []string // --history: dataset directories (globs) of earlier baseline runs
	WithinRun bool     // --within-run: stationary bootstrap over the steps of single runs
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

Two exports without arm ranges (analyze before.sqlite after.sqlite) are two arms named after
their files, compared within-run (these two runs; run-to-run variance left out) and labelled so.
To pool runs of one configuration instead, name the arm: --arm base='run*.sqlite'.

Inputs are read -j at a time; the output order is the input order (globs sorted) whatever -j.
A progress bar shows on stderr only on an interactive terminal when CI is unset.`,
		Example: `  nsysphase analyze testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz
  nsysphase analyze --format json testdata/nsys-2025.3-h200/eager_graph_small.sqlite.xz > analysis.json
  nsysphase analyze --format html -o report.html testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz
  nsysphase analyze --quiet --arm-key training.cuda_process_sharing --partition --out results/job1 testdata/nsys-2025.3-h200/sharing_mps_1.sqlite.xz
  nsysphase analyze --quiet --arm-key training.cuda_process_sharing --partition --out results/job2 testdata/nsys-2025.3-h200/sharing_null_1.sqlite.xz
  nsysphase analyze --from results/job1 results/job2 --format markdown
  nsysphase analyze --arm-key training.cuda_process_sharing 'testdata/nsys-2025.3-h200/sharing_*.sqlite.xz' --out results/all
  nsysphase analyze --arm mps='testdata/nsys-2025.3-h200/sharing_mps_*.sqlite.xz' --arm null='testdata/nsys-2025.3-h200/sharing_null_*.sqlite.xz' --format md`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = append(slices.Clone(args), o.RankGlobs...)
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
	addSegmentFlags(cmd, &o.AnalysisFlags)
	addStatsFlags(cmd, &o.AnalysisFlags, true)
	addTableOutputFlags(cmd, &o.TableOutput, "phase_summary", "html")
	cmd.Flags().BoolVar(&o.Hotspots, "hotspots", false, "table format: each phase's top five host functions by CPU samples (nsys profile --sample=cpu)")
	cmd.Flags().BoolVar(&o.From, "from", false, "the arguments are dataset directories written by --out (flat or --partition), not exports")
	cmd.Flags().StringArrayVar(&o.RankGlobs, "ranks", nil, "GLOB: exports that hold ranks of one job (one per rank, or one per node); they are inputs too, and their ranks are read even where nothing else shows them (repeatable)")
	cmd.Flags().StringArrayVar(&o.History, "history", nil, "dataset directory (--out) of an earlier baseline run: adds each phase's wall (each run's median) against the history runs; repeatable, globs quoted")
	cmd.Flags().BoolVar(&o.WithinRun, "within-run", false, "adds each arm's phases against the baseline by a stationary bootstrap over steps (within these runs: leaves out run-to-run variance)")
	return cmd
}

func (o *AnalyzeOptions) validate() error {
	if len(o.Files) == 0 && len(o.FileArms) == 0 && o.From {
		return usageErr("--from: pass dataset directories written by nsysphase analyze --out")
	}
	o.Datasets = o.From // the datasets are segmented: segmentation options do not apply (validateFrom refuses them)
	if err := o.AnalysisFlags.validate(); err != nil {
		return err
	}
	return o.checkPaths(append(o.inputPaths(), expandDirs(o.History)...))
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
	cfg.RankGlobs = o.RankGlobs
	pr := startProgress(cmd, &cfg, &o.CommonFlags)
	defer func() { pr.finish(err == nil) }()
	tuneMemory(cfg)
	files, err := analysis.ReadFiles(cmd.Context(), cfg)
	marks.Mark("files read")
	if err != nil {
		return nil, asExit(err)
	}
	if o.beforeAfter(files) {
		o.WithinRun = true // one profile per arm: only a within-run comparison is possible
	}
	pr.statsStarted()
	doc, err = analysis.BuildThen(cmd.Context(), files, o.Options, Version(), merged)
	if err != nil {
		return nil, asExit(err)
	}
	return doc, nil
}

// beforeAfter makes two profiles without arm ranges, file arms or ranks
// (`analyze before.sqlite after.sqlite`) two arms named after their files,
// the first the baseline unless --baseline says otherwise: the most common
// comparison needs no pattern. It reports whether it did.
func (o *AnalyzeOptions) beforeAfter(files []*analysis.FileResult) bool {
	if len(files) != 2 || len(o.FileArms) > 0 || o.ArmKey != "" || len(o.RankGlobs) > 0 {
		return false
	}
	for _, fr := range files {
		if fr.FileArm != "" || len(fr.Ranks) > 0 || !slices.Equal(fr.Result.Arms, []string{phases.SingleArm}) {
			return false
		}
	}
	names := []string{profileName(files[0].Path), profileName(files[1].Path)}
	if names[0] == names[1] {
		names = []string{filepath.ToSlash(files[0].Path), filepath.ToSlash(files[1].Path)}
	}
	for i, fr := range files {
		fr.FileArm = names[i]
		fr.Result.Arms = []string{names[i]}
		fr.Result.InstanceStore().SetArm(names[i])
	}
	return true
}

// profileName is an export's file name without its extensions
// ("runs/before.sqlite.xz" → "before").
func profileName(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".xz", ".sqlite", ".nsys-rep", ".db"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
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
			marks.Mark("inputs hashed")
			if dw, dwErr = o.datasetWriter(md); dw != nil {
				dw.AddRows(d.Store().Len(), func(lo, hi int) *export.Table { return dataset.InstancesRows(d, lo, hi) })
			}
		}()
	}
	doc, err := buildDoc(cmd, o, merged)
	marks.Mark("built")
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
	warnMismatches(cmd.ErrOrStderr(), doc.MismatchWarnings())
	if len(o.History) > 0 {
		if err := addHistory(cmd, o, doc); err != nil {
			if dw != nil {
				dw.Abort()
			}
			return err
		}
	}
	if o.WithinRun {
		rows, err := doc.CompareWithinRun(doc.Phases, "wall_ns", "mean")
		if err != nil {
			if dw != nil {
				dw.Abort()
			}
			return err
		}
		doc.WithinRun = rows
	}
	if dw != nil {
		for _, t := range dataset.TablesAfterInstances(doc) {
			dw.Add(t)
		}
		marks.Mark("tables added")
		if err := dw.Commit(); err != nil {
			return o.datasetError(err)
		}
	}
	marks.Mark("committed")
	if !o.printsReport() {
		return nil
	}
	f, err := report.ParseFormat(o.Format)
	if err != nil {
		return usageErr("--format: %v", err)
	}
	opt := o.reportOptions()
	opt.Tool, opt.Metadata, opt.Hotspots, opt.StepGiven = "nsysphase "+Version(), md, o.Hotspots, o.Step != "" || o.RulesFile != ""
	return o.emit(cmd.OutOrStdout(), f.Binary(), func(w io.Writer) error { return report.Generate(w, f, doc, opt) })
}

// addHistory compares every phase's mean wall with the --history runs.
func addHistory(cmd *cobra.Command, o *AnalyzeOptions, doc *analysis.Doc) error {
	h, err := loadHistory(cmd, o.History, doc.Options())
	if err != nil {
		return err
	}
	base := o.Baseline
	if base != "" && !slices.Contains(h.Arms(), base) {
		base = "" // --baseline names a candidate arm; each arm then meets its own history
	}
	rows, err := doc.CompareWithHistory(h, doc.Phases, "wall_ns", stats.DefaultHistoryStat, base, o.Confidence)
	if err != nil {
		return asExit(err)
	}
	doc.History = rows
	return nil
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
	if c, err := dataset.ContextMetadata(doc); err == nil {
		md[dataset.MetaContext] = c // lets analyze --from reproduce this analysis
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

// fileSHA256 is the hash of path, "" when it cannot be read; an unchanged
// file analysed again is not read again (filehash).
func fileSHA256(path string) string {
	sum, err := filehash.SHA256(path)
	if err != nil {
		return ""
	}
	return sum
}
