package phases

import (
	"regexp"
	"strings"
)

// Whose annotation a range is. A person reading a trace picks the step from
// the program's own ranges; libraries and frameworks annotate their own calls
// (NCCL's collectives, MPI's calls, TensorRT's layers, PyTorch's operators),
// and those ranges repeat far more often than any step. This file is the one
// place that says which ranges are such automatic annotations, by domain and
// by shape; docs/guide.md ("Any export, zero configuration") lists the same
// rules.
//
// Two grades:
//   - operator and library-call ranges (IsLibraryRange and not
//     IsQualifiedRange): a library domain, an operator or API name, a
//     PyTorch payload (seq =, op_id =, sizes =) or a pyprof/DLProf dict. They
//     are never the step and, directly under a program's step, never its
//     phases (their time is in (unannotated));
//   - C++-qualified code sections ("KernelExecutor::compileFusion",
//     "transform_replay.cpp::getMatchedLeafPos"): a library's (or a C++
//     framework's) own scopes. They are never the step either, but they are
//     phases where they sit: they name the work a person would read.
//
// A program range whose every instance only wraps one such call is that
// call's annotation too (wrapsOneCall, stepchoice.go): never the step.

// LibraryDomains are NVTX domains that libraries and tools create for their
// own ranges, matched case-insensitively as a prefix of the domain name
// ("myelin" matches "myelin-exec").
var LibraryDomains = []string{
	"NCCL", "RCCL", "MPI", "UCX", "UCC", "NVSHMEM", "TensorRT", "myelin", "libcudf", "cudf_cpp",
	"STDPAR", "OpenMP", "OpenACC", "cuDNN", "cuBLAS", "cuSPARSE", "cuFFT", "cuSOLVER", "cuRAND",
	"cuTENSOR", "CUTLASS", "NPP", "nvJPEG", "DALI", "NVVIDEO", "Triton", "NVTX_DOMAIN", "CUDA",
	"cuda-python", "rmm", "RAPIDS", "ucxx", "legate", "NVIDIA", "TSL", "XLA", "cupy", "numba",
	"cudf", "CCCL", "cuML", "cugraph", "raft", "nvcomp", "cuVS", "cuQuantum", "cuDSS", "NVPL", "nvmath",
	"MAGMA", "HPC-X", "PMIX", "libfabric", "oneCCL",
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

// torchPayload marks the ranges emit_nvtx writes for operators: a sequence
// number (autograd-recorded: "AddmmBackward0, seq = 12, op_id = 99") or the
// sizes of tensor inputs ("aten::mm, op_id = 4, sizes = [[2, 3], [3, 4]]").
// Every range emit_nvtx writes carries an op_id, the program's own
// record_function ranges too ("forward, op_id = 12"): an op_id alone marks an
// operator only in the shapes torchOpID lists.
var torchPayload = regexp.MustCompile(`\bseq\s*=\s*\d+|\bsizes\s*=\s*\[\s*\[`)

// torchOpID marks, among ranges with an op_id, PyTorch's own: an in-place
// operator (a name ending in "_": "detach_", "copy_") and the framework's
// record_function names that carry no namespace, and custom operators
// ("flash_attn::_flash_attn_forward, op_id = 9"; "detach",
// "record_param_comms", "enumerate(DataLoader)#…", "DistributedDataParallel.forward").
var torchOpID = regexp.MustCompile(`^(?:[A-Za-z][\w.]*_|\w+::[\w:]+|detach|record_param_comms|enumerate\(DataLoader\)[^,]*|(?:Distributed)?DataParallel\.\w+|cudaStream\w*|lazy_load\w*)\s*,\s*op_id\s*=`)

// qualifiedText is a C++-qualified name: "ns::func", "Class::method",
// "file.cpp::func" (a source location), with no space before the "::".
var qualifiedText = regexp.MustCompile(`^[A-Za-z_~][\w.<>~-]*::[~A-Za-z_]`)

// profilerStep is the PyTorch profiler's own step range: written by the
// framework, but it marks the program's iterations, so it is the program's.
var profilerStep = regexp.MustCompile(`^ProfilerStep#\d+`)

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
// written by a library or framework rather than by the program itself: an
// operator or library call, or a C++-qualified code section
// (IsQualifiedRange). Neither is ever the step.
func IsLibraryRange(domain, text string) bool {
	if profilerStep.MatchString(text) && !IsLibraryDomain(domain) {
		return false
	}
	return IsLibraryDomain(domain) || isOpText(text) || qualifiedText.MatchString(text)
}

// isOpText reports an operator or library call by its text alone.
func isOpText(text string) bool {
	return libraryText.MatchString(text) || torchPayload.MatchString(text) || torchOpID.MatchString(text)
}

// IsQualifiedRange reports whether a library range is only a C++-qualified
// code section: never the step, but a phase where it sits.
func IsQualifiedRange(domain, text string) bool {
	return !IsLibraryDomain(domain) && !isOpText(text) && qualifiedText.MatchString(text)
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
