// Package metricproof holds no code of the tool: its tests prove that a
// metric is added in three files. model_test.go declares one
// (phases.Declare: name, unit, sources, additivity, its --wide column),
// attribute_test.go measures it from the GPU ops of an instance, and
// metric_test.go finds it in the JSON, Parquet and --wide outputs of
// analyze, null where its source table is absent and in the (unannotated)
// row, without a line of the tool changed. docs/architecture.md ("Where a
// change goes") walks through the same three steps for a built-in metric.
package metricproof
