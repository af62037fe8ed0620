// Package dataset is the Parquet dataset of an analysis: the tables
// `nsysphase analyze --out` writes from an analysis.Doc, and the reading
// of those directories back into the analysis they came from
// (`analyze --from`, and the history runs of `--history`).
//
// It stands above internal/analysis (it imports it; analysis imports
// nothing of it): the document is computed once, in numbers, by
// analysis.Build, and this package only renders it into tables and reads
// the tables back into the analysis' inputs (one analysis.FileResult per
// export), which analysis.Build turns into the same document again. The
// Doc lends it what the JSON contract does not hold through a few read
// accessors (Store, UnitStarts, RankInputs, HardwareSection.InstanceMeans).
//
// Files, in the order data flows:
//
//   - columns.go: the one column list of phase_instances (derived from
//     the metrics' declarations, phases.MetricInfo), shared by the writer,
//     the --from reader and the schema docs, and the concurrent fill of
//     the biggest table;
//   - tables.go, hardware_tables.go: the Doc's tables (phase_instances,
//     phase_summary, comparisons, decomposition, provenance, stragglers,
//     rank_collectives, gpu_metrics, gpu_metric_instances, host_hotspots);
//   - context.go: the analysis context, what the rows cannot carry (unit
//     starts, exclusions, segmentation warnings, provenance, rank
//     processes), in the Parquet metadata under MetaContext;
//   - from.go: a dataset directory loaded (Load) and the Doc rebuilt from
//     datasets (Build: analyze --from);
//   - history.go: datasets read as history runs (LoadHistory);
//   - warning.go: the warning codes of reading datasets back.
//
// Every loader takes the analysis.Options of the command, as every stage
// does: a given warm-up rule (o.Given("skip-steps")) re-cuts the datasets'
// steps, else each keeps the rule it was written with.
package dataset
