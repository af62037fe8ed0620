package phases

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestVendorStreamEqualsWhole: on every fixture the streamed projection
// gives exactly the instances, names and diagnostics of the whole-table
// one, or says it cannot serve the export (cudabacktrace wrapper rows; JAX's
// hundreds of ranges left open, past the stack sweep's limit) and
// vendorProject then answers from the whole tables.
func TestVendorStreamEqualsWhole(t *testing.T) {
	fellBack := map[string]bool{"collector_backtrace": true, "jax_nvtx": true}
	for _, fx := range vendorFixtures(t) {
		t.Run(fx.Name, func(t *testing.T) {
			f := openFixture(t, fx)
			whole, err := readVendorInput(f)
			if err != nil {
				t.Fatal(err)
			}
			wantFound := whole.project(vendorStackLimit)
			in, found, err := streamVendorProjection(f, vendorStackLimit)
			if errors.Is(err, errVendorUnordered) {
				if !fellBack[fx.Name] {
					t.Fatalf("stream fell back on %s", fx.Name)
				}
				in, found, err = vendorProject(f, vendorStackLimit)
			} else if fellBack[fx.Name] {
				t.Errorf("stream served %s, expected to fall back", fx.Name)
			}
			if err != nil {
				t.Fatal(err)
			}
			opt := cmp.AllowUnexported(vendorFound{}, vendorRange{}, vendorName{}, vendorDiag{})
			if d := cmp.Diff(wantFound, found, opt); d != "" {
				t.Errorf("instances differ (-whole +stream):\n%s", d)
			}
			if d := cmp.Diff(whole.names, in.names, opt); d != "" {
				t.Errorf("names differ (-whole +stream):\n%s", d)
			}
			if d := cmp.Diff(whole.diag, in.diag, opt); d != "" {
				t.Errorf("diagnostics differ (-whole +stream):\n%s", d)
			}
		})
	}
}

// TestVendorStreamFallsBack: past the stack limit the stream gives up, and
// vendorProject's answer is the whole-table one.
func TestVendorStreamFallsBack(t *testing.T) {
	f := openFixture(t, vendorFixtures(t)[0])
	if _, _, err := streamVendorProjection(f, 0); !errors.Is(err, errVendorUnordered) {
		t.Fatalf("stack limit 0: err %v, want errVendorUnordered", err)
	}
	whole, err := readVendorInput(f)
	if err != nil {
		t.Fatal(err)
	}
	want := whole.project(0)
	_, got, err := vendorProject(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(vendorFound{}, vendorRange{})); d != "" {
		t.Errorf("fallback differs from the whole-table projection:\n%s", d)
	}
}
