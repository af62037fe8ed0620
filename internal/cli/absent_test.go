package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestAbsentIsNotZero: an export recorded without a kernel table (here the
// bundled eager/graph export with CUPTI_ACTIVITY_KIND_KERNEL dropped) shows
// every kernel and GPU metric as not measured — null in JSON, CSV and
// Parquet, "—" in text, Markdown and HTML — never as a measured 0, and the
// wait sentence does not claim the GPU ran nothing.
func TestAbsentIsNotZero(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := copyFixture(t, fixture.Get(t, "eager_graph_small").SQLite(t), dir, "nokernels.sqlite")
	c, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlitex.ExecuteScript(c, `DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;`, nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := cli.Main(append(args, "--resamples", "1999", path), &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		return stdout.String()
	}
	gpu := []string{"gpu_busy_ns", "kernel_sum_ns", "kernels", "proj_ns", "gpu_ops", "sync_no_gpu_ns", "gpu_idle_ns"}

	var doc struct {
		Summary []struct {
			Phase   string                     `json:"phase"`
			Metrics map[string]json.RawMessage `json:"metrics"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(run("analyze", "--format", "json")), &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Summary {
		for _, m := range gpu {
			if string(r.Metrics[m]) != "null" {
				t.Errorf("json %s %s = %s, want null", r.Phase, m, r.Metrics[m])
			}
		}
		if string(r.Metrics["wall_ns"]) == "null" || string(r.Metrics["launch_ns"]) == "null" {
			t.Errorf("json %s: host metrics are null, they were measured", r.Phase)
		}
	}

	text := run("analyze")
	if strings.Contains(text, "no GPU work recorded") {
		t.Errorf("text claims no GPU work was recorded:\n%s", text)
	}
	md := run("analyze", "--format", "markdown")
	for name, out := range map[string]string{"text": text, "markdown": md} {
		rows := 0
		for _, l := range strings.Split(out, "\n") {
			if !strings.Contains(l, "collector_step") || !(strings.HasPrefix(l, "eager") || strings.HasPrefix(l, "graph") || strings.HasPrefix(l, "| eager") || strings.HasPrefix(l, "| graph")) {
				continue
			}
			// The breakdown row of the step: its last cell is gpu_busy.
			cells := strings.FieldsFunc(l, func(r rune) bool { return r == '|' || r == ' ' })
			if len(cells) > 8 {
				rows++
				if last := cells[len(cells)-1]; last != "—" {
					t.Errorf("%s: gpu_busy cell %q, want —: %s", name, last, l)
				}
			}
		}
		if rows == 0 {
			t.Errorf("%s: no breakdown row of the step found:\n%s", name, out)
		}
	}
	html := run("analyze", "--format", "html")
	if !strings.Contains(html, "—") {
		t.Error("html shows no — for the unmeasured GPU metrics")
	}

	csv := run("analyze", "--format", "csv")
	for _, l := range strings.Split(csv, "\n") {
		if strings.Contains(l, ",gpu_busy_ns,") && !strings.Contains(l, ",,,,") {
			t.Errorf("csv row of gpu_busy_ns has values: %s", l)
		}
	}

	out := filepath.Join(dir, "ds")
	run("analyze", "--quiet", "--out", out)
	tb, err := export.ReadParquet(filepath.Join(out, "phase_instances.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	col := tb.ColumnIndex("gpu_busy_ns")
	if col < 0 || tb.Len() == 0 {
		t.Fatalf("phase_instances: no gpu_busy_ns column or no rows")
	}
	for r := range tb.Len() {
		if _, ok := tb.Int64(r, col); ok {
			t.Fatalf("phase_instances row %d: gpu_busy_ns is not null", r)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
