package analysis

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
	"github.com/nsysphase/nsysphase/stats"
)

// SchemaVersion versions the JSON document and the Parquet tables. Bump the
// minor for added fields, the major for changed or removed ones.
const SchemaVersion = "1.0"

// StatsConfig are the statistics settings of an analysis.
type StatsConfig struct {
	Confidence float64 // 0.95
	Resamples  int     // 9999
	Seed       uint64  // 1
	Baseline   string  // "" = the arm of the earliest block
	Quantiles  bool    // p90/p99 CIs for wall_ns where allowed
	Off        bool    // point values only (no CIs)
}

// Doc is the JSON contract of `nsysphase analyze --format json`.
type Doc struct {
	SchemaVersion string             `json:"schema_version"`
	Tool          ToolInfo           `json:"tool"`
	Inputs        []phases.Input     `json:"inputs"`
	Step          string             `json:"step"`
	Phases        []string           `json:"phases"` // step first, then phases in step order
	Arms          []string           `json:"arms"`
	Baseline      string             `json:"baseline"`
	Settings      Settings           `json:"settings"`
	Summary       []SummaryRow       `json:"summary"`
	Comparisons   []ComparisonRow    `json:"comparisons"`
	Decomposition []DecompositionRow `json:"decomposition"`
	Provenance    []ProvenanceRow    `json:"provenance"`
	Excluded      phases.Exclusions  `json:"excluded"`
	Warnings      []Warning          `json:"warnings"`

	instances []phases.Instance
	results   []*stats.Result  // per phase, in Phases order; nil entries when stats are off
	unitStart map[string]int64 // unit → start on the common clock (orders units); see from.go
	plan      *unitPlan        // instances placed in units, steps and phases
}

// ToolInfo names the tool that wrote a document.
type ToolInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Settings record how the statistics were computed.
type Settings struct {
	Confidence float64 `json:"confidence"`
	Resamples  int     `json:"resamples"`
	Seed       uint64  `json:"seed"`
	SkipSteps  int     `json:"skip_steps"`
	Quantile   string  `json:"quantile_definition"`
	Unit       string  `json:"unit"` // what one resampled unit is
}

// SummaryRow is one arm × phase of the summary.
type SummaryRow struct {
	Arm     string                   `json:"arm"`
	Phase   string                   `json:"phase"`
	N       int                      `json:"n"`      // step instances with the phase present
	Steps   int                      `json:"steps"`  // kept steps of the arm
	Blocks  int                      `json:"blocks"` // units (blocks or profiles) of the arm
	Method  string                   `json:"method"`
	Metrics map[string]MetricSummary `json:"metrics"`
}

// MetricSummary are the point values and CIs of one metric (ns, bytes or
// count per step instance). Quantiles are Empirical (the lower median).
type MetricSummary struct {
	Mean     float64     `json:"mean"`
	Median   float64     `json:"median"`
	P90      float64     `json:"p90"`
	P99      float64     `json:"p99"`
	MeanCI   *[2]float64 `json:"mean_ci"`
	MedianCI *[2]float64 `json:"median_ci"`
	P90CI    *[2]float64 `json:"p90_ci,omitempty"`
	P99CI    *[2]float64 `json:"p99_ci,omitempty"`
}

// ComparisonRow is one arm against the baseline for one phase, metric and statistic.
type ComparisonRow struct {
	Phase       string      `json:"phase"`
	Metric      string      `json:"metric"`
	Stat        string      `json:"stat"`
	Baseline    string      `json:"baseline"`
	Arm         string      `json:"arm"`
	BaseValue   float64     `json:"baseline_value"`
	ArmValue    float64     `json:"arm_value"`
	Ratio       *float64    `json:"ratio"`
	RatioCI     *[2]float64 `json:"ratio_ci"`
	Diff        float64     `json:"diff"`
	DiffCI      *[2]float64 `json:"diff_ci"`
	Significant bool        `json:"significant"`
	Verdict     string      `json:"verdict"`
	Method      string      `json:"method"`
	NUnits      int         `json:"n_units"`
	Warnings    []string    `json:"warnings"`
}

// DecompositionRow is one exclusive part of a phase's mean wall difference.
type DecompositionRow struct {
	Phase     string      `json:"phase"`
	Baseline  string      `json:"baseline"`
	Arm       string      `json:"arm"`
	Component string      `json:"component"`
	DiffNs    float64     `json:"diff_ns"`
	DiffCI    *[2]float64 `json:"diff_ci"`
	Share     float64     `json:"share"` // of the baseline's mean wall
	ShareCI   *[2]float64 `json:"share_ci"`
	Method    string      `json:"method"`
}

// Warning is one diagnostic with its scope: the pipeline's one warning
// type. Warnings about an input (File set) come from reading and segmenting
// it; the others from merging and the statistics.
type Warning = nsys.Warning

// MetricNames are the metric columns in order.
func MetricNames() []string {
	out := make([]string, phases.NumMetrics)
	for m := range phases.NumMetrics {
		out[m] = phases.Metrics[m].Name
	}
	return out
}

// Build merges the files' results and computes the statistics.
func Build(ctx context.Context, files []*FileResult, sc StatsConfig, version string, skipSteps int) (*Doc, error) {
	return BuildThen(ctx, files, sc, version, skipSteps, nil)
}

// BuildThen is Build that calls merged, when not nil, once the instances,
// inputs, provenance, arms and settings are merged and before the
// statistics run: what depends on those alone (the instances table) can be
// written meanwhile. merged must only read the Doc.
func BuildThen(ctx context.Context, files []*FileResult, sc StatsConfig, version string, skipSteps int, merged func(*Doc)) (*Doc, error) {
	d := &Doc{SchemaVersion: SchemaVersion, Tool: ToolInfo{Name: "nsysphase", Version: version}}
	relabelArms(files)
	var unitStart = map[string]int64{}
	for _, fr := range files {
		r := fr.Result
		d.Inputs = append(d.Inputs, r.Inputs...)
		if d.Step == "" {
			d.Step = r.StepName
		} else if d.Step != r.StepName {
			d.Warnings = append(d.Warnings, Warning{Code: "step_differs", Message: fmt.Sprintf("%s uses step %q, the first input %q; pass --step to choose one", fr.Path, r.StepName, d.Step)})
		}
		for _, p := range r.PhaseOrder {
			if !slices.Contains(d.Phases, p) {
				d.Phases = append(d.Phases, p)
			}
		}
		d.Excluded = addExclusions(d.Excluded, r.Excluded)
		for _, w := range r.Warnings {
			d.Warnings = append(d.Warnings, w)
		}
		for _, x := range r.Instances {
			// Blocks of different exports are ordered by the capture's wall
			// clock: each export has its own timeline.
			start := x.BlockStart
			if fr.StartUTC != 0 {
				start = fr.StartUTC + (x.BlockStart - fr.MinTime)
			}
			unitStart[x.Unit] = start
		}
		if d.instances == nil {
			// The first file's instances are used in place (capacity
			// clipped, so a second file's append copies): no copy of the
			// biggest result for the usual single export.
			d.instances = slices.Clip(r.Instances)
		} else {
			d.instances = append(d.instances, r.Instances...)
		}
		d.Provenance = append(d.Provenance, buildEvidence(fr))
	}
	d.unitStart = unitStart
	d.Arms = armsInOrder(d.instances, unitStart)
	d.Settings = Settings{Confidence: sc.Confidence, Resamples: sc.Resamples, Seed: sc.Seed, SkipSteps: skipSteps,
		Quantile: "empirical (lowest value whose cumulative share reaches p; the lower median), not numpy's linear type 7",
		Unit:     "block (an NVTX arm range) or profile (a file); steps are never resampled"}
	d.Baseline = sc.Baseline
	if d.Baseline == "" && len(d.Arms) > 0 {
		d.Baseline = d.Arms[0]
	}
	if sc.Baseline != "" && !slices.Contains(d.Arms, sc.Baseline) {
		return nil, &UsageError{Err: fmt.Errorf("--baseline %q is not an arm (arms: %s)", sc.Baseline, strings.Join(d.Arms, ", "))}
	}
	if merged != nil {
		merged(d)
	}
	d.results = make([]*stats.Result, len(d.Phases))
	d.plan = newUnitPlan(d.instances, d.Phases)
	if !sc.Off {
		names := MetricNames()
		g, _ := errgroup.WithContext(ctx)
		g.SetLimit(max(1, runtime.GOMAXPROCS(0)/2))
		var mu sync.Mutex
		var firstErr error
		for i, ph := range d.Phases {
			g.Go(func() error {
				units := d.plan.units(d.instances, int32(i), unitStart)
				if len(units) == 0 {
					return nil
				}
				// A phase that the baseline arm lacks (graph_replay exists
				// only in the graph arm) gets summaries but no comparisons.
				base := d.Baseline
				if !slices.ContainsFunc(units, func(u stats.Unit) bool { return u.Arm == base }) {
					base = ""
				}
				opt := stats.Options{Confidence: sc.Confidence, Resamples: sc.Resamples, Seed: sc.Seed, Baseline: base, Quantiles: sc.Quantiles,
					QuantileMetrics: []int{int(phases.Wall)},
					Decompose:       &stats.Decomposition{Total: int(phases.Wall), Parts: metricInts(phases.WallParts)}}
				r, err := stats.Analyze(ph, names, units, opt)
				mu.Lock()
				defer mu.Unlock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("statistics of phase %q: %w", ph, err)
				}
				d.results[i] = r
				return nil
			})
		}
		_ = g.Wait()
		if firstErr != nil {
			return nil, firstErr
		}
	}
	d.fill()
	return d, nil
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
		for _, x := range fr.Result.Instances {
			nvtx[strings.TrimPrefix(strings.TrimPrefix(x.Arm, fr.FileArm), "/")] = true
		}
	}
	if !anyFileArm || len(nvtx) != 1 {
		return
	}
	for _, fr := range files {
		if fr.FileArm == "" {
			continue
		}
		r := fr.Result
		for i := range r.Instances {
			r.Instances[i].Arm = fr.FileArm
		}
	}
}

func armsInOrder(xs []phases.Instance, unitStart map[string]int64) []string {
	first := map[string]int64{}
	for _, x := range xs {
		s := unitStart[x.Unit]
		if v, ok := first[x.Arm]; !ok || s < v {
			first[x.Arm] = s
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

// buildUnits turns instances into the statistics' units of phase ph: per
// block, the kept steps in order; a step without the phase gives NaN
// (absent), a step with several instances of it gives their sum.
func buildUnits(xs []phases.Instance, ph string, unitStart map[string]int64) []stats.Unit {
	return newUnitPlan(xs, []string{ph}).units(xs, 0, unitStart)
}

// unitPlan places every instance in its unit and kept step once, for all
// phases: units are then built one phase at a time (only the phases being
// analysed hold their per-step values) by integer comparisons.
type unitPlan struct {
	ids, arms, profiles []string // per unit, in order of first kept step
	kept                []int    // per unit: kept steps
	unit, step, phase   []int32  // per instance: unit (-1: not kept), kept step, phase index (-1: none)
}

func newUnitPlan(xs []phases.Instance, phaseNames []string) *unitPlan {
	p := &unitPlan{unit: make([]int32, len(xs)), step: make([]int32, len(xs)), phase: make([]int32, len(xs))}
	phaseIdx := make(map[string]int32, len(phaseNames))
	for i, ph := range phaseNames {
		phaseIdx[ph] = int32(i)
	}
	unitIdx := map[string]int32{}
	cur, skipping := int32(-1), false
	lastPhase, lastIdx := "", int32(-1)
	for i := range xs {
		x := &xs[i]
		if x.IsStep {
			skipping = x.Warmup
			if !skipping {
				u, ok := unitIdx[x.Unit]
				if !ok {
					u = int32(len(p.ids))
					unitIdx[x.Unit] = u
					p.ids, p.arms, p.profiles, p.kept = append(p.ids, x.Unit), append(p.arms, x.Arm), append(p.profiles, x.File), append(p.kept, 0)
				}
				cur = u
				p.kept[u]++
			}
		}
		if skipping {
			p.unit[i], p.phase[i] = -1, -1
			continue
		}
		if x.Phase != lastPhase || lastIdx < 0 {
			idx, ok := phaseIdx[x.Phase]
			if !ok {
				idx = -1
			}
			lastPhase, lastIdx = x.Phase, idx
		}
		p.unit[i], p.step[i], p.phase[i] = cur, int32(p.kept[cur]-1), lastIdx
	}
	return p
}

// units returns the units of phase index ph.
func (p *unitPlan) units(xs []phases.Instance, ph int32, unitStart map[string]int64) []stats.Unit {
	steps := make([][][]float64, len(p.ids)) // per unit, per metric, per kept step; nil: phase absent
	for i := range xs {
		if p.phase[i] != ph {
			continue
		}
		u, t := p.unit[i], p.step[i]
		if steps[u] == nil {
			steps[u] = make([][]float64, phases.NumMetrics)
			for m := range steps[u] {
				vals := make([]float64, p.kept[u])
				for k := range vals {
					vals[k] = math.NaN() // a step without the phase
				}
				steps[u][m] = vals
			}
		}
		for m, vals := range steps[u] {
			// NaN marks a step without the phase; a sum is never NaN.
			if v := vals[t]; math.IsNaN(v) {
				vals[t] = float64(xs[i].M[m])
			} else {
				vals[t] = v + float64(xs[i].M[m])
			}
		}
	}
	var out []stats.Unit
	for u, st := range steps {
		if st != nil {
			out = append(out, stats.Unit{ID: p.ids[u], Arm: p.arms[u], Profile: p.profiles[u], Start: unitStart[p.ids[u]], Steps: st})
		}
	}
	return out
}

// fill turns the statistics results into the document's rows.
func (d *Doc) fill() {
	names := MetricNames()
	for i, ph := range d.Phases {
		r := d.results[i]
		if r == nil {
			d.fillPoint(ph, d.plan.units(d.instances, int32(i), d.unitStart), names)
			continue
		}
		compare := r.Baseline == d.Baseline
		for _, a := range r.Arms {
			row := SummaryRow{Arm: a.Arm, Phase: ph, Steps: a.Steps, Blocks: a.Units, Method: a.Method, Metrics: map[string]MetricSummary{}}
			for _, m := range a.Metrics {
				if m.Metric == phases.Metrics[phases.Wall].Name {
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
				BaseValue: c.BaselineValue, ArmValue: c.ArmValue, Ratio: c.Ratio, RatioCI: c.RatioCI, Diff: c.Diff, DiffCI: c.DiffCI,
				Significant: c.Significant, Verdict: c.Verdict, Method: c.Method, NUnits: c.NUnits, Warnings: w})
		}
		for _, c := range r.Decomposition {
			if !compare {
				break
			}
			d.Decomposition = append(d.Decomposition, DecompositionRow{Phase: ph, Baseline: c.Baseline, Arm: c.Arm, Component: c.Part,
				DiffNs: c.Diff, DiffCI: c.DiffCI, Share: c.Share, ShareCI: c.ShareCI, Method: c.Method})
		}
		for _, w := range r.Warnings {
			w.Phase = ph
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

// Instances returns the merged phase and step instances.
func (d *Doc) Instances() []phases.Instance { return d.instances }

// Results returns the statistics per phase (nil entries when off).
func (d *Doc) Results() []*stats.Result { return d.results }
