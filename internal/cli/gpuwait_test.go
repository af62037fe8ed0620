package cli_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestAnalyzeSaysWhyPhasesWait: null vs MPS over the four sharing runs
// (file arms, as the guide shows them): the text report says, per phase
// that waits, what the GPU ran during the wait, and how much of the sync
// difference was a GPU that ran nothing — the guide's numbers.
func TestAnalyzeSaysWhyPhasesWait(t *testing.T) {
	t.Parallel()
	dir := filepath.Dir(fixture.Get(t, "sharing_null_1").XZ)
	fixture.Get(t, "sharing_mps_1")
	out, errs, code := run(t, "analyze", "--format", "markdown", "--baseline", "mps",
		"--arm", "null="+filepath.Join(dir, "sharing_null_*.sqlite.xz"), "--arm", "mps="+filepath.Join(dir, "sharing_mps_*.sqlite.xz"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	out = strings.ReplaceAll(out, `\_`, "_") // Markdown escapes
	for _, want := range []string{
		"Why phases wait (sync time split by what the process's GPUs ran; µs per instance)",
		"packed_reset, arm null: sync 694 µs of 869 µs wall (80% of wall); of the sync, 86% no GPU work recorded, 12% other processes' work, 2% own GPU work — typical of time-slicing between processes without MPS",
		"packed_reset, null − mps: sync +665 µs [+615, +714 µs] per instance; of it no GPU work recorded +574 µs [+540, +607 µs] (86% of the sync difference)",
		"collector_step, null − mps: sync +1639 µs [+1538, +1739 µs] per instance; of it no GPU work recorded +1405 µs [+1324, +1485 µs]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// MPS lets the two processes' kernels overlap: no time-slicing verdict.
	if strings.Contains(out, "packed_reset, arm mps: sync 29.3 µs of 185 µs wall (16% of wall); of the sync, 82% no GPU work recorded, 9% other processes' work, 8% own GPU work — typical") {
		t.Error("the MPS arm is called time-slicing")
	}
}

// TestInventorySplitsWaits: the blocking items of the sharing run without
// MPS carry the own/other/no-GPU split of their wait; a pageable copy and
// its sync both wait, so their split is the whole host time.
func TestInventorySplitsWaits(t *testing.T) {
	t.Parallel()
	out, errs, code := run(t, "inventory", "--format", "json", fixture.Get(t, "sharing_null_1").XZ)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var d struct {
		Items []struct {
			Phase, Kind, API string
			TotalNs          int64 `json:"total_ns"`
			Own              int64 `json:"wait_own_gpu_ns"`
			Other            int64 `json:"wait_other_gpu_ns"`
			None             int64 `json:"wait_no_gpu_ns"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Items) == 0 {
		t.Fatal("no items")
	}
	top := d.Items[0]
	if top.Phase != "packed_reset" || top.Kind != "pageable_h2d" || top.TotalNs != 130074035 ||
		top.Own != 2680271 || top.Other != 16146337 || top.None != 111247427 {
		t.Errorf("top item %+v; want packed_reset pageable_h2d, 130074035 ns = 2680271 own + 16146337 other + 111247427 no GPU", top)
	}
	for _, it := range d.Items {
		if it.Own < 0 || it.Other < 0 || it.None < 0 || it.Own+it.Other+it.None > it.TotalNs {
			t.Errorf("%+v: the wait's split exceeds the host time", it)
		}
	}
}
