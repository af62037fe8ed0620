package projection

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestPublicCorpusProjectionEqualsVendor compares `ranges` (the vendor view)
// with the vendor's nvtx_gpu_proj_sum on every export of the public corpus:
// every row, exact integer columns, printed statistics to their rounding. An
// empty or missing CSV means the vendor found no range with GPU work, so the
// view must have no row either.
func TestPublicCorpusProjectionEqualsVendor(t *testing.T) {
	for _, fx := range fixture.Public(t) {
		if fx.Name == fixture.NotNsysPublic {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			rep, err := Project(openFixture(t, fx))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(fx.VendorDir, fx.Name+"_nvtx_gpu_proj_sum.csv")
			var want []vendorCSVRow
			if st, err := os.Stat(path); err == nil && st.Size() > 0 {
				want = readVendorCSV(t, path)
			}
			if len(rep.Ranges) != len(want) {
				t.Errorf("%d rows, vendor has %d", len(rep.Ranges), len(want))
			}
			type key struct{ name, style string }
			byKey := map[key]Range{}
			for _, g := range rep.Ranges {
				byKey[key{g.Name, g.Style}] = g
			}
			for _, w := range want {
				k := key{w["Range"], w["Style"]}
				g, ok := byKey[k]
				if !ok {
					t.Errorf("vendor row %q (%s) missing", k.name, k.style)
					continue
				}
				checkRangeRow(t, g, w)
			}
		})
	}
}
