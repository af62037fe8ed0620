package dataset

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsysphase/nsysphase/export"
)

// TestDuckDBShowsUnits reads an analyze dataset with DuckDB (interop/read.mjs,
// whose columns are DuckDB's DESCRIBE): DuckDB shows neither Parquet field
// metadata nor comments, so the names carry the units (…_ns, …_bytes) and
// the per-metric tables carry a metric_unit column DuckDB reads as written.
func TestDuckDBShowsUnits(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found; the DuckDB interop test needs Node.js")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "interop", "read.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "@duckdb", "node-api")); err != nil {
		t.Skip("interop/node_modules missing; run: make interop")
	}
	d := analyseFixture(t, "eager_graph_small", statsOptions(1))
	dir := writeDataset(t, d, true, false)
	for _, tab := range Tables(d) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, err := exec.CommandContext(ctx, node, script, filepath.Join(dir, tab.Name+".parquet")).Output()
		cancel()
		if err != nil {
			t.Fatalf("read.mjs %s: %v", tab.Name, err)
		}
		var rep struct {
			Columns []struct {
				Name string `json:"name"`
				Min  string `json:"min"`
				Max  string `json:"max"`
			} `json:"columns"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Columns) != tab.NumColumns() {
			t.Fatalf("%s: DuckDB shows %d columns, want %d", tab.Name, len(rep.Columns), tab.NumColumns())
		}
		for i, c := range rep.Columns {
			def := tab.Column(i)
			switch {
			case c.Name != def.Name:
				t.Errorf("%s column %d: DuckDB shows %q, want %q", tab.Name, i, c.Name, def.Name)
			case c.Name == "unit":
				t.Errorf("%s.unit: say which unit (block_label, metric_unit)", tab.Name)
			case def.Unit == export.UnitNanoseconds && !strings.HasSuffix(c.Name, "_ns"):
				t.Errorf("%s.%s is in ns but DuckDB shows no unit in its name", tab.Name, c.Name)
			case def.Unit == export.UnitBytes && !strings.HasSuffix(c.Name, "_bytes"):
				t.Errorf("%s.%s is in bytes but DuckDB shows no unit in its name", tab.Name, c.Name)
			case c.Name == "metric_unit" && (c.Min != "bytes" || c.Max != "ns"):
				// Every unit appears, in DuckDB order: bytes … ns.
				t.Errorf("%s.metric_unit ranges %q…%q in DuckDB, want bytes…ns", tab.Name, c.Min, c.Max)
			}
		}
		if tab.Name == "phase_summary" || tab.Name == "comparisons" {
			if tab.ColumnIndex("metric_unit") < 0 {
				t.Errorf("%s has values in each metric's unit but no metric_unit column", tab.Name)
			}
		}
	}
}
