package analysis

import (
	"os"
	"runtime/debug"
	"strings"
)

// minMemoryTarget is the smallest soft heap limit SetMemoryTarget sets.
const minMemoryTarget = 144 << 20

// SetMemoryTarget sets a soft limit on the Go heap in proportion to the
// inputs (1.2×, at least 144 MiB), unless GOMEMLIMIT is set. The analysis keeps about one byte of
// compact index per byte of export; without a limit the collector lets the
// heap reach twice its live size, which on a 108 MB export meant ~290 MB of
// resident memory instead of ~180 MB. The limit is soft: a larger live heap
// is never refused, it only makes the collector run earlier.
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
}
