// Package stats is the third pipeline stage of nsysphase (nsys → phases →
// stats → export): pure numerics on per-step durations. It imports nothing
// from the rest of the repository.
//
// # Inputs and outputs
//
// Analyze takes one task (one phase): the metric names and the units of
// every arm. A Unit is one replicate of one arm, an NVTX arm block or a whole
// profile, holding its kept steps in time order; Steps[m][t] is metric m at
// step t in ns (int64 values carried exactly in float64), NaN where the step
// lacks the phase. Analyze returns a Result: per arm and metric the point
// mean, median, p90 and p99 with CIs; per non-baseline arm, metric and
// statistic the ratio and difference to the baseline with CIs; optionally
// the decomposition of the mean wall difference into exclusive parts; and
// warnings as data (codes in types.go, docs/statistics.md §7). Summarize gives
// plain summaries without CIs.
//
// # Method (docs/statistics.md)
//
// The unit of replication is the block or the profile, never the step:
// steps within a block are autocorrelated and share its effects. Units are
// sorted by (Start, ID). With three or more profiles the profile is the unit;
// with fewer the blocks inside them are, and the result carries
// conditional_on_profiles. When the arms alternate (or are randomised within
// rounds), round k pairs the k-th unit of each arm and one count vector
// resamples both arms (paired); otherwise each arm is resampled on its own
// (stratified). A resample is a count vector c over units; means are
// Σc·S/Σc·n from per-unit sums, and quantiles are weighted quantiles of the
// arm's steps, sorted once, with weights c of each step's unit.
//
// The interval is the expanded percentile (Hesterberg) over B resamples
// (default 9999, at least 1999; raised when fewer than 10 replicates would
// lie beyond an endpoint), on the log scale for ratios. The ladder on n, the
// number of resampled units (rounds if paired, else the smaller arm): n ≥ 8
// bootstrap (a mean's CI hulled with the jackknife-t's); 3 ≤ n ≤ 7 cluster
// jackknife-t for means and medians only (a mean's widened by √(n/(n−1)));
// n ≤ 2 no between-unit CI, but a within-run CI over contiguous batches of
// each run, labelled within-run-batch with no_replication and
// ci_excludes_run_to_run_variance, and never a significance verdict.
// p90/p99 CIs need n ≥ 8 and N·(1−p) ≥ 10 steps in each arm.
//
// Mean CIs are computed for every metric. Median CIs, p90/p99 CIs (with
// Options.Quantiles) and the per-step diagnostics are computed for
// Options.QuantileMetrics only (default metric 0), because quantile
// resampling is the expensive part.
//
// # One run per side: history and within-run
//
// CompareHistory (history.go, docs/statistics.md §11) compares candidate
// runs with earlier runs of the baseline: one statistic per run (RunStatistic),
// and the t prediction interval c̄ − ȳ ± t_{n−1}·s·√(1/m + 1/n) on the log
// scale; the run stays the unit. CompareWithinRun (withinrun.go, §12)
// compares two single runs by the stationary bootstrap over their steps,
// block length from OptimalBlockLength (Politis–White); it leaves out
// run-to-run variance and always carries ci_excludes_run_to_run_variance.
//
// # Quantile definition
//
// Every quantile here is stat.Quantile(p, stat.Empirical, sorted, w) from
// gonum: the lowest value whose cumulative weight reaches p·Σw. With even n
// the median is the lower median. This is not numpy's default (Hyndman–Fan
// type 7, linear interpolation); QuantileType7 exists only to compare with
// notebooks and is used by nothing in nsysphase.
//
// # NaN, zeros and errors
//
// NaN marks a step without the phase: it is left out for that metric and the
// present fraction is reported. Negative or infinite durations, B < 1999,
// duplicate units and malformed shapes are errors. A zero baseline makes the
// ratio nil (undefined); the difference is still reported.
//
// # Determinism
//
// Results are byte-identical (as JSON) for equal inputs and seed,
// regardless of GOMAXPROCS, goroutine scheduling, map order or the order of
// the input units. Each task draws from its own PCG stream: seed1 is the
// user's seed, seed2 is FNV-1a-64 of "key\x00metrics\x00arm\x00NAME" for an
// arm summary or "key\x00metrics\x00cmp\x00LO\x00HI" for a comparison
// (arm names sorted, so swapping baseline and arm draws the same resamples
// and gives exactly negated log-ratio and difference replicates). A unit
// index is the high word of bits.Mul64(pcg.Uint64(), n), independent of
// any Go version's IntN. Work runs in parallel across arms, comparisons and
// metrics, each writing its own slot; floating-point sums run in a fixed
// order.
//
// Speed never changes a number. A statistic of a resample is a function of
// its count vector, so one-side and paired plans compute it once per
// distinct count vector and weigh it by its multiplicity in the CI; the
// running sums over groups are memoized per distinct prefix with the same
// operations in the same order (memo.go); CI endpoints come from an exact
// selection among the replicates beyond sampled bounds, and log-ratio CIs
// take logarithms only near the endpoints (interval.go). Weighted
// quantiles compare integer cumulative counts (exact in float64). A metric
// that is one small non-negative integer in every step has every resampled
// mean exactly equal to it (every sum of such terms is exact), so its
// replicates are not summed. Point summaries select by bucket counts and
// order the quantile metrics by a radix sort on the value bits. Where
// equal values could differ in bits (−0 and +0) the plain computation runs
// instead.
package stats
