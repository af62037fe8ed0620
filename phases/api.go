package phases

import (
	"strings"

	"github.com/nsysphase/nsysphase/nsys"
)

// APICategory is the exclusive class a CUDA API call's host time goes to.
// With cpu_other they partition a phase instance's wall time.
type APICategory uint8

const (
	CatOther     APICategory = iota // other_api: every call not named below
	CatLaunch                       // launch: kernel and graph launches
	CatSync                         // sync: stream/device/event/context synchronize, blocking copies and memsets
	CatMemcpyAPI                    // memcpy_api: copy and memset enqueue calls that do not block
	CatAlloc                        // alloc: malloc/free of device, pinned host and pool memory
)

// String names the category as the metric columns do.
func (c APICategory) String() string {
	return [...]string{"other_api", "launch", "sync", "memcpy_api", "alloc"}[c]
}

// SyncKind says how an API call makes the host wait for the device; "" when
// it does not.
type SyncKind string

const (
	SyncNone     SyncKind = ""
	SyncStream   SyncKind = "stream_sync"
	SyncDevice   SyncKind = "device_sync"
	SyncEvent    SyncKind = "event_sync"
	SyncContext  SyncKind = "context_sync"
	SyncCopy     SyncKind = "sync_copy"     // a synchronous cudaMemcpy/cuMemcpy* (waits for the copy)
	SyncMemset   SyncKind = "sync_memset"   // a synchronous cudaMemset
	SyncPageable SyncKind = "pageable_copy" // cudaMemcpyAsync with pageable host memory: staged, blocks the host
	SyncFree     SyncKind = "free"          // cudaFree/cuMemFree: implicitly synchronizes the device
)

// apiClass is the classification of one API name.
type apiClass struct {
	cat      APICategory
	sync     SyncKind // for calls that always block
	isCopy   bool     // enqueues or performs a memcpy (pageable async copies block: decided per call)
	isLaunch bool     // kernel or graph launch
	isGraph  bool     // cudaGraphLaunch / cuGraphLaunch
	isAlloc  bool     // allocation (not free)
	isFree   bool
	dangling bool // its nameId is not in StringIds (other_api)
}

// classifyAPI classifies a CUDA runtime or driver API name (with or without
// its `_vNNNN` suffix). The rules are documented in docs/metrics.md.
func classifyAPI(name string) apiClass {
	n := nsys.BaseAPIName(name)
	switch {
	case strings.HasPrefix(n, "cudaGraphLaunch") || strings.HasPrefix(n, "cuGraphLaunch"):
		return apiClass{cat: CatLaunch, isLaunch: true, isGraph: true}
	case strings.HasPrefix(n, "cudaLaunch") || strings.HasPrefix(n, "cuLaunch"):
		return apiClass{cat: CatLaunch, isLaunch: true}
	case n == "cudaStreamSynchronize" || n == "cuStreamSynchronize":
		return apiClass{cat: CatSync, sync: SyncStream}
	case n == "cudaDeviceSynchronize" || n == "cudaThreadSynchronize":
		return apiClass{cat: CatSync, sync: SyncDevice}
	case n == "cuCtxSynchronize":
		return apiClass{cat: CatSync, sync: SyncContext}
	case n == "cudaEventSynchronize" || n == "cuEventSynchronize":
		return apiClass{cat: CatSync, sync: SyncEvent}
	case strings.HasPrefix(n, "cudaMemcpy") || strings.HasPrefix(n, "cuMemcpy"):
		if strings.Contains(n, "Async") {
			return apiClass{cat: CatMemcpyAPI, isCopy: true}
		}
		return apiClass{cat: CatSync, sync: SyncCopy, isCopy: true}
	case strings.HasPrefix(n, "cudaMemset") || strings.HasPrefix(n, "cuMemset"):
		if strings.Contains(n, "Async") {
			return apiClass{cat: CatMemcpyAPI}
		}
		return apiClass{cat: CatSync, sync: SyncMemset}
	case isFreeName(n):
		c := apiClass{cat: CatAlloc, isFree: true}
		// Plain cudaFree/cuMemFree synchronize the device; async and host
		// frees do not block on GPU work.
		if n == "cudaFree" || n == "cuMemFree" || n == "cudaFreeArray" {
			c.sync = SyncFree
		}
		return c
	case isAllocName(n):
		return apiClass{cat: CatAlloc, isAlloc: true}
	}
	return apiClass{cat: CatOther}
}

func isAllocName(n string) bool {
	for _, p := range []string{"cudaMalloc", "cudaHostAlloc", "cudaMallocHost", "cudaMallocManaged", "cudaMallocAsync", "cudaMallocFromPoolAsync", "cudaMallocPitch", "cudaMalloc3D", "cudaMallocArray", "cuMemAlloc", "cuMemHostAlloc", "cuMemCreate", "cuMemAllocAsync", "cuMemAllocFromPoolAsync", "cuMemAllocManaged", "cuMemAllocPitch"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

func isFreeName(n string) bool {
	for _, p := range []string{"cudaFree", "cudaFreeHost", "cudaFreeAsync", "cudaFreeArray", "cuMemFree", "cuMemFreeHost", "cuMemFreeAsync", "cuMemRelease"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}
