package analysis

import (
	"os"
	"runtime/debug"
	"strings"
)

// minMemoryTarget is the smallest soft heap limit SetMemoryTarget sets.
const minMemoryTarget = 144 << 20

// bigInput is the input size from which SetMemoryTarget also lowers GOGC.
const bigInput = 256 << 20

// bigInputGCPercent is GOGC for big inputs.
const bigInputGCPercent = 30

// SetMemoryTarget tunes the collector to the inputs, unless GOMEMLIMIT
// (or, for the second part, GOGC) is set:
//
//   - a soft heap limit of 1.2× the inputs, at least 144 MiB: without it the
//     collector lets the heap reach twice its live size (on the 108 MB
//     large_interleaved, ~290 MB resident instead of ~175 MB). The limit is
//     soft: a larger live heap is never refused, it only makes the
//     collector run earlier.
//   - from 256 MiB of input, GOGC=30: the activity tables are streamed
//     (phases' sweep), so what stays live is mostly the instance list,
//     ~500 bytes per step or phase instance, allocated once. Collecting at
//     1.3× that instead of 2× kept a 10× large_interleaved (1.1 GB) at
//     ~550 MB resident instead of ~850 MB, for no measurable time.
func SetMemoryTarget(paths []string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	var total int64
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		n := st.Size()
		if strings.HasSuffix(p, ".xz") {
			n *= 8 // exports compress 5–10× with xz
		}
		total += n
	}
	limit := max(int64(minMemoryTarget), total*6/5)
	debug.SetMemoryLimit(limit)
	if total >= bigInput && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(bigInputGCPercent)
	}
}
