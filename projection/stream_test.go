package projection

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestVendorStreamEqualsWhole: on every fixture the streamed projection
// gives exactly the instances, names and diagnostics of the whole-table
// one, or says it cannot serve the export (cudabacktrace wrapper rows; JAX's
// hundreds of ranges left open, past the stack sweep's limit; two gloo
// ranks on one GPU, whose processes each have 4 calls whose correlation id
// is below an earlier call's; rank 1 of the per-rank pair has one) and compute then answers from the whole
// tables.
func TestVendorStreamEqualsWhole(t *testing.T) {
	fellBack := map[string]bool{"collector_backtrace": true, "jax_nvtx": true, "gloo_ddp_strag_node": true, "gloo_ddp_strag_rank_rank1": true}
	for _, fx := range fixture.WithExtra(t) {
		t.Run(fx.Name, func(t *testing.T) {
			f := openFixture(t, fx)
			whole, err := readWhole(f)
			if err != nil {
				t.Fatal(err)
			}
			whole.project(defaultStackLimit)
			wantFound := whole.foundList()
			in, err := projectStream(f, defaultStackLimit)
			if errors.Is(err, errUnordered) {
				if !fellBack[fx.Name] {
					t.Fatalf("stream fell back on %s", fx.Name)
				}
				in, err = compute(f, defaultStackLimit)
			} else if fellBack[fx.Name] {
				t.Errorf("stream served %s, expected to fall back", fx.Name)
			}
			if err != nil {
				t.Fatal(err)
			}
			opt := cmp.AllowUnexported(foundRange{}, nvtxRange{}, rangeName{}, diagnostics{})
			if d := cmp.Diff(wantFound, in.foundList(), opt); d != "" {
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
// compute's answer is the whole-table one.
func TestVendorStreamFallsBack(t *testing.T) {
	f := openFixture(t, fixture.WithExtra(t)[0])
	if _, err := projectStream(f, 0); !errors.Is(err, errUnordered) {
		t.Fatalf("stack limit 0: err %v, want errUnordered", err)
	}
	whole, err := readWhole(f)
	if err != nil {
		t.Fatal(err)
	}
	whole.project(0)
	got, err := compute(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(whole.foundList(), got.foundList(), cmp.AllowUnexported(foundRange{}, nvtxRange{})); d != "" {
		t.Errorf("fallback differs from the whole-table projection:\n%s", d)
	}
}

// foundRange is a range instance with GPU ops.
type foundRange struct {
	nvtxRange
	globalTid int64
}

// foundList is the instances with GPU ops as one list, for comparisons.
func (in *input) foundList() []foundRange {
	var out []foundRange
	for globalTid, r := range in.found() {
		out = append(out, foundRange{nvtxRange: *r, globalTid: globalTid})
	}
	return out
}
