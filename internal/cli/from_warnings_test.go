package cli_test

import (
	"path/filepath"
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
