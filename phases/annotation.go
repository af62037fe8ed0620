package phases

import (
	"regexp"
	"strings"
)

// Whose annotation a range is. A person reading a trace picks the step from
// the program's own ranges; libraries and frameworks annotate their own calls
// (NCCL's collectives, MPI's calls, TensorRT's layers, PyTorch's operators),
// and those ranges repeat far more often than any step. This file is the one
// place that says which ranges are such automatic annotations; docs/guide.md
// ("How the step is chosen") lists the same rules.

// LibraryDomains are NVTX domains that libraries and tools create for their
// own ranges, matched case-insensitively as a prefix of the domain name
// ("myelin" matches "myelin-exec").
var LibraryDomains = []string{
	"NCCL", "RCCL", "MPI", "UCX", "UCC", "NVSHMEM", "TensorRT", "myelin", "libcudf", "cudf_cpp",
	"STDPAR", "OpenMP", "OpenACC", "cuDNN", "cuBLAS", "cuSPARSE", "cuFFT", "cuSOLVER", "cuRAND",
	"cuTENSOR", "CUTLASS", "NPP", "nvJPEG", "DALI", "NVVIDEO", "Triton", "NVTX_DOMAIN", "CUDA",
	"cuda-python", "rmm", "RAPIDS", "ucxx", "legate", "NVIDIA", "TSL", "XLA", "cupy", "numba",
}

// libraryText matches range texts written by libraries and frameworks in
// any domain: PyTorch's operator, autograd, optimizer and FSDP/DDP ranges
// (emit_nvtx and the profiler), collective and MPI calls annotated by name,
// CUDA library calls, OpenMP offload regions, and pyprof/DLProf payloads.
var libraryText = regexp.MustCompile(`^(?:aten::|autograd::|torch::|c10d::|nccl:|FSDP::|DDP::|` +
	`Optimizer\.|Optimizer#|cudaGraph|` +
	`nccl[A-Z]|MPI_[A-Z]|PMPI_|shmem_|nvshmem|cublas|cudnn|cusparse|cufft|cusolver|curand|` +
	`cuda[A-Z]|cu[A-Z][a-z]|omp_|__omp|openmp_|ompt_|stdpar|thrust::|cub::|` +
	`\{['"]traceMarker|\{['"](?:mod|op|callid)['"])`)

// torchPayload marks the ranges emit_nvtx writes for autograd-recorded
// operators: they carry a sequence number ("AddmmBackward0, seq = 12, op_id
// = 99"). A user's record_function range carries an op_id only.
var torchPayload = regexp.MustCompile(`\bseq\s*=\s*\d+`)

// IsLibraryDomain reports whether an NVTX domain belongs to a library.
func IsLibraryDomain(domain string) bool {
	if domain == "" {
		return false
	}
	d := strings.ToLower(domain)
	for _, l := range LibraryDomains {
		if strings.HasPrefix(d, strings.ToLower(l)) {
			return true
		}
	}
	return false
}

// IsLibraryRange reports whether a range (its domain and its raw text) was
// written by a library or framework rather than by the program itself.
func IsLibraryRange(domain, text string) bool {
	return IsLibraryDomain(domain) || libraryText.MatchString(text) || torchPayload.MatchString(text)
}

// pyprofField reads one 'key': 'value' field of a pyprof/DLProf payload.
var pyprofField = regexp.MustCompile(`['"](mod|op)['"]\s*:\s*['"]([^'"]*)['"]`)

// PayloadName names a pyprof/DLProf payload range by its operator
// ("{'traceMarker': [...], 'mod': 'torch.nn.functional', 'op': 'conv2d'}" →
// "F.conv2d", 'mod': 'Tensor', 'op': 'cuda' → "Tensor.cuda"); other texts
// are returned unchanged.
func PayloadName(text string) string {
	if !strings.HasPrefix(text, "{") || !strings.Contains(text, "'op'") && !strings.Contains(text, `"op"`) {
		return text
	}
	var mod, op string
	for _, m := range pyprofField.FindAllStringSubmatch(text, -1) {
		switch {
		case m[1] == "mod" && mod == "":
			mod = m[2]
		case m[1] == "op" && op == "":
			op = m[2]
		}
	}
	if op == "" {
		return text
	}
	switch {
	case mod == "torch.nn.functional":
		mod = "F"
	case strings.HasPrefix(mod, "torch.nn."):
		mod = "nn." + strings.TrimPrefix(mod, "torch.nn.")
	}
	if mod == "" {
		return op
	}
	return mod + "." + op
}
