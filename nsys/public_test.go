package nsys_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// TestPublicCorpusEqualsVendor reads every export of the public corpus
// (third-party files, nsys 2020.3 → 2026.1): each opens, describes itself
// completely, and its kernel and API summaries equal the vendor's
// cuda_gpu_kern_sum and cuda_api_sum (a missing CSV means the vendor found
// no such data, so ours must be empty too). The one file that is not an
// Nsight Systems export is refused as such.
func TestPublicCorpusEqualsVendor(t *testing.T) {
	for _, fx := range fixture.Public(t) {
		t.Run(fx.Name, func(t *testing.T) {
			path := fx.SQLite(t)
			f, err := nsys.Open(path)
			if fx.Name == fixture.NotNsysPublic {
				var ie *nsys.InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), "not an Nsight Systems export") {
					t.Fatalf("got %v, want an *InputError saying it is not an Nsight Systems export", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			in, err := f.Describe()
			if err != nil {
				t.Fatal(err)
			}
			checkAccounted(t, in)
			if in.NsysVersion == "" && !contains(in.Unknown, "nsys version") {
				t.Errorf("no nsys version and none said unknown: %+v", in.Unknown)
			}
			if h, rows, ok := fx.Vendor(t, "cuda_gpu_kern_sum"); ok {
				compareNamed(t, "cuda_gpu_kern_sum", in.Kernels.ByName, h, rows, "Instances")
			} else if len(in.Kernels.ByName) > 0 {
				t.Errorf("vendor reports no kernels, we have %d names", len(in.Kernels.ByName))
			}
			if h, rows, ok := fx.Vendor(t, "cuda_api_sum"); ok {
				compareNamed(t, "cuda_api_sum", in.API.ByName, h, rows, "Num Calls")
			} else if len(in.API.ByName) > 0 {
				t.Errorf("vendor reports no CUDA API calls, we have %d names", len(in.API.ByName))
			}
			if h, rows, ok := fx.Vendor(t, "cuda_gpu_mem_size_sum"); ok {
				compareMemBytes(t, in.Memcpy, h, rows)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
