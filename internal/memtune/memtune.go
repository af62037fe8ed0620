package memtune

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"time"
)

// minMemoryTarget is the smallest soft heap limit SetMemoryTarget sets.
const minMemoryTarget = 144 << 20

// bigInput is the input size from which SetMemoryTarget collects by the
// soft limit alone.
const bigInput = 256 << 20

// SetMemoryTarget tunes the collector to the inputs, unless GOMEMLIMIT
// (or, for big inputs, GOGC) is set:
//
//   - inputs under 256 MiB: a soft heap limit of 1.2× the inputs, at least
//     144 MiB. Without it the collector lets the heap reach twice its live
//     size (on the 108 MB large_interleaved, ~290 MB resident instead of
//     ~175 MB). The limit is soft: a larger live heap is never refused, it
//     only makes the collector run earlier.
//   - from 256 MiB: the activity tables are streamed (phases' sweep), so
//     what stays live is mostly the instance list, ~500 bytes per step or
//     phase instance, allocated once, which every collection must scan.
//     GOGC is turned off and the heap collected only at a soft limit of
//     half the input: fewer, fuller collections than GOGC=30 at the same
//     resident size (10× large_interleaved, 1.1 GB: ~550 MB). A governor
//     raises the limit to 1.6× the live heap whenever the live heap passes
//     3/4 of it (an export the sweep must load whole keeps ~1 byte per
//     input byte), so a bigger live set costs memory, never a collector
//     that runs without end.
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
	if total < bigInput || os.Getenv("GOGC") != "" {
		debug.SetMemoryLimit(max(int64(minMemoryTarget), total*6/5))
		return
	}
	debug.SetMemoryLimit(max(int64(minMemoryTarget), total/2))
	debug.SetGCPercent(-1)
	governorOnce.Do(func() { go governLimit() })
}

var governorOnce sync.Once

// governLimit keeps the soft limit above the live heap (see SetMemoryTarget).
func governLimit() {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		metrics.Read(live)
		if live[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		n := int64(live[0].Value.Uint64())
		if limit := debug.SetMemoryLimit(-1); n > limit/4*3 {
			debug.SetMemoryLimit(n / 5 * 8)
		}
	}
}
