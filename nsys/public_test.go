package nsys_test

import (
	"errors"
	"slices"
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
			for _, want := range publicWarnings[fx.Name] {
				if !slices.ContainsFunc(in.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
					t.Errorf("no warning with %q among %q", want, in.Warnings)
				}
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

// publicWarnings are what older exports lack or hold differently: each is
// read, with a warning naming it.
var publicWarnings = map[string][]string{
	"lockfuehrer__beast_ressoruces__report2":           {"no export metadata table", "nsys version and export schema version unknown", "no PROCESSES table", "no callchainId column", "TARGET_INFO_CUDA_GPU lacks uuid"},
	"quasiben__nvtx-examples__multiprocessing":         {"nsys 2020.3.2 inferred from the install path", "TARGET_INFO_GPU lacks uuid"},
	"bwyogatama__Mordred-Deprecated__report1":          {"nsys 2021.2.1 inferred from the install path"},
	"mabdullahsoyturk__cardiac-simulation__report1":    {"nsys 2021.3.3 inferred from the install path (TARGET_INFO_SYSTEM_ENV TargetInstallDir)"},
	"haroonsyed__NVIDIA_SGEMM_PRACTICE__report1":       {"192 launch calls but no CUPTI_ACTIVITY_KIND_KERNEL table"},
	"LeiWang1999__memfusion_artifact__report1":         {"1 NVTX domain-create row has a negative start"},
	"YoonKyonghwan__EfficientCenterFormer__poolformer": {"2 NVTX domain-create rows have a negative start"},
	"hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0": {"export schema 2.9.1 differs"},
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
