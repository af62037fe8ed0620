package metricproof

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

const step = "collector_step"

func run(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Main(args, &stdout, &stderr); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
	}
	return stdout.String()
}

// summaryMeans is the JSON summary's mean of max_kernel_ns per arm and
// phase (NaN for a null metric).
func summaryMeans(t *testing.T, out string) map[[2]string]float64 {
	t.Helper()
	var doc struct {
		Summary []struct {
			Arm     string                     `json:"arm"`
			Phase   string                     `json:"phase"`
			Metrics map[string]json.RawMessage `json:"metrics"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	means := map[[2]string]float64{}
	for _, r := range doc.Summary {
		raw, ok := r.Metrics[maxKernel.Name()]
		if !ok {
			t.Fatalf("JSON summary %s/%s has no %s", r.Arm, r.Phase, maxKernel.Name())
		}
		var s *struct {
			Mean float64 `json:"mean"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		means[[2]string{r.Arm, r.Phase}] = math.NaN()
		if s != nil {
			means[[2]string{r.Arm, r.Phase}] = s.Mean
		}
	}
	return means
}

// TestDeclaredMetric: max_kernel_ns, declared and measured in this
// package's two other files, is a phase_instances column in Parquet with
// values that agree with the built-in kernel metrics and the export's
// longest kernel, its means in the JSON summary are those of the Parquet
// rows (and the same read back with --from), the --wide table shows them,
// and it is null in the (unannotated) row and without a kernel table.
func TestDeclaredMetric(t *testing.T) {
	path := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	run(t, "analyze", "--quiet", "--no-stats", "--out", dir, path)
	tab, err := export.ReadParquet(filepath.Join(dir, "phase_instances.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int {
		i := tab.ColumnIndex(name)
		if i < 0 {
			t.Fatalf("phase_instances has no column %s", name)
		}
		return i
	}
	mk, kern, ksum := col(maxKernel.Name()), col("kernels"), col("kernel_sum_ns")
	phase, arm, isStep, warm := col("phase"), col("arm"), col("is_step"), col("warmup")
	if u := tab.Column(mk).Unit; u != phases.UnitNs {
		t.Errorf("%s unit %q, want ns", maxKernel.Name(), u)
	}
	var longest int64
	stepSum, stepN := map[string]float64{}, map[string]int{}
	several := 0
	for r := range tab.Len() {
		ph, _ := tab.Value(r, phase).AsString()
		v, ok := tab.Int64(r, mk)
		if ph == phases.Unannotated {
			if ok {
				t.Errorf("row %d (unannotated): %s = %d, want null (a maximum does not split)", r, maxKernel.Name(), v)
			}
			continue
		}
		n, _ := tab.Int64(r, kern)
		sum, _ := tab.Int64(r, ksum)
		switch {
		case !ok:
			t.Errorf("row %d %s: %s is null", r, ph, maxKernel.Name())
		case n == 0 && v != 0, n == 1 && v != sum, n > 1 && (v*n < sum || v > sum):
			t.Errorf("row %d %s: %s = %d with %d kernels summing to %d", r, ph, maxKernel.Name(), v, n, sum)
		}
		if n > 1 && v < sum {
			several++
		}
		longest = max(longest, v)
		if st, _ := tab.Value(r, isStep).AsBool(); st {
			if w, _ := tab.Value(r, warm).AsBool(); !w {
				a, _ := tab.Value(r, arm).AsString()
				stepSum[a] += float64(v)
				stepN[a]++
			}
		}
	}
	if several == 0 {
		t.Error("no instance with several kernels of different lengths: the test shows nothing")
	}
	if want := longestKernelInExport(t, path); longest != want {
		t.Errorf("longest %s over the instances %d, the export's longest kernel %d", maxKernel.Name(), longest, want)
	}

	means := summaryMeans(t, run(t, "analyze", "--format", "json", "--no-stats", path))
	if len(stepN) != 2 {
		t.Fatalf("step rows of %d arms, want 2", len(stepN))
	}
	for a, n := range stepN {
		want := stepSum[a] / float64(n)
		if got := means[[2]string{a, step}]; math.Abs(got-want) > 1e-6*want {
			t.Errorf("JSON mean %s of %s/%s = %v, the Parquet rows' mean %v", maxKernel.Name(), a, step, got, want)
		}
	}
	for k, v := range means {
		if (k[1] == phases.Unannotated) != math.IsNaN(v) {
			t.Errorf("JSON %s/%s: %s mean %v", k[0], k[1], maxKernel.Name(), v)
		}
	}
	// The dataset reads back (--from) with the metric's column.
	back := summaryMeans(t, run(t, "analyze", "--format", "json", "--no-stats", "--from", dir))
	if len(back) != len(means) || len(means) < 2 {
		t.Errorf("--from: %d summary rows, from the export %d", len(back), len(means))
	}
	for k, v := range back {
		if w, ok := means[k]; !ok || !(v == w || math.IsNaN(v) && math.IsNaN(w)) {
			t.Errorf("--from: JSON %s/%s %s mean %v, from the export %v", k[0], k[1], maxKernel.Name(), v, w)
		}
	}

	wide := run(t, "analyze", "--wide", "--no-stats", path)
	if !strings.Contains(wide, "host_syncs  max_kernel µs") {
		t.Fatalf("--wide has no max_kernel µs column after host_syncs:\n%s", wide)
	}
	for a := range stepN {
		cell := ""
		for _, l := range strings.Split(wide, "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[0] == a && f[1] == step {
				cell = f[len(f)-1]
			}
		}
		got, err := strconv.ParseFloat(cell, 64)
		if want := means[[2]string{a, step}] / 1e3; err != nil || math.Abs(got-want) > 0.05 {
			t.Errorf("--wide %s/%s: max_kernel cell %q, want %.1f", a, step, cell, want)
		}
	}

	// Without a kernel table the metric is null, not 0.
	nok := withoutKernels(t, path)
	for k, v := range summaryMeans(t, run(t, "analyze", "--format", "json", "--no-stats", nok)) {
		if !math.IsNaN(v) {
			t.Errorf("no kernel table: JSON %s/%s %s = %v, want null", k[0], k[1], maxKernel.Name(), v)
		}
	}
}

// longestKernelInExport reads the export's longest kernel straight from
// its kernel table.
func longestKernelInExport(t *testing.T, path string) int64 {
	t.Helper()
	f, err := nsys.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var longest int64
	for k, err := range f.Kernels() {
		if err != nil {
			t.Fatal(err)
		}
		longest = max(longest, k.End-k.Start)
	}
	return longest
}

// withoutKernels is a copy of the export with its kernel table dropped.
func withoutKernels(t *testing.T, path string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "nokernels.sqlite")
	src, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := sqlite.OpenConn(out, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := sqlitex.ExecuteScript(c, `DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;`, nil); err != nil {
		t.Fatal(err)
	}
	return out
}
