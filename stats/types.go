package stats

import "github.com/nsysphase/nsysphase/diag"

// Unit is one replicate (an NVTX arm block or one profile) of one arm: its
// kept steps, in time order.
type Unit struct {
	ID      string // stable label, e.g. "file.sqlite#arm=graph block=2"; unique per (Start, ID)
	Arm     string
	Profile string // the file it came from (units of one profile may be paired inside it)
	Start   int64  // ns, orders units in time (rounds)
	// Steps[m][t] is the value of metric m at step t (ns, ≥ 0). All metrics
	// have the same number of steps. NaN means the step lacks the phase: the
	// step is left out for that metric and the present fraction is reported.
	Steps [][]float64
}

// Options controls Analyze. The zero value means the documented defaults.
type Options struct {
	Confidence float64 // two-sided level; 0 means 0.95
	Resamples  int     // bootstrap resamples B; 0 means 9999; below 1999 is an error
	Seed       uint64  // PCG seed1; 0 means 1
	Baseline   string  // "" means the arm of the earliest unit
	// Quantiles asks for p90/p99 CIs of the QuantileMetrics where docs/statistics.md §3.4 allows them.
	Quantiles bool
	// QuantileMetrics lists the metric indices that get quantile CIs (median
	// always, p90/p99 with Quantiles) and the per-step diagnostics
	// (autocorrelation, head effect, drift). nil means metric 0 only; an empty
	// non-nil slice means none. Mean CIs are computed for every metric.
	QuantileMetrics []int
	Decompose       *Decomposition // optional decomposition of mean differences (docs/statistics.md §6)
}

// Decomposition names, by metric index, the wall metric and the exclusive
// parts that sum to it at every step.
type Decomposition struct {
	Total int
	Parts []int
	// Inner are further metrics whose mean differences are estimated with
	// the same resamples as the parts, each contained in a part or in the
	// total (Of): a part's own split (sync's own/other/no-GPU time) or a
	// measure of the total (GPU idle time inside wall). They are reported
	// after the parts, and only the parts sum to the total.
	Inner []InnerPart
}

// InnerPart is a metric contained in the part or total Of (metric indices).
type InnerPart struct{ Metric, Of int }

// CI methods, in ladder order (docs/statistics.md §3.4).
const (
	MethodBootstrap = "bootstrap-expanded-percentile"
	MethodJackknife = "cluster-jackknife-t"
	MethodWithinRun = "within-run-batch"
	MethodNone      = "none"
)

// Statistics compared between arms.
const (
	StatMean   = "mean"
	StatMedian = "median"
	StatP90    = "p90"
	StatP99    = "p99"
)

// Resampling levels: what one resampled unit is.
const (
	LevelBlock   = "block"
	LevelProfile = "profile"
	LevelBatch   = "batch" // contiguous batch of steps inside one run (docs/statistics.md §4c)
)

// Warning codes (docs/statistics.md §7). Warnings are data: the caller decides how to show them.
const (
	WarnTailLimitedMean       = "tail_limited_mean"
	WarnAutocorrelation       = "autocorrelation"
	WarnHeadEffect            = "head_effect"
	WarnDrift                 = "drift"
	WarnNonInterleaved        = "non_interleaved"
	WarnUnequalUnits          = "unequal_units"
	WarnLowReplication        = "low_replication"
	WarnNoReplication         = "no_replication"
	WarnQuantileCIOmitted     = "quantile_ci_omitted"
	WarnRunToRunExcluded      = "ci_excludes_run_to_run_variance"
	WarnConditionalOnProfiles = "conditional_on_profiles"
	WarnSkewedOrTailLimited   = "skewed_or_tail_limited"
	WarnUnmatchedUnit         = "unmatched_unit"          // a trailing unit left out of paired inference
	WarnApproximateQuantileCI = "approximate_quantile_ci" // N·(1−p) < 50
	WarnUndefinedResamples    = "undefined_resamples"     // some resamples had no present step
	WarnMetricAbsent          = "metric_absent"           // an arm has no present step of a metric
	WarnUnboundedCI           = "unbounded_ci"            // a ratio CI endpoint is infinite
	WarnNotRequested          = "not_requested"           // quantile CI not asked for this metric
)

// Result is the analysis of one task (e.g. one phase).
type Result struct {
	Key        string   `json:"key"`
	Metrics    []string `json:"metrics"`
	Baseline   string   `json:"baseline"`
	Method     string   `json:"method"` // CI method of the first comparison (of the baseline arm when alone)
	N          int      `json:"n"`      // resampled units behind Method
	B          int      `json:"b"`      // requested resamples (Design.Resamples has the count drawn)
	Seed       uint64   `json:"seed"`
	Confidence float64  `json:"confidence"`
	// Cells counts the comparison cells (arm × metric × stat) that carry a
	// between-unit CI: the CIs are marginal, so a report should say how many
	// were looked at.
	Cells         int          `json:"cells"`
	Arms          []ArmSummary `json:"arms"` // baseline first, then time order
	Designs       []Design     `json:"designs"`
	Comparisons   []Comparison `json:"comparisons"` // per non-baseline arm, per metric, per stat
	Decomposition []Component  `json:"decomposition,omitempty"`
	Warnings      []Warning    `json:"warnings"`
}

// Warning is one diagnostic, as data: the pipeline's one warning type
// (Code, Arm, Metric, Message and Values are set here; the caller adds the
// phase).
type Warning = diag.Warning

// ArmSummary describes one arm: every metric's point values and CIs.
type ArmSummary struct {
	Arm      string      `json:"arm"`
	Baseline bool        `json:"baseline"`
	Units    int         `json:"units"`    // input units (blocks or profiles)
	Profiles int         `json:"profiles"` // distinct profiles among them
	Steps    int         `json:"steps"`    // kept steps over all units
	Level    string      `json:"level"`    // what one resampled unit is
	N        int         `json:"n"`        // resampled units: the ladder's n
	Method   string      `json:"method"`   // ladder rung of this arm's CIs
	Metrics  []ArmMetric `json:"metrics"`
}

// ArmMetric is one metric of one arm. Point values: Mean = Σ sums / Σ counts
// over units; quantiles of the pooled present steps (Empirical). A nil CI is
// omitted; the reason is in Flags and in Result.Warnings.
type ArmMetric struct {
	Metric      string       `json:"metric"`
	N           int          `json:"n"`       // steps where the metric is present
	Present     float64      `json:"present"` // N / Steps of the arm
	Units       int          `json:"units"`   // units with at least one present step
	Mean        float64      `json:"mean"`
	Median      float64      `json:"median"`
	P90         float64      `json:"p90"`
	P99         float64      `json:"p99"`
	MeanCI      *[2]float64  `json:"mean_ci"`
	MedianCI    *[2]float64  `json:"median_ci"`
	P90CI       *[2]float64  `json:"p90_ci"`
	P99CI       *[2]float64  `json:"p99_ci"`
	Method      string       `json:"method"`
	TailSteps   int          `json:"tail_steps"` // steps with modified z > 10
	Flags       []string     `json:"flags,omitempty"`
	Diagnostics *Diagnostics `json:"diagnostics,omitempty"` // QuantileMetrics only
}

// Diagnostics quantify how far per-step statistics would mislead (docs/statistics.md §7, §4b).
type Diagnostics struct {
	Rho1 float64 `json:"rho1"` // lag-1 autocorrelation of the steps, averaged over units (weights n)
	Tau  float64 `json:"tau"`  // integrated autocorrelation time of log x, pooled over units
	// VIF = se²_cluster / se²_iid of the mean (τ when fewer than 3 units);
	// NEff = N / VIF.
	VIF  float64 `json:"vif"`
	NEff float64 `json:"n_eff"`
	// ICC is the share of step variance between units (one-way ANOVA).
	ICC        float64   `json:"icc"`
	HeadEffect *Estimate `json:"head_effect,omitempty"` // mean of first 5 steps / rest, per block
	Drift      *Trend    `json:"drift,omitempty"`       // log unit mean against start time
}

// Estimate is a point value with an optional CI.
type Estimate struct {
	Value float64     `json:"value"`
	CI    *[2]float64 `json:"ci"`
}

// Trend is an OLS slope on the log scale with its t interval. Change is the
// slope times the span (fractional change across the units or rounds).
type Trend struct {
	Slope  float64    `json:"slope"`
	CI     [2]float64 `json:"ci"`
	Change float64    `json:"change"`
	Per    string     `json:"per"` // "second" or "round"
}

// Design records how one comparison was resampled.
type Design struct {
	Arm           string   `json:"arm"`
	Baseline      string   `json:"baseline"`
	Paired        bool     `json:"paired"`
	Level         string   `json:"level"`
	N             int      `json:"n"` // rounds if paired, else min(units of each arm)
	BaselineUnits int      `json:"baseline_units"`
	ArmUnits      int      `json:"arm_units"`
	Profiles      int      `json:"profiles"`
	Method        string   `json:"method"`
	Resamples     int      `json:"resamples"` // B drawn (raised above the request when docs/statistics.md §3.3 needs it)
	Stream        uint64   `json:"stream"`    // PCG seed2
	Dropped       []string `json:"dropped,omitempty"`
}

// Verdict is what a ratio's interval says of a change: every comparison's
// verdict (arms, history, ranks) is one of the three below. Its string is
// the word the outputs print and the JSON and Parquet hold.
type Verdict string

const (
	// VerdictNone: no between-unit interval, so nothing is said (the
	// analysis document writes it as null).
	VerdictNone Verdict = ""
	// VerdictChanged: the ratio's interval excludes 1.
	VerdictChanged Verdict = "changed"
	// VerdictUnchanged: the ratio's interval includes 1, no significant
	// change ("~", as benchstat prints it).
	VerdictUnchanged Verdict = "~"
)

func (v Verdict) String() string { return string(v) }

// VerdictOf is the verdict of a between-unit interval of a ratio.
func VerdictOf(ci [2]float64) Verdict {
	if ci[0] > 1 || ci[1] < 1 {
		return VerdictChanged
	}
	return VerdictUnchanged
}

// RatioEstimate is a ratio of two statistics, a candidate's over a
// baseline's, with its interval: the part every comparison row shares
// (arms, within-run, history, gate, ranks, verdict's gains). Rows embed
// it, so its JSON fields "ratio" and "ratio_ci" sit where each row lists
// them; how the interval was computed (method, units) and the verdict stay
// in the row, whose JSON places them apart.
type RatioEstimate struct {
	Ratio   *float64    `json:"ratio"`    // nil when the baseline value is 0 or no value exists
	RatioCI *[2]float64 `json:"ratio_ci"` // nil without an interval
}

// Clone is a copy of r that shares no memory with it.
func (r RatioEstimate) Clone() RatioEstimate {
	var out RatioEstimate
	if r.Ratio != nil {
		v := *r.Ratio
		out.Ratio = &v
	}
	if r.RatioCI != nil {
		ci := *r.RatioCI
		out.RatioCI = &ci
	}
	return out
}

// Above reports whether the whole interval lies above bound (with bound =
// 1 + limit: a proven regression beyond limit); false without an interval.
func (r RatioEstimate) Above(bound float64) bool {
	return r.RatioCI != nil && r.RatioCI[0] > bound
}

// IntervalVerdict is what the interval says of a change: VerdictChanged
// when it excludes 1, VerdictUnchanged when it holds 1, VerdictNone
// without an interval. Only a between-unit interval supports a verdict:
// rows ask for it only then.
func (r RatioEstimate) IntervalVerdict() Verdict {
	if r.RatioCI == nil {
		return VerdictNone
	}
	return VerdictOf(*r.RatioCI)
}

// Comparison is one arm against the baseline for one metric and statistic.
// Ratio = arm/baseline, Diff = arm − baseline.
type Comparison struct {
	Metric        string      `json:"metric"`
	Stat          string      `json:"stat"`
	Baseline      string      `json:"baseline"`
	Arm           string      `json:"arm"`
	BaselineValue float64     `json:"baseline_value"`
	ArmValue      float64     `json:"arm_value"`
	RatioEstimate             // nil ratio when the baseline value is 0
	Diff          float64     `json:"diff"`
	DiffCI        *[2]float64 `json:"diff_ci"`
	// Significant: the ratio CI excludes 1 with a between-unit method
	// (never for within-run or none).
	Significant bool     `json:"significant"`
	Verdict     Verdict  `json:"verdict"` // VerdictNone without a between-unit CI
	Method      string   `json:"method"`
	NUnits      int      `json:"n_units"`
	Paired      bool     `json:"paired"`
	Warnings    []string `json:"warnings,omitempty"`
	// JackknifeRatioCI is the jackknife-t cross-check of a bootstrap ratio
	// of means (docs/statistics.md §5); skewed_or_tail_limited flags a disagreement.
	JackknifeRatioCI *[2]float64 `json:"jackknife_ratio_ci,omitempty"`
	// Values per resampled unit, given when there is no between-unit CI (n ≤ 2).
	Units  []UnitValue  `json:"units,omitempty"`
	Rounds []RoundValue `json:"rounds,omitempty"`
	// Profiles holds the per-profile means when the CI is conditional on
	// two profiles that both hold the two arms (docs/statistics.md §4b).
	Profiles []RoundValue `json:"profiles,omitempty"`
	Drift    *Trend       `json:"drift,omitempty"` // per-round log ratio (means of QuantileMetrics, paired, n ≥ 3)
}

// UnitValue is the statistic of one resampled unit of one arm.
type UnitValue struct {
	Arm   string  `json:"arm"`
	Label string  `json:"label"`
	Value float64 `json:"value"`
}

// RoundValue is the statistic of both arms in one round.
type RoundValue struct {
	Round    int      `json:"round"`
	Label    string   `json:"label"`
	Baseline float64  `json:"baseline"`
	Arm      float64  `json:"arm"`
	Ratio    *float64 `json:"ratio"`
}

// Component is one exclusive part of the mean wall difference (docs/statistics.md §6). Share =
// Diff / baseline mean wall; shares sum to the wall ratio − 1.
type Component struct {
	Arm      string      `json:"arm"`
	Baseline string      `json:"baseline"`
	Part     string      `json:"part"`
	Of       string      `json:"of,omitempty"` // for an inner part: the part or total that contains it
	Diff     float64     `json:"diff"`
	DiffCI   *[2]float64 `json:"diff_ci"`
	Share    float64     `json:"share"`
	ShareCI  *[2]float64 `json:"share_ci"`
	Method   string      `json:"method"`
	Warnings []string    `json:"warnings,omitempty"`
}
