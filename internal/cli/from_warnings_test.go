package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestFromWithoutWarningsSaysEmpty: a dataset of an export without
// warnings reads back with "warnings": [] as the direct analysis writes it,
// not null.
func TestFromWithoutWarningsSaysEmpty(t *testing.T) {
	xz := fixture.Get(t, "eager_graph_small").XZ
	direct := fullJSON(t, "--no-stats", xz)
	if w, ok := direct["warnings"].([]any); !ok || len(w) != 0 {
		t.Fatalf("direct analysis of %s: warnings %#v, want [] (the test needs a warning-free export)", xz, direct["warnings"])
	}
	dir := filepath.Join(t.TempDir(), "ds")
	if _, errs, code := run(t, "analyze", "--quiet", "--no-stats", "--out", dir, xz); code != 0 {
		t.Fatalf("--out: exit %d: %s", code, errs)
	}
	from := fullJSON(t, "--no-stats", "--from", dir)
	if w, ok := from["warnings"].([]any); !ok || len(w) != 0 {
		t.Errorf("--from: warnings %#v, want []", from["warnings"])
	}
}

// TestFromRefusesOneExportTwice: datasets that hold one export twice are
// refused with exit 2 instead of counting the profile twice: by path (the
// same dataset twice) and by content (a copy of the export analysed in
// another job).
func TestFromRefusesOneExportTwice(t *testing.T) {
	xz := fixture.Get(t, "eager_graph_small").XZ
	tmp := t.TempDir()
	data, err := os.ReadFile(xz)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(tmp, "copy_of_eager.sqlite.xz")
	if err := os.WriteFile(other, data, 0o644); err != nil {
		t.Fatal(err)
	}
	one, two := filepath.Join(tmp, "job1"), filepath.Join(tmp, "job2")
	for _, job := range [][2]string{{one, xz}, {two, other}} {
		if _, errs, code := run(t, "analyze", "--quiet", "--no-stats", "--out", job[0], job[1]); code != 0 {
			t.Fatalf("--out %s: exit %d: %s", job[0], code, errs)
		}
	}
	cases := []struct {
		dirs []string
		want string
	}{
		{[]string{one, one}, "is in both"},
		{[]string{one, two}, "both hold the analysis of one export"},
	}
	for _, c := range cases {
		_, errs, code := run(t, append([]string{"analyze", "--no-stats", "--from"}, c.dirs...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("--from %v: exit %d, stderr %q; want exit 2 and %q", c.dirs, code, errs, c.want)
		}
	}
}

// TestFromSaysHardwareIsLeftOut: a dataset with GPU metrics and CPU samples
// reads back without a hardware section, and a dataset_hardware warning
// says so rather than leaving it out in silence.
func TestFromSaysHardwareIsLeftOut(t *testing.T) {
	xz := fixture.ExtraNamed(t, "gloo_hw_node").XZ
	dir := filepath.Join(t.TempDir(), "ds")
	if _, errs, code := run(t, "analyze", "--quiet", "--no-stats", "--out", dir, xz); code != 0 {
		t.Fatalf("--out: exit %d: %s", code, errs)
	}
	from := fullJSON(t, "--no-stats", "--from", dir)
	if _, ok := from["hardware"]; ok {
		t.Fatal("--from rebuilt a hardware section: drop the dataset_hardware warning")
	}
	ws, _ := from["warnings"].([]any)
	for _, w := range ws {
		if m, _ := w.(map[string]any); m["code"] == "dataset_hardware" && strings.Contains(m["message"].(string), "gpu_metrics and host_hotspots") {
			return
		}
	}
	t.Errorf("no dataset_hardware warning among %v", ws)
}
