package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestRangesParquet: the ranges table through the shared model keeps the
// vendor's integers exactly (Total Proj Time, GPU ops) in Parquet.
func TestRangesParquet(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "interleaved_graph")
	out, errs, code := run(t, "ranges", "--format", "parquet", fx.XZ)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	path := filepath.Join(t.TempDir(), "ranges.parquet")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := export.ReadParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, ok := fx.Vendor(t, "nvtx_gpu_proj_sum")
	if !ok {
		t.Skip("no vendor report")
	}
	if tab.Len() != len(rows) {
		t.Fatalf("%d rows, vendor %d", tab.Len(), len(rows))
	}
	name, proj := tab.ColumnIndex("name"), tab.ColumnIndex("proj_ns")
	for r := range tab.Len() {
		n, _ := tab.String(r, name)
		if n != ":collector_step" {
			continue
		}
		if v, _ := tab.Int64(r, proj); v != 540982765 { // the vendor's Total Proj Time
			t.Errorf("collector_step proj_ns %d, vendor 540982765", v)
		}
		return
	}
	t.Error("no :collector_step row")
}
