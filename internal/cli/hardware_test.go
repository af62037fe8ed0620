package cli_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// withGPUMetrics is a copy of a bundled export with GPU metrics added in
// the exporter's schema: "SMs Active" sampled on every GPU, "Tensor
// Active" defined but never sampled.
func withGPUMetrics(t *testing.T) string {
	t.Helper()
	src := fixture.Get(t, "eager_graph_small").SQLite(t)
	dst := filepath.Join(t.TempDir(), "metrics.sqlite")
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
	conn, err := sqlite.OpenConn(dst, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var lo, hi int64
	err = sqlitex.ExecuteTransient(conn, `SELECT min(start), max("end") FROM CUPTI_ACTIVITY_KIND_RUNTIME`, &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
		lo, hi = s.ColumnInt64(0), s.ColumnInt64(1)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	script := `CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
CREATE TABLE GPU_METRICS (rawTimestamp INTEGER NOT NULL, timestamp INTEGER NOT NULL, typeId INTEGER NOT NULL, metricId INTEGER NOT NULL, value INTEGER NOT NULL);`
	if err := sqlitex.ExecuteScript(conn, script, nil); err != nil {
		t.Fatal(err)
	}
	if err := sqlitex.ExecuteTransient(conn, `BEGIN`, nil); err != nil {
		t.Fatal(err)
	}
	const source = int64(281479271677952)
	for g := int64(0); g < 8; g++ {
		for id, name := range []string{"SMs Active [Throughput %]", "Tensor Active [Throughput %]"} {
			if err := sqlitex.Execute(conn, `INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?, ?, '', ?, ?)`, &sqlitex.ExecOptions{Args: []any{source | g, source, id, name}}); err != nil {
				t.Fatal(err)
			}
		}
		k := int64(0)
		for ts := lo - 100_000; ts <= hi+100_000; ts += 50_000 {
			k++
			if err := sqlitex.Execute(conn, `INSERT INTO GPU_METRICS VALUES (?, ?, ?, 0, ?)`, &sqlitex.ExecOptions{Args: []any{ts, ts, source | g, 20 + k%60}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := sqlitex.ExecuteTransient(conn, `COMMIT`, nil); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestAbsentGPUMetricIsNullEverywhere: a metric the export defines but
// never sampled is null in JSON and Parquet and "—" in text, never 0;
// the sampled one has values.
func TestAbsentGPUMetricIsNullEverywhere(t *testing.T) {
	path := withGPUMetrics(t)
	stdout, stderr, code := run(t, "analyze", path, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Hardware struct {
			Rows []struct {
				Phase  string   `json:"phase"`
				Metric string   `json:"metric"`
				Mean   *float64 `json:"mean"`
			} `json:"gpu_metric_rows"`
		} `json:"hardware"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	sampled := 0
	for _, r := range doc.Hardware.Rows {
		switch {
		case r.Metric == "Tensor Active" && r.Mean != nil:
			t.Fatalf("JSON: never-sampled metric has mean %v in %q", *r.Mean, r.Phase)
		case r.Metric == "SMs Active" && r.Mean != nil:
			if *r.Mean < 20 || *r.Mean > 79 {
				t.Fatalf("SMs Active mean %v outside the sampled values", *r.Mean)
			}
			sampled++
		}
	}
	if sampled == 0 {
		t.Fatal("JSON: no SMs Active mean")
	}
	stdout, stderr, code = run(t, "analyze", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	i := strings.Index(stdout, "Hardware:")
	if i < 0 {
		t.Fatalf("no hardware table:\n%s", stdout)
	}
	rows := strings.Split(stdout[i:], "\n")
	if len(rows) < 5 || !strings.Contains(rows[1], "Tensor %") || !strings.HasSuffix(strings.TrimSpace(rows[3]), "—") {
		t.Fatalf("text: Tensor Active is not — :\n%s", strings.Join(rows[:min(6, len(rows))], "\n"))
	}
	dir := t.TempDir()
	if _, stderr, code = run(t, "analyze", path, "--out", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	tab, err := export.ReadParquet(filepath.Join(dir, "gpu_metrics.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	mc, vc := tab.ColumnIndex("metric"), tab.ColumnIndex("mean")
	nulls := 0
	for r := range tab.Len() {
		m, _ := tab.Value(r, mc).AsString()
		if m == "Tensor Active" {
			if !tab.Value(r, vc).IsNull() {
				t.Fatalf("Parquet: Tensor Active mean %v", tab.Value(r, vc))
			}
			nulls++
		}
	}
	if nulls == 0 {
		t.Fatal("Parquet: no Tensor Active rows")
	}
}
