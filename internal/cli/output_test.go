package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// fullJSON runs analyze --format json and decodes the whole document.
func fullJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, errs, code := run(t, append([]string{"analyze", "--format", "json", "--resamples", "1999"}, args...)...)
	if code != 0 {
		t.Fatalf("analyze %v: exit %d: %s", args, code, errs)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("analyze JSON: %v", err)
	}
	return d
}

// TestAnalyzeFromDatasetsEqualsDirect: two exports analysed at once give the
// same document as each written to its own dataset (one flat, one
// partitioned, as two CI jobs would) and analysed with --from.
func TestAnalyzeFromDatasetsEqualsDirect(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("analyses two real exports three times")
	}
	a, b := fixture.Get(t, "sharing_null_1").XZ, fixture.Get(t, "sharing_mps_1").XZ
	arms := []string{"--arm-key", "training.cuda_process_sharing"}
	direct := fullJSON(t, append(arms, a, b)...)

	tmp := t.TempDir()
	dirA, dirB := filepath.Join(tmp, "job1"), filepath.Join(tmp, "job2")
	for _, job := range []struct {
		dir, file string
		extra     []string
	}{{dirA, a, nil}, {dirB, b, []string{"--partition"}}} {
		args := append([]string{"analyze", "--quiet", "--no-stats", "--out", job.dir}, arms...)
		args = append(append(args, job.extra...), job.file)
		if _, errs, code := run(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dirB, "phase_instances")); err != nil {
		t.Fatalf("partitioned dataset: %v", err)
	}
	from := fullJSON(t, "--from", dirA, dirB)
	if diff := cmp.Diff(direct, from); diff != "" {
		t.Errorf("--from differs from the direct analysis (-direct +from):\n%s", diff)
	}

	// A glob, and --out of the combined analysis, which itself reloads the same.
	comb := filepath.Join(tmp, "combined")
	if _, errs, code := run(t, "analyze", "--quiet", "--resamples", "1999", "--from", "--out", comb, filepath.Join(tmp, "job*")); code != 0 {
		t.Fatalf("--from glob --out: exit %d: %s", code, errs)
	}
	again := fullJSON(t, "--from", comb)
	if diff := cmp.Diff(direct, again); diff != "" {
		t.Errorf("--from of the combined dataset differs (-direct +again):\n%s", diff)
	}
}

func TestAnalyzeFromUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"analyze", "--from"},
		{"analyze", "--from", "--step", "x", "dir"},
		{"analyze", "--from", "testdata/no-such-dataset"},
		{"analyze", "--format", "pdf", "x.sqlite"},
		{"analyze", "--partition", "x.sqlite"},
	} {
		out, errs, code := run(t, args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, out, errs)
		}
	}
}

// TestAnalyzeBinaryAndHTMLFormats: arrow and parquet print phase_summary,
// --out with --format arrow writes an Arrow dataset, html is one page
// without scripts or remote references, -o writes the file.
func TestAnalyzeBinaryAndHTMLFormats(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small")
	tmp := t.TempDir()
	common := []string{"analyze", "--resamples", "1999", fx.XZ}

	for _, f := range []string{"arrow", "parquet"} {
		path := filepath.Join(tmp, "summary."+f)
		if _, errs, code := run(t, append(common, "--format", f, "-o", path)...); code != 0 {
			t.Fatalf("--format %s: exit %d: %s", f, code, errs)
		}
		var tab *export.Table
		var err error
		if f == "arrow" {
			tab, err = export.ReadArrow(path)
		} else {
			tab, err = export.ReadParquet(path)
		}
		if err != nil || tab.Name != "phase_summary" || tab.Len() == 0 {
			t.Fatalf("--format %s: table %v, err %v", f, tab, err)
		}
	}

	out := filepath.Join(tmp, "arrow-out")
	stdout, errs, code := run(t, append(common, "--format", "arrow", "--out", out)...)
	if code != 0 || stdout != "" {
		t.Fatalf("--format arrow --out: exit %d, stdout %d bytes: %s", code, len(stdout), errs)
	}
	for _, name := range []string{"phase_instances", "phase_summary", "comparisons", "decomposition", "provenance"} {
		if _, err := export.ReadArrow(filepath.Join(out, name+".arrow")); err != nil {
			t.Errorf("%s.arrow: %v", name, err)
		}
	}

	page := filepath.Join(tmp, "report.html")
	if _, errs, code := run(t, append(common, "--format", "html", "-o", page)...); code != 0 {
		t.Fatalf("--format html: exit %d: %s", code, errs)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "<svg", "Where the wall time goes", "Arm comparisons", "cpu_other", "provenance"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "http://", "https://", "<link", "@import", "src="} {
		if bytes.Contains(html, []byte(bad)) {
			t.Errorf("report is not self-contained: contains %q", bad)
		}
	}
}

// TestAnalyzeDeterministicAcrossJobs: the output does not depend on -j, and
// no progress bar reaches a non-terminal stderr.
func TestAnalyzeDeterministicAcrossJobs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("analyses three exports twice")
	}
	glob := filepath.Join(fixture.TestdataDir(), "sharing_*_2.sqlite.xz")
	var outs []string
	for _, j := range []string{"1", "3"} {
		out, errs, code := run(t, "analyze", "--format", "json", "--resamples", "1999", "--arm-key", "training.cuda_process_sharing", "-j", j, glob)
		if code != 0 || errs != "" {
			t.Fatalf("-j %s: exit %d, stderr %q", j, code, errs)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Error("-j 1 and -j 3 give different output")
	}
}
