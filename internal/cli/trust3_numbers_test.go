package cli_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// editedExport copies a bundled export into a temporary directory, runs
// the SQL statements on the copy and returns its path.
func editedExport(t *testing.T, name string, stmts ...string) string {
	t.Helper()
	src, err := os.Open(fixture.Get(t, name).SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst := filepath.Join(t.TempDir(), name+".sqlite")
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, src); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	conn, err := sqlite.OpenConn(dst, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range stmts {
		if err := sqlitex.ExecuteTransient(conn, s, nil); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if strings.HasPrefix(s, "UPDATE") && conn.Changes() == 0 {
			t.Fatalf("%s changed no row", s)
		}
	}
	return dst
}

// analyzeWarnings runs analyze --no-stats --format json on file and returns
// its warnings as code → messages.
func analyzeWarnings(t *testing.T, file string, extra ...string) map[string][]string {
	t.Helper()
	out, errs, code := run(t, append([]string{"analyze", "--no-stats", "--format", "json", file}, extra...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Warnings []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	for _, w := range doc.Warnings {
		m[w.Code] = append(m[w.Code], w.Message)
	}
	return m
}

// TestNullThreadRangesCounted: NVTX ranges whose globalTid is NULL belong
// to no thread, so no phase can hold them: the whole 90-range phase
// "metrics" vanished into (unannotated) without a word. They are counted
// and named in a warning.
func TestNullThreadRangesCounted(t *testing.T) {
	t.Parallel()
	file := editedExport(t, "eager_graph_small",
		`UPDATE NVTX_EVENTS SET globalTid = NULL WHERE coalesce(text, (SELECT value FROM StringIds WHERE id = textId)) = 'metrics'`)
	w := analyzeWarnings(t, file)
	if got := strings.Join(w["no_thread_range"], "|"); !strings.Contains(got, "90 NVTX ranges have no thread (a NULL globalTid)") {
		t.Errorf("no_thread_range warnings %q (all: %v)", got, w)
	}
}

// TestDanglingAPINamesCounted: API calls whose nameId StringIds lacks have
// no name to classify: the 713 cudaStreamSynchronize calls became
// other_api (sync 74.3 → 28.8 µs/step) without a word. They are counted
// and named in a warning, and classified by the SYNCHRONIZATION record
// each left under its correlation id: sync_ns, host_syncs and other_api_ns
// over the steps are what they are with the names.
func TestDanglingAPINamesCounted(t *testing.T) {
	t.Parallel()
	orig := fixture.Get(t, "eager_graph_small").SQLite(t)
	file := editedExport(t, "eager_graph_small",
		`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 2000000000 WHERE nameId = (SELECT id FROM StringIds WHERE value = 'cudaStreamSynchronize_v3020')`)
	w := analyzeWarnings(t, file)
	if got := strings.Join(w["dangling_api_name"], "|"); !strings.Contains(got, "713 CUDA API calls name a nameId that StringIds lacks") {
		t.Errorf("dangling_api_name warnings %q (all: %v)", got, w)
	}
	cols := []string{"sync_ns", "host_syncs", "other_api_ns"}
	want, got := stepSums(t, orig, cols...), stepSums(t, file, cols...)
	if want[0] == 0 || want[1] == 0 || !slices.Equal(got, want) {
		t.Errorf("%v over the steps: edited %v, original %v", cols, got, want)
	}
}

// TestNoKernelTableNullsConsistent: without the kernel table, queue_sum_ns
// and queue_max_ns are null (not measured) but phase_instances still gave a
// queue_mean_ns and an unattributed_kernel_ns of 0. Absent means null in
// every column: where queue_sum_ns is null so is queue_mean_ns, and
// unattributed_kernel_ns is null wherever kernel_sum_ns is.
func TestNoKernelTableNullsConsistent(t *testing.T) {
	t.Parallel()
	file := editedExport(t, "eager_graph_small", `DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL`)
	out := filepath.Join(t.TempDir(), "ds")
	if _, errs, code := run(t, "analyze", "--quiet", "--no-stats", "--out", out, file); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	tables, err := export.ReadDataset(out)
	if err != nil {
		t.Fatal(err)
	}
	var inst *export.Table
	for _, tb := range tables {
		if tb.Name == "phase_instances" {
			inst = tb
		}
	}
	if inst == nil {
		t.Fatal("no phase_instances")
	}
	col := func(name string) int {
		i := inst.ColumnIndex(name)
		if i < 0 {
			t.Fatalf("no column %s", name)
		}
		return i
	}
	qsum, qmean, ksum, unattr, isStep := col("queue_sum_ns"), col("queue_mean_ns"), col("kernel_sum_ns"), col("unattributed_kernel_ns"), col("is_step")
	steps, queueRows := 0, 0
	for r := range inst.Len() {
		if !inst.IsNull(r, qsum) {
			t.Fatalf("row %d: queue_sum_ns measured without kernels", r)
		}
		if !inst.IsNull(r, qmean) {
			queueRows++
		}
		if step, _ := inst.Bool(r, isStep); step {
			steps++
			if !inst.IsNull(r, ksum) || !inst.IsNull(r, unattr) {
				t.Errorf("step row %d: kernel_sum_ns null %v, unattributed_kernel_ns null %v: want both null", r, inst.IsNull(r, ksum), inst.IsNull(r, unattr))
				break
			}
		}
	}
	if steps == 0 || queueRows != 0 {
		t.Errorf("%d steps; %d rows give a queue_mean_ns while queue_sum_ns is null", steps, queueRows)
	}
}

// TestIdleStepThreadWarned: a second thread of the process repeating the
// step's ranges (here a copy of the collector thread's NVTX rows on
// another thread id) with no CUDA work pooled its 80 empty steps into the
// units, halving every per-step GPU metric without a word. A warning names
// the idle thread and the share of empty steps.
func TestIdleStepThreadWarned(t *testing.T) {
	t.Parallel()
	file := editedExport(t, "eager_graph_small",
		`CREATE TEMP TABLE mirror AS SELECT * FROM NVTX_EVENTS WHERE eventType = 59`,
		`UPDATE mirror SET globalTid = globalTid + 1`,
		`INSERT INTO NVTX_EVENTS SELECT * FROM mirror`)
	w := analyzeWarnings(t, file, "--step", "collector_step")
	got := strings.Join(w["idle_step_thread"], "|")
	if !strings.Contains(got, `repeats step "collector_step" (80 steps) with no CUDA API call`) || !strings.Contains(got, "averaged over 160 steps of which 80 are empty") {
		t.Errorf("idle_step_thread warnings %q (all: %v)", got, w)
	}
	// The thread that does the work alone: no warning.
	if w := analyzeWarnings(t, fixture.Get(t, "eager_graph_small").SQLite(t), "--step", "collector_step"); len(w["idle_step_thread"]) != 0 {
		t.Errorf("unedited export: %v", w["idle_step_thread"])
	}
}

// stepSums analyses file into a dataset and sums the named metric columns
// over its step rows.
func stepSums(t *testing.T, file string, cols ...string) []int64 {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ds")
	if _, errs, code := run(t, "analyze", "--quiet", "--no-stats", "--step", "collector_step", "--out", out, file); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	tables, err := export.ReadDataset(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if tb.Name != "phase_instances" {
			continue
		}
		step := tb.ColumnIndex("is_step")
		sums := make([]int64, len(cols))
		for r := range tb.Len() {
			if ok, _ := tb.Bool(r, step); !ok {
				continue
			}
			for i, c := range cols {
				v, _ := tb.Int64(r, tb.ColumnIndex(c))
				sums[i] += v
			}
		}
		return sums
	}
	t.Fatal("no phase_instances")
	return nil
}

// TestDanglingLaunchesStayLaunches: a call with no name that launched a
// kernel is a launch whatever it was called: with cudaLaunchKernel's
// nameId dangling, launch_ns and launches per step are what they were.
func TestDanglingLaunchesStayLaunches(t *testing.T) {
	t.Parallel()
	orig := fixture.Get(t, "eager_graph_small").SQLite(t)
	file := editedExport(t, "eager_graph_small",
		`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 2000000000 WHERE nameId = (SELECT id FROM StringIds WHERE value = 'cudaLaunchKernel_v7000')`)
	cols := []string{"launch_ns", "launches", "other_api_ns"}
	want, got := stepSums(t, orig, cols...), stepSums(t, file, cols...)
	if want[0] == 0 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("%v: edited %v, original %v", cols, got, want)
	}
}
