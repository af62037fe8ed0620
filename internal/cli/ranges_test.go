package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/badgen"
	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

func rangesMain(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = cli.Main(append([]string{"ranges"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// TestRangesCSVEqualsVendor: --format csv prints, byte for byte, the CSV that
// `nsys stats -r nvtx_gpu_proj_sum --format csv` wrote for every fixture,
// the extra recordings included (NVTX3 domains and registered strings, CUDA
// backtraces, 2 GPUs, JAX).
func TestRangesCSVEqualsVendor(t *testing.T) {
	t.Parallel()
	fixtures := fixture.All(t)
	if _, err := os.Stat(filepath.Join(fixture.Root(), "testdata", fixture.Set+"-extra")); err == nil {
		fixtures = append(fixtures, fixture.Extra(t)...)
	}
	for _, fx := range fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(fx.VendorDir, fx.Name+"_nvtx_gpu_proj_sum.csv"))
			if err != nil {
				t.Skipf("no vendor report: %v", err)
			}
			out, errs, code := rangesMain("--format", "csv", fx.SQLite(t))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			// nvtx_streams ends 185 start/end ranges on other threads; the
			// warning goes to stderr, keeping stdout the CSV alone.
			if fx.Name == "nvtx_streams" {
				if !strings.HasPrefix(errs, "warning: ") || !strings.Contains(errs, "185 NVTX start/end ranges ended on another thread") {
					t.Errorf("stderr %q, want the warning about ranges ended on another thread", errs)
				}
			} else if errs != "" {
				t.Errorf("stderr on a healthy export: %q", errs)
			}
			if out != string(want) {
				gotLines, wantLines := strings.Split(out, "\n"), strings.Split(string(want), "\n")
				for i := range min(len(gotLines), len(wantLines)) {
					if gotLines[i] != wantLines[i] {
						t.Fatalf("line %d differs:\n got  %s\n want %s", i+1, gotLines[i], wantLines[i])
					}
				}
				t.Fatalf("%d lines, vendor %d", len(gotLines), len(wantLines))
			}
		})
	}
}

// rangesDoc is the --format json contract for one file.
type rangesDoc struct {
	File   string `json:"file"`
	Ranges []struct {
		Domain       string   `json:"domain"`
		Name         string   `json:"name"`
		Text         string   `json:"text"`
		Style        string   `json:"style"`
		Instances    int64    `json:"instances"`
		RangeNs      int64    `json:"range_ns"`
		ProjNs       int64    `json:"proj_ns"`
		ProjAvgNs    float64  `json:"proj_avg_ns"`
		ProjMedNs    float64  `json:"proj_med_ns"`
		ProjMinNs    int64    `json:"proj_min_ns"`
		ProjMaxNs    int64    `json:"proj_max_ns"`
		ProjStdDevNs float64  `json:"proj_stddev_ns"`
		GPUOps       int64    `json:"gpu_ops"`
		AvgGPUOps    float64  `json:"avg_gpu_ops"`
		AvgRangeLvl  *float64 `json:"avg_range_lvl"`
		AvgNumChild  float64  `json:"avg_num_child"`
	} `json:"ranges"`
	AbsentTables []string `json:"absent_tables"`
	Warnings     []string `json:"warnings"`
}

// TestRangesJSON reads an .xz export and checks the JSON shape: every key
// present, counts and ns as JSON integers, the vendor's first row.
func TestRangesJSON(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small")
	out, errs, code := rangesMain("--format", "json", fx.XZ)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// An array whatever the number of inputs, so `jq '.[]'` works on one.
	var files []json.RawMessage
	if err := json.Unmarshal([]byte(out), &files); err != nil || len(files) != 1 {
		t.Fatalf("not a JSON array of one file: %v\n%.300s", err, out)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(files[0], &raw); err != nil {
		t.Fatalf("not a JSON object: %v\n%.300s", err, out)
	}
	for _, k := range []string{"file", "ranges", "absent_tables", "warnings"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("no %q key", k)
		}
	}
	var rows []map[string]json.RawMessage
	if err := json.Unmarshal(raw["ranges"], &rows); err != nil || len(rows) == 0 {
		t.Fatalf("ranges: %v (%d rows)", err, len(rows))
	}
	for _, k := range []string{"domain", "name", "text", "style", "instances", "range_ns", "proj_ns", "proj_avg_ns", "proj_med_ns",
		"proj_min_ns", "proj_max_ns", "proj_stddev_ns", "gpu_ops", "avg_gpu_ops", "avg_range_lvl", "avg_num_child"} {
		if _, ok := rows[0][k]; !ok {
			t.Errorf("range row has no %q key", k)
		}
	}
	for _, k := range []string{"instances", "range_ns", "proj_ns", "proj_min_ns", "proj_max_ns", "gpu_ops"} {
		if v := string(rows[0][k]); strings.ContainsAny(v, ".eE") {
			t.Errorf("%s = %s, want a JSON integer", k, v)
		}
	}
	var d rangesDoc
	if err := json.Unmarshal(files[0], &d); err != nil {
		t.Fatal(err)
	}
	// The vendor's first row (eager_graph_small_nvtx_gpu_proj_sum.csv).
	r := d.Ranges[0]
	if d.File != fx.XZ || r.Name != ":collector_step" || r.Domain != "" || r.Text != "collector_step" || r.Style != "PushPop" ||
		r.ProjNs != 259835957 || r.RangeNs != 265304962 || r.Instances != 90 || r.GPUOps != 7136 || r.AvgRangeLvl == nil || *r.AvgRangeLvl != 1 {
		t.Errorf("first row %+v of %s, want :collector_step PushPop 259835957/265304962 ns, 90 instances, 7136 ops, level 1", r, d.File)
	}
	if len(d.AbsentTables) != 1 || d.AbsentTables[0] != "CUPTI_ACTIVITY_KIND_MEMSET" || len(d.Warnings) != 0 {
		t.Errorf("absent %v, warnings %v; want only the memset table absent, no warning", d.AbsentTables, d.Warnings)
	}
	var cccl bool
	for _, r := range d.Ranges {
		cccl = cccl || r.Domain == "CCCL" && r.Name == "CCCL:"+r.Text
	}
	if !cccl {
		t.Error("no range of the CCCL domain (registered strings)")
	}
}

// TestRangesSeveralFiles: one array element per file, each with its file.
func TestRangesSeveralFiles(t *testing.T) {
	t.Parallel()
	a, b := fixture.Get(t, "graph_whole").SQLite(t), fixture.Get(t, "emit_nvtx").SQLite(t)
	out, errs, code := rangesMain("--format", "json", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var docs []rangesDoc
	if err := json.Unmarshal([]byte(out), &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].File != a || docs[1].File != b || len(docs[0].Ranges) != 21 || len(docs[1].Ranges) != 1961 {
		t.Fatalf("got %d docs; want %s with 21 ranges, %s with 1961", len(docs), a, b)
	}

	out, errs, code = rangesMain("--format", "csv", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "File,Range,Style,Total Proj Time (ns),") || len(lines) != 1+21+1961 ||
		!strings.HasPrefix(lines[1], a+",") || !strings.HasPrefix(lines[len(lines)-1], b+",") {
		t.Fatalf("csv of two files: %d lines, header %q", len(lines), lines[0])
	}

	out, errs, code = rangesMain(a, b)
	if code != 0 || strings.Count(out, "proj (ns)") != 2 || !strings.Contains(out, a+": ") || !strings.Contains(out, b+": ") {
		t.Fatalf("table of two files: exit %d, %s\n%.500s", code, errs, out)
	}
}

// TestRangesTable checks the aligned table: the vendor's column names and
// exact integers.
func TestRangesTable(t *testing.T) {
	t.Parallel()
	out, errs, code := rangesMain("--wide", fixture.Get(t, "graph_whole").SQLite(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, s := range []string{"Total Proj Time (ns)", "Total Range Time (ns)", "Range Instances", "Proj Med (ns)", "Avg Num Child", "Style", "Range", ":collector_step"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q", s)
		}
	}
	// graph_replay launches its graphs with --cuda-graph-trace=graph: the
	// vendor's view cannot see that work, so the range is absent.
	if strings.Contains(out, "graph_replay") {
		t.Error("graph_replay shows up; nvtx_gpu_proj_sum omits it in graph-trace mode")
	}
}

// TestRangesInputErrors: usage and input mistakes exit 2 with one line that
// names the problem, and print nothing on stdout.
func TestRangesInputErrors(t *testing.T) {
	t.Parallel()
	good := fixture.Get(t, "graph_whole").SQLite(t)
	missing := filepath.Join(t.TempDir(), "nope.sqlite")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "xml", good}, `--format "xml"`},
		{[]string{}, "requires at least 1 arg"},
		{[]string{missing}, missing},
		{[]string{good, missing}, missing},
		{[]string{"--nope", good}, "unknown flag"},
	} {
		out, errs, code := rangesMain(c.args...)
		if code != cli.ExitInput || out != "" || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("ranges %q: exit %d, stdout %d bytes, stderr %q; want exit 2, nothing on stdout, one line with %q", c.args, code, len(out), errs, c.want)
		}
	}
}

// TestRangesOddInputs runs inputs the vendor's rules handle silently: the
// view works and says what it left out or assumed.
func TestRangesOddInputs(t *testing.T) {
	t.Parallel()
	base := fixture.Get(t, badgen.BaseFixture).SQLite(t)
	for _, c := range []struct {
		gen      string
		stdout   string
		warnings []string
	}{
		{"no_nvtx_table", "NVTX_EVENTS", nil},
		{"only_metadata", "no NVTX range launched GPU work", nil},
		{"nvtx_null_end", ":", []string{"5 NVTX ranges were never closed"}},
		{"other_thread_end", ":", []string{"10 NVTX start/end ranges ended on another thread"}},
		{"duplicate_correlation", ":", []string{"5 CUDA API calls share their (process, correlationId)"}},
		{"null_required_values", ":", []string{"3 rows of CUPTI_ACTIVITY_KIND_RUNTIME were skipped"}},
	} {
		t.Run(c.gen, func(t *testing.T) {
			path, err := badgen.Build(c.gen, t.TempDir(), base)
			if err != nil {
				t.Fatal(err)
			}
			out, errs, code := rangesMain(path)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			if !strings.Contains(out, c.stdout) {
				t.Errorf("stdout lacks %q:\n%s", c.stdout, out)
			}
			var warnings []string
			for line := range strings.Lines(out) {
				if strings.HasPrefix(line, "warning: ") {
					warnings = append(warnings, line)
				}
			}
			if len(warnings) != len(c.warnings) {
				t.Errorf("warnings %q, want %d", warnings, len(c.warnings))
			}
			for i := range min(len(warnings), len(c.warnings)) {
				if !strings.Contains(warnings[i], c.warnings[i]) || !strings.Contains(warnings[i], path) {
					t.Errorf("warning %q lacks %q or the path", warnings[i], c.warnings[i])
				}
			}
		})
	}
}
