package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/dataset"
	"github.com/nsysphase/nsysphase/internal/report"
)

// schemaTable is one documented table and the command that writes it.
type schemaTable struct {
	t  *export.Table
	by string
}

// schemaTables are the tables nsysphase writes, in the order docs/schema.md
// lists them. A command that adds a table adds it here (analyze's through
// dataset.Tables), and TestGenDocs then asks for docs/schema.md to be
// regenerated.
func schemaTables() []schemaTable {
	var out []schemaTable
	for _, t := range dataset.Tables(&analysis.Doc{}) {
		out = append(out, schemaTable{t, "`nsysphase analyze --out DIR` (Parquet; Arrow IPC with `--format arrow`)"})
	}
	out = append(out, schemaTable{dataset.StragglersTable(&analysis.Doc{Ranks: &analysis.RanksSection{}}), "`nsysphase analyze --out DIR` when the inputs hold two or more ranks of one job (Parquet; Arrow IPC with `--format arrow`)"})
	out = append(out, schemaTable{dataset.RankCollectivesTable(&analysis.Doc{Ranks: &analysis.RanksSection{}}), "`nsysphase analyze --out DIR` when the inputs hold two or more ranks of one job (Parquet; Arrow IPC with `--format arrow`)"})
	hw := &analysis.Doc{Hardware: &analysis.HardwareSection{}}
	for _, t := range []*export.Table{dataset.GPUMetricsTable(hw), dataset.GPUMetricInstancesTable(hw)} {
		out = append(out, schemaTable{t, "`nsysphase analyze --out DIR` when the inputs recorded GPU metrics (`nsys profile --gpu-metrics-devices`; Parquet, Arrow IPC with `--format arrow`)"})
	}
	out = append(out, schemaTable{dataset.HostHotspotsTable(hw), "`nsysphase analyze --out DIR` when the inputs recorded CPU samples (`nsys profile --sample=cpu`; Parquet, Arrow IPC with `--format arrow`)"})
	out = append(out, schemaTable{(&analysis.Inventory{}).Table(), "`nsysphase inventory --format csv` (`--format json`: `{\"items\": [...]}`); see [inventory.md](inventory.md)"})
	out = append(out, schemaTable{report.BlockersTable(nil), "`nsysphase boundary --format csv|parquet|arrow`"})
	out = append(out, schemaTable{report.RangesTable(nil), "`nsysphase ranges --format parquet|arrow|markdown` (csv and json print the vendor's columns)"})
	return out
}

// columnNote documents a column whose definition carries no Doc (or no
// unit): its meaning, unit and what a null means. The table definitions stay
// the source of truth: a note for a column that no longer exists, or a column
// with neither Doc nor note, fails TestSchemaDocumentsEveryColumn.
type columnNote struct {
	Doc  string
	Unit string
	Null string
}

const (
	nullCI      = "no CI: statistics off (--no-stats), or the method for this many units gives none for this statistic (warnings say which)"
	metricUnit  = "the metric's"
	nullNoRatio = "the baseline value is 0, so no ratio exists"
)

var columnNotes = map[string]columnNote{
	"phase_summary.arm":          {Doc: "arm label, as in phase_instances.arm"},
	"phase_summary.phase":        {Doc: "phase name; the step's own name for the whole step"},
	"phase_summary.metric":       {Doc: "metric column of phase_instances (wall_ns, cpu_other_ns, …)"},
	"phase_summary.method":       {Doc: "CI method: bootstrap-expanded-percentile (≥ 8 units), cluster-jackknife-t (3–7), within-run-batch (1–2: steps in batches, run-to-run variance left out), none (--no-stats)"},
	"phase_summary.mean":         {Doc: "mean per step instance with the phase present", Unit: metricUnit, Null: "not measured: the metric's source table is absent from the inputs, or it does not split into the (unannotated) row's parts"},
	"phase_summary.mean_ci_lo":   {Doc: "lower end of the CI of the mean", Unit: metricUnit, Null: nullCI},
	"phase_summary.mean_ci_hi":   {Doc: "upper end of the CI of the mean", Unit: metricUnit, Null: nullCI},
	"phase_summary.median":       {Doc: "median per step instance (empirical: the lower median)", Unit: metricUnit, Null: "not measured: the metric's source table is absent from the inputs, or it does not split into the (unannotated) row's parts"},
	"phase_summary.median_ci_lo": {Doc: "lower end of the CI of the median", Unit: metricUnit, Null: nullCI},
	"phase_summary.median_ci_hi": {Doc: "upper end of the CI of the median", Unit: metricUnit, Null: nullCI},
	"phase_summary.p90":          {Doc: "90th percentile per step instance (empirical)", Unit: metricUnit, Null: "not measured: the metric's source table is absent from the inputs, or it does not split into the (unannotated) row's parts"},
	"phase_summary.p90_ci_lo":    {Doc: "lower end of the CI of p90 (wall_ns with --quantiles only)", Unit: metricUnit, Null: nullCI + "; always for metrics other than wall_ns"},
	"phase_summary.p90_ci_hi":    {Doc: "upper end of the CI of p90", Unit: metricUnit, Null: nullCI + "; always for metrics other than wall_ns"},
	"phase_summary.p99":          {Doc: "99th percentile per step instance (empirical)", Unit: metricUnit, Null: "not measured: the metric's source table is absent from the inputs, or it does not split into the (unannotated) row's parts"},
	"phase_summary.p99_ci_lo":    {Doc: "lower end of the CI of p99 (wall_ns with --quantiles only)", Unit: metricUnit, Null: nullCI + "; always for metrics other than wall_ns"},
	"phase_summary.p99_ci_hi":    {Doc: "upper end of the CI of p99", Unit: metricUnit, Null: nullCI + "; always for metrics other than wall_ns"},

	"gpu_metrics.mean":          {Unit: metricUnit},
	"gpu_metrics.mean_ci_lo":    {Unit: metricUnit},
	"gpu_metrics.mean_ci_hi":    {Unit: metricUnit},
	"gpu_metric_instances.mean": {Unit: metricUnit},

	"comparisons.phase":          {Doc: "phase name (or the step's)"},
	"comparisons.metric":         {Doc: "metric compared (a phase_instances metric column)"},
	"comparisons.stat":           {Doc: "statistic compared: mean, median, p90 or p99"},
	"comparisons.baseline":       {Doc: "baseline arm (--baseline, default the arm of the earliest block)"},
	"comparisons.arm":            {Doc: "arm compared with the baseline"},
	"comparisons.baseline_value": {Doc: "the statistic in the baseline arm", Unit: metricUnit},
	"comparisons.arm_value":      {Doc: "the statistic in the arm", Unit: metricUnit},
	"comparisons.ratio":          {Doc: "arm_value / baseline_value; below 1 the arm is lower (faster for times)", Null: nullNoRatio},
	"comparisons.ratio_ci_lo":    {Doc: "lower end of the CI of the ratio", Null: nullCI + ", or " + nullNoRatio},
	"comparisons.ratio_ci_hi":    {Doc: "upper end of the CI of the ratio", Null: nullCI + ", or " + nullNoRatio},
	"comparisons.diff":           {Doc: "arm_value − baseline_value", Unit: metricUnit},
	"comparisons.diff_ci_lo":     {Doc: "lower end of the CI of the difference", Unit: metricUnit, Null: nullCI},
	"comparisons.diff_ci_hi":     {Doc: "upper end of the CI of the difference", Unit: metricUnit, Null: nullCI},
	"comparisons.method":         {Doc: "CI method (see phase_summary.method); paired when the arms' blocks interleave"},
	"comparisons.n_units":        {Doc: "resampled units (blocks, profiles or rounds of paired blocks) behind the CI"},
	"comparisons.warnings":       {Doc: "comma-separated warning codes of this comparison (details in the JSON warnings); empty when none"},

	"decomposition.phase":         {Doc: "phase name (or the step's)"},
	"decomposition.baseline":      {Doc: "baseline arm"},
	"decomposition.arm":           {Doc: "arm compared with the baseline"},
	"decomposition.component":     {Doc: "one of the six exclusive parts of wall: cpu_other_ns, launch_ns, sync_ns, memcpy_api_ns, alloc_ns, other_api_ns; the six diff_ns of a phase and arm sum to the difference of mean wall"},
	"decomposition.diff_ns":       {Doc: "difference of the part's mean per step instance, arm − baseline"},
	"decomposition.diff_ci_lo_ns": {Doc: "lower end of the CI of diff_ns", Null: nullCI},
	"decomposition.diff_ci_hi_ns": {Doc: "upper end of the CI of diff_ns", Null: nullCI},
	"decomposition.share_ci_lo":   {Doc: "lower end of the CI of share", Null: nullCI},
	"decomposition.share_ci_hi":   {Doc: "upper end of the CI of share", Null: nullCI},
	"decomposition.method":        {Doc: "CI method (see phase_summary.method)"},

	"provenance.file":                         {Doc: "export path as given on the command line"},
	"provenance.nsys_version":                 {Doc: "Nsight Systems version that exported the file (META_DATA_EXPORT)"},
	"provenance.export_schema_version":        {Doc: "SQLite export schema version (META_DATA_EXPORT)"},
	"provenance.gpu":                          {Doc: "GPU names (TARGET_INFO_GPU), ';'-separated; empty when the export lists none"},
	"provenance.gpu_uuid":                     {Doc: "GPU UUIDs in the order of gpu, ';'-separated"},
	"provenance.driver_version":               {Doc: "NVIDIA driver version (TARGET_INFO_SYSTEM_ENV); empty when not recorded"},
	"provenance.cuda_driver_version":          {Doc: "CUDA version of the driver, e.g. 13.0; empty when not recorded"},
	"provenance.cuda_graph_trace_mode":        {Doc: "--cuda-graph-trace of the capture: node, graph, or empty when unknown"},
	"provenance.cross_process_gpu_overlap_ns": {Doc: "time GPU work of two or more processes ran at once on one GPU (the trace's only reliable sign of CUDA MPS)"},
	"items.arm":                               {Doc: "arm label, as in phase_instances.arm"},
	"items.phase":                             {Doc: "phase (or the step, for calls outside every phase) the calls ran in"},
	"items.kind":                              {Doc: "interaction: scalar_read, dynamic_shape, pageable_h2d, sync_copy, d2h, stream_sync, event_sync, device_sync, alloc or free (docs/inventory.md)"},
	"items.api":                               {Doc: "CUDA API base name, e.g. cudaMemcpyAsync"},
	"items.mean_ns":                           {Doc: "total_ns / calls"},
	"provenance.mps_processes_seen":           {Doc: "processes named like an MPS server or client in PROCESSES, as 'pid name', ';'-separated (a daemon of an earlier run can show up)"},
}

// parquetType is how each column type is stored.
func parquetType(t export.Type) string {
	switch t {
	case export.TypeInt64:
		return "INT64"
	case export.TypeFloat64:
		return "DOUBLE"
	case export.TypeString:
		return "STRING (UTF-8, dictionary-encoded)"
	case export.TypeBool:
		return "BOOLEAN"
	}
	return t.String()
}

// columnDoc returns the meaning, unit and null meaning of a column.
func columnDoc(table string, c export.Column) (meaning, unit, null string) {
	note := columnNotes[table+"."+c.Name]
	meaning, unit, null = c.Doc, c.Unit, ""
	if meaning == "" {
		meaning = note.Doc
	}
	if unit == "" {
		unit = note.Unit
	}
	// A "…; null …" clause of the Doc says what a null means.
	if i := strings.Index(meaning, "; null"); i >= 0 {
		meaning, null = meaning[:i], meaning[i+2:]
	}
	if note.Null != "" {
		null = note.Null
	}
	if !c.Nullable {
		null = "never null"
	}
	return meaning, unit, null
}

// SchemaMarkdown is docs/schema.md, generated from the table definitions.
func SchemaMarkdown() string {
	var b strings.Builder
	tables := schemaTables()
	fmt.Fprintf(&b, "# nsysphase output schema (version %s)\n\n", analysis.SchemaVersion)
	b.WriteString("Generated from the table definitions by `nsysphase gendocs --schema docs/schema.md`; do not edit.\n")
	b.WriteString("Regenerate with `go test ./internal/cli -run TestGenDocs -update`.\n\n")
	b.WriteString(`The tables of ` + "`nsysphase analyze`" + ` are written by ` + "`--out DIR`" + ` as ` + "`DIR/<table>.parquet`" + ` (Arrow IPC
` + "`DIR/<table>.arrow`" + ` with ` + "`--format arrow`" + `), or with ` + "`--partition`" + ` as a Hive-partitioned dataset
` + "`DIR/<table>/arm=<arm>/file=<file>/part.parquet`" + ` for tables that hold an ` + "`arm`" + ` or ` + "`file`" + ` column (the key
columns then live in the directory names, as Hive, Spark, pyarrow and DuckDB expect). Durations, bytes and
counts are int64 end to end; a null means "not measured" or "not applicable", never zero.

The schema version (` + "`nsysphase.schema_version`" + `) follows the rule: the minor grows when a column or table is
added, the major when one changes meaning or goes away.

## File metadata

Each Parquet and Arrow file carries key-value metadata (pyarrow: ` + "`pq.read_schema(path).metadata`" + `; DuckDB:
` + "`parquet_kv_metadata(path)`" + `); each column carries its unit and meaning as field metadata
(` + "`nsysphase.unit`" + `, ` + "`nsysphase.doc`" + `). DuckDB shows neither field metadata nor comments
(` + "`DESCRIBE`" + ` and ` + "`parquet_schema()`" + ` print names and types), so the names carry the units:
durations end in ` + "`_ns`" + `, sizes in ` + "`_bytes`" + `, other integer measures are counts, and the
per-metric tables (` + "`phase_summary`" + `, ` + "`comparisons`" + `) say each row's unit in ` + "`metric_unit`" + `.

| key | value |
|---|---|
| ` + "`" + export.MetaSchemaVersion + "`" + ` | schema version of this document |
| ` + "`" + export.MetaVersion + "`" + ` | nsysphase version that wrote the file |
| ` + "`" + export.MetaInputs + "`" + ` | JSON array of ` + "`{path, sha256}`" + `, one per input export |
| ` + "`" + export.MetaNsysVersion + "`" + ` | Nsight Systems versions of the inputs, ';'-separated |
| ` + "`" + export.MetaGPU + "`" + ` | GPU names and UUIDs of the inputs, ';'-separated |
| ` + "`" + export.MetaTable + "`" + `, ` + "`" + export.MetaTableDoc + "`" + ` | table name and description |
| ` + "`" + export.MetaPartitionKeys + "`" + ` | partitioned files: JSON description of the key columns held in the path |
| ` + "`" + dataset.MetaContext + "`" + ` | JSON the rows cannot carry (block start times, exclusions, segmentation warnings, each input's provenance and manifest): ` + "`analyze --from`" + ` uses it to reproduce the analysis |

`)
	b.WriteString("## Tables\n\n")
	for _, st := range tables {
		fmt.Fprintf(&b, "- [`%s`](#%s): %s\n", st.t.Name, st.t.Name, st.t.Doc)
	}
	for _, st := range tables {
		t := st.t
		fmt.Fprintf(&b, "\n## %s\n\n%s. Written by %s.\n\n", t.Name, upperFirst(t.Doc), st.by)
		b.WriteString("| column | type | unit | meaning | null means |\n|---|---|---|---|---|\n")
		for _, c := range t.Columns() {
			meaning, unit, null := columnDoc(t.Name, c)
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", c.Name, parquetType(c.Type), mdCell(unit), mdCell(meaning), mdCell(null))
		}
	}
	b.WriteString("\n" + report.SchemaNotes)
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func mdCell(s string) string {
	if s == "" {
		return ""
	}
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

// SchemaNoteKeys lists the "table.column" keys of the column notes, sorted.
func SchemaNoteKeys() []string {
	keys := make([]string, 0, len(columnNotes))
	for k := range columnNotes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
