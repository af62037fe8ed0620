package analysis

import (
	"context"
	"fmt"
	"github.com/nsysphase/nsysphase/internal/base/budget"
	"github.com/nsysphase/nsysphase/internal/base/marks"
	"math"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// Build merges the files' results and computes the statistics with the
// options' statistics settings; o.SkipSteps is the warm-up
// rule the files were segmented with, which the document reports.
func Build(ctx context.Context, files []*FileResult, o Options, version string) (*Doc, error) {
	return BuildThen(ctx, files, o, version, nil)
}

// BuildThen is Build that calls merged, when not nil, once the instances,
// inputs, provenance, arms and settings are merged and before the
// statistics run: what depends on those alone (the instances table) can be
// written meanwhile. merged must only read the Doc.
func BuildThen(ctx context.Context, files []*FileResult, o Options, version string, merged func(*Doc)) (*Doc, error) {
	d := &Doc{SchemaVersion: SchemaVersion, Tool: ToolInfo{Name: "nsysphase", Version: version}, opts: o}
	relabelArms(files)
	unitStart := UnitStarts(files)
	for _, fr := range files {
		r := fr.Result
		d.Inputs = append(d.Inputs, r.Inputs...)
		if d.Step == "" {
			d.Step = r.StepName
		} else if d.Step != r.StepName {
			d.Warnings = append(d.Warnings, Warning{Code: WarnStepDiffers, Message: fmt.Sprintf("%s uses step %q, the first input %q; pass --step to choose one", fr.Path, r.StepName, d.Step)})
		}
		for _, p := range r.PhaseOrder {
			if !slices.Contains(d.Phases, p) {
				d.Phases = append(d.Phases, p)
			}
		}
		d.Excluded = addExclusions(d.Excluded, r.Excluded)
		d.Warnings = append(d.Warnings, r.Warnings...)
		d.Provenance = append(d.Provenance, buildEvidence(fr))
	}
	// The rows that complete the step come after its phases: the
	// (unannotated) remainder, then other threads' work.
	tail := func(p string) int {
		switch {
		case p == phases.Unannotated:
			return 1
		case phases.IsOtherThreadRow(p):
			return 2
		}
		return 0
	}
	if len(d.Phases) > 1 {
		slices.SortStableFunc(d.Phases[1:], func(a, b string) int { return tail(a) - tail(b) })
	}
	if len(d.Inputs) > 0 {
		sc := d.Inputs[0].StepChoice
		d.StepChoice = &sc
	}
	marks.Mark("build: inputs merged")
	d.instances = allInstances(files)
	if w, ok := foldPhases(d.instances, d.Step, &d.Phases); ok {
		d.Warnings = append(d.Warnings, w)
	}
	marks.Mark("build: phases folded")
	d.unitStart = unitStart
	d.Arms = armsInOrder(d.instances, unitStart)
	if w, ok := foldArms(d.instances, d.Arms, o.Baseline); ok {
		d.Warnings = append(d.Warnings, w)
		d.Arms = armsInOrder(d.instances, unitStart)
	}
	marks.Mark("build: arms ordered")
	d.Settings = o.settings()
	d.Baseline = o.Baseline
	if d.Baseline == "" && len(d.Arms) > 0 {
		d.Baseline = d.Arms[0]
	}
	if o.Baseline != "" && !slices.Contains(d.Arms, o.Baseline) {
		return nil, &UsageError{Err: fmt.Errorf("--baseline %q is not an arm (arms: %s)", o.Baseline, strings.Join(d.Arms, ", "))}
	}
	d.buildRanks(files, &o)
	marks.Mark("merged")
	if merged != nil {
		merged(d)
	}
	d.results = make([]*stats.Result, len(d.Phases))
	d.statsOff = o.NoStats
	d.plan = unitsMerged(d.instances, d.Phases, unitStart, d.rankUnits)
	if !o.NoStats {
		names := MetricNames()
		err := inOrder(ctx, len(d.Phases), d.plan.statsConcurrency(runtime.GOMAXPROCS(0)/2), func(_ context.Context, i int) error {
			ph := d.Phases[i]
			units := d.plan.Units(i)
			if len(units) == 0 {
				return nil
			}
			// A phase that the baseline arm lacks (graph_replay exists
			// only in the graph arm) gets summaries but no comparisons.
			base := d.Baseline
			if !slices.ContainsFunc(units, func(u stats.Unit) bool { return u.Arm == base }) {
				base = ""
			}
			opt := o.statsOptions(base, []int{int(phases.Wall)}, true)
			opt.Decompose = wallDecomposition()
			if d.plan.WallUnmeasured(i) {
				opt.Decompose = nil // no wall to split
			}
			r, err := stats.Analyze(ph, names, units, opt)
			ReleaseUnits(units) // the result holds nothing of them
			if err != nil {
				return fmt.Errorf("statistics of phase %q: %w", ph, err)
			}
			d.results[i] = r
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	marks.Mark("statistics done")
	d.fill()
	d.buildHardware(files, &o)
	marks.Mark("doc filled")
	return d, nil
}

// allInstances is the files' instances in input order: a single file's
// store in place (no copy of the biggest result for the usual single
// export), the store that the files' stores are views of (--from's pooled
// store), else a merged store.
func allInstances(files []*FileResult) *phases.Store {
	switch len(files) {
	case 0:
		return phases.NewStore()
	case 1:
		return files[0].Result.InstanceStore()
	}
	stores := make([]*phases.Store, len(files))
	for i, fr := range files {
		stores[i] = fr.Result.InstanceStore()
	}
	if xs := phases.Tiled(stores); xs != nil {
		return xs
	}
	xs := phases.NewStore()
	n := 0
	for _, fr := range files {
		n += fr.Result.InstanceStore().Len()
	}
	xs.Grow(n)
	for _, fr := range files {
		xs.AppendStore(fr.Result.InstanceStore())
	}
	return xs
}

// inOrder runs fn(ctx, i) for i in [0, n), limit at a time, and returns
// the error of the lowest i that failed. A failure cancels only the later
// indices, so the earliest failure always runs to its end: which error is
// reported never depends on timing.
func inOrder(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	ctxs := make([]context.Context, n)
	cancels := make([]context.CancelFunc, n)
	for i := range n {
		ctxs[i], cancels[i] = context.WithCancel(ctx)
	}
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	errs := make([]error, n)
	var g errgroup.Group
	g.SetLimit(limit)
	for i := range n {
		g.Go(func() error {
			if err := ctxs[i].Err(); err != nil {
				errs[i] = err
				return nil
			}
			if err := fn(ctxs[i], i); err != nil {
				errs[i] = err
				for k := i + 1; k < n; k++ {
					cancels[k]()
				}
			}
			return nil
		})
	}
	_ = g.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// wallDecomposition splits wall into its six exclusive parts and, inside
// them, says what the process's GPUs ran: sync's own/other/no-GPU parts,
// and wall's time of other processes' work and of an idle GPU.
func wallDecomposition() *stats.Decomposition {
	d := &stats.Decomposition{Total: int(phases.Wall), Parts: wallPartInts()}
	for _, m := range phases.SyncParts() {
		d.Inner = append(d.Inner, stats.InnerPart{Metric: int(m), Of: int(phases.SyncAPI)})
	}
	for _, m := range []phases.Metric{phases.OtherProcessGPU, phases.GPUIdle} {
		d.Inner = append(d.Inner, stats.InnerPart{Metric: int(m), Of: int(phases.Wall)})
	}
	return d
}

func metricInts(ms []phases.Metric) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = int(m)
	}
	return out
}

func addExclusions(a, b phases.Exclusions) phases.Exclusions {
	a.UnclosedRanges += b.UnclosedRanges
	a.WarmupSteps += b.WarmupSteps
	a.SkippedSteps += b.SkippedSteps
	a.OutsideArmSteps += b.OutsideArmSteps
	a.CrossThreadEnded += b.CrossThreadEnded
	return a
}

// relabelArms drops the NVTX part of combined "<file-arm>/<nvtx-arm>" labels
// when every input has the same single NVTX arm: it distinguishes nothing.
func relabelArms(files []*FileResult) {
	nvtx := map[string]bool{}
	anyFileArm := false
	for _, fr := range files {
		if fr.FileArm != "" {
			anyFileArm = true
		}
		st := fr.Result.InstanceStore()
		prev := -1
		for i := range st.Len() {
			if b := st.BlockOf(i); b != prev { // the arm is the block's
				prev = b
				nvtx[strings.TrimPrefix(strings.TrimPrefix(st.Arm(i), fr.FileArm), "/")] = true
			}
		}
	}
	if !anyFileArm || len(nvtx) != 1 {
		return
	}
	for _, fr := range files {
		if fr.FileArm == "" {
			continue
		}
		fr.Result.InstanceStore().SetArm(fr.FileArm)
	}
}

func armsInOrder(xs *phases.Store, unitStart map[phases.UnitID]int64) []string {
	first := map[string]int64{}
	prev := -1
	for i := range xs.Len() {
		b := xs.BlockOf(i)
		if b == prev {
			continue // unit and arm are the block's
		}
		prev = b
		s, arm := unitStart[xs.Unit(i)], xs.Arm(i)
		if v, ok := first[arm]; !ok || s < v {
			first[arm] = s
		}
	}
	arms := make([]string, 0, len(first))
	for a := range first {
		arms = append(arms, a)
	}
	slices.SortFunc(arms, func(a, b string) int {
		if first[a] != first[b] {
			if first[a] < first[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return arms
}

// fill turns the statistics results into the document's rows.
func (d *Doc) fill() {
	names := MetricNames()
	null := d.nullMetrics()
	absent := func(arm, ph, metric string) bool {
		m, ok := phases.MetricByName(metric)
		return ok && null[armPhase{arm, ph}]&(1<<uint(m)) != 0
	}
	defer func() {
		for i := range d.Summary {
			r := &d.Summary[i]
			for name := range r.Metrics {
				if absent(r.Arm, r.Phase, name) {
					r.Metrics[name] = MetricSummary{Absent: true}
				}
			}
		}
		d.Comparisons = slices.DeleteFunc(d.Comparisons, func(c ComparisonRow) bool {
			return absent(c.Arm, c.Phase, c.Metric) || absent(c.Baseline, c.Phase, c.Metric)
		})
		d.Decomposition = slices.DeleteFunc(d.Decomposition, func(c DecompositionRow) bool {
			return absent(c.Arm, c.Phase, c.Component) || absent(c.Baseline, c.Phase, c.Component)
		})
	}()
	for i, ph := range d.Phases {
		r := d.results[i]
		if r == nil {
			d.fillPoint(ph, d.plan.Units(i), names)
			continue
		}
		compare := r.Baseline == d.Baseline
		for _, a := range r.Arms {
			row := SummaryRow{Arm: a.Arm, Phase: ph, Steps: a.Steps, Blocks: a.Units, Method: a.Method, Metrics: map[string]MetricSummary{}}
			for _, m := range a.Metrics {
				if m.Metric == phases.Wall.Name() {
					row.N = m.N
				}
				row.Metrics[m.Metric] = MetricSummary{Mean: m.Mean, Median: m.Median, P90: m.P90, P99: m.P99, MeanCI: m.MeanCI, MedianCI: m.MedianCI, P90CI: m.P90CI, P99CI: m.P99CI}
			}
			d.Summary = append(d.Summary, row)
		}
		for _, c := range r.Comparisons {
			if !compare {
				break
			}
			w := c.Warnings
			if w == nil {
				w = []string{}
			}
			d.Comparisons = append(d.Comparisons, ComparisonRow{Phase: ph, Metric: c.Metric, Stat: c.Stat, Baseline: c.Baseline, Arm: c.Arm,
				BaseValue: c.BaselineValue, ArmValue: c.ArmValue, RatioEstimate: c.RatioEstimate, Diff: c.Diff, DiffCI: c.DiffCI,
				Significant: c.Significant, Verdict: c.Verdict, Method: c.Method, NUnits: c.NUnits, Warnings: w})
		}
		for _, c := range r.Decomposition {
			if !compare {
				break
			}
			d.Decomposition = append(d.Decomposition, DecompositionRow{Phase: ph, Baseline: c.Baseline, Arm: c.Arm, Component: c.Part, Of: c.Of,
				DiffNs: c.Diff, DiffCI: c.DiffCI, Share: c.Share, ShareCI: c.ShareCI, Method: c.Method})
		}
		for _, w := range r.Warnings {
			w.Phase, w.Values = ph, nil // the document keeps the sentence and its scope
			d.Warnings = append(d.Warnings, w)
		}
	}
	if d.Summary == nil {
		d.Summary = []SummaryRow{}
	}
	if d.Comparisons == nil {
		d.Comparisons = []ComparisonRow{}
	}
	if d.Decomposition == nil {
		d.Decomposition = []DecompositionRow{}
	}
	if d.Warnings == nil {
		d.Warnings = []Warning{}
	}
}

// armPhase keys an arm × phase.
type armPhase struct{ arm, phase string }

// nullMetrics are, per arm × phase, the metrics no instance measured (the
// AND of the instances' null masks).
func (d *Doc) nullMetrics() map[armPhase]uint64 {
	out := map[armPhase]uint64{}
	xs := d.instances
	for i := range xs.Len() {
		k, null := armPhase{xs.Arm(i), xs.Phase(i)}, xs.Null(i)
		if v, ok := out[k]; ok {
			out[k] = v & null
		} else {
			out[k] = null
		}
	}
	return out
}

// fillPoint computes point summaries without CIs (statistics off).
func (d *Doc) fillPoint(ph string, us []stats.Unit, names []string) {
	byArm := map[string][]stats.Unit{}
	for _, u := range us {
		byArm[u.Arm] = append(byArm[u.Arm], u)
	}
	for _, arm := range d.Arms {
		au := byArm[arm]
		if len(au) == 0 {
			continue
		}
		row := SummaryRow{Arm: arm, Phase: ph, Blocks: len(au), Method: stats.MethodNone, Metrics: map[string]MetricSummary{}}
		for m, name := range names {
			var xs []float64
			steps := 0
			for _, u := range au {
				for _, v := range u.Steps[m] {
					steps++
					if !math.IsNaN(v) {
						xs = append(xs, v)
					}
				}
			}
			s := stats.Summarize(xs)
			row.Metrics[name] = MetricSummary{Mean: s.Mean, Median: s.Median, P90: s.P90, P99: s.P99}
			row.N, row.Steps = len(xs), steps
		}
		d.Summary = append(d.Summary, row)
	}
}

// Instances returns the merged phase and step instances (decoded: as
// much memory as the instances take uncompressed; see Store).
func (d *Doc) Instances() []phases.Instance { return d.instances.All() }

// Store returns the merged phase and step instances, compact.
func (d *Doc) Store() *phases.Store { return d.instances }

// Options are the options the document was built with; SkipSteps is the
// warm-up it applied (with datasets, theirs unless one was given): what a
// history of the same analysis is loaded with (dataset.LoadHistory).
func (d *Doc) Options() Options { return d.opts }

// Results returns the statistics per phase (nil entries when off).
func (d *Doc) Results() []*stats.Result { return d.results }

// UnitStarts returns each unit's start on the clock that orders units across
// files: the capture's start (Unix ns) plus the block's offset from the
// file's first step, or the export's own clock when the capture start is
// unknown.
func (d *Doc) UnitStarts() map[phases.UnitID]int64 { return d.unitStart }

// RankInputs are each export's rank processes as read (before rank ids),
// by export; nil without ranks. The dataset carries them for --from
// (internal/dataset: the analysis context and rank_collectives).
func (d *Doc) RankInputs() map[string][]phases.RankProcess { return d.rankInputs }

// wallPartInts are phases.WallParts as the stats package indexes metrics.
func wallPartInts() []int {
	w := phases.WallParts()
	return metricInts(w[:])
}

// MaxPhases bounds the distinct phases of an analysis: each costs a summary
// row, every metric with its statistics (about 20 KB of memory and 8 KB of
// JSON), and a report of ten thousand phases is read by no one. Beyond it,
// the phases with the most wall time are kept and the rest become one phase,
// OtherPhases, with a warning.
const MaxPhases = 500

// OtherArms names the arms folded beyond budget.Arms.
const OtherArms = "(other arms)"

// foldArms renames the arms beyond budget.Arms (in arms' order, the
// first to start first; the baseline always kept) to OtherArms. Two
// thousand one-step arm ranges gave 415 MB of JSON and 1.7 GB of memory:
// every arm costs a summary and a comparison per phase.
func foldArms(xs *phases.Store, arms []string, baseline string) (Warning, bool) {
	if len(arms) <= budget.Arms {
		return Warning{}, false
	}
	kept := map[string]bool{}
	for _, a := range arms[:budget.Arms] {
		kept[a] = true
	}
	if baseline != "" && !kept[baseline] && slices.Contains(arms, baseline) {
		delete(kept, arms[budget.Arms-1])
		kept[baseline] = true
	}
	xs.RenameArms(func(arm string) (string, bool) { return OtherArms, !kept[arm] })
	return Warning{Code: WarnArmsFolded, Message: fmt.Sprintf("%d arms: the first %d to start are kept (the baseline among them) and the other %d %s one arm %q; name fewer arms (--arm-pattern, --arm-key)",
		len(arms), budget.Arms, len(arms)-budget.Arms, plural.Of(len(arms)-budget.Arms, "is", "are"), OtherArms)}, true
}

// OtherPhases names the phases folded beyond MaxPhases.
const OtherPhases = "(other phases)"

// foldPhases renames the phases beyond MaxPhases (by total wall time, the
// step, (unannotated) and other threads' rows always kept) to OtherPhases in
// xs and in order.
func foldPhases(xs *phases.Store, step string, order *[]string) (Warning, bool) {
	if xs.DistinctPhases() <= MaxPhases {
		return Warning{}, false // nothing to fold: the walls need not be summed
	}
	keep := func(p string) bool { return p == step || p == phases.Unannotated || phases.IsOtherThreadRow(p) }
	wall := map[string]int64{}
	for i := range xs.Len() {
		if p := xs.Phase(i); !keep(p) {
			wall[p] += xs.Metric(i, phases.Wall)
		}
	}
	if len(wall) <= MaxPhases {
		return Warning{}, false
	}
	names := make([]string, 0, len(wall))
	for p := range wall {
		names = append(names, p)
	}
	slices.SortFunc(names, func(a, b string) int {
		if wall[a] != wall[b] {
			if wall[a] > wall[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	folded := map[string]bool{}
	for _, p := range names[MaxPhases:] {
		folded[p] = true
	}
	for i := range xs.Len() {
		if folded[xs.Phase(i)] {
			xs.SetPhase(i, OtherPhases)
		}
	}
	var kept []string
	added := false
	for _, p := range *order {
		switch {
		case !folded[p]:
			kept = append(kept, p)
		case !added:
			kept, added = append(kept, OtherPhases), true
		}
	}
	*order = kept
	return Warning{Code: WarnPhasesFolded, Message: fmt.Sprintf("%d distinct phases: the %d with the most wall time are kept and the other %d %s one phase %q; choose phases with --config or --depth",
		len(names), MaxPhases, len(names)-MaxPhases, plural.Of(len(names)-MaxPhases, "is", "are"), OtherPhases)}, true
}
