package memtune

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// minMemoryTarget is the smallest soft heap limit SetMemoryTarget sets. At
// 120 MiB the 1× large_interleaved peaked at 136–150 MB resident on 16
// cores (a static binary is ~30 MB resident before any work); 96 MiB
// holds since the sweep's read-ahead (phases.readAheadBytes), the
// statistics (analysis.statsBudget) and the zstd encoders (export's
// zstdWindows) are bounded by bytes, not cores: the live heap peaks at
// ~72–77 MB on 16 cores, ~56 on 2, below the governor's 84 MB.
const minMemoryTarget = 96 << 20

// smallGCPercent is GOGC for inputs under bigInput.
const smallGCPercent = 50

// earlyGCPercent is GOGC for inputs under bigInput until the live heap
// reaches earlyLive. At GOGC=50 from the start, the collector ran 13 times
// in the first 150 ms of an analysis of the 1× export, at heaps of 2 to
// 50 MB: a fixed cost per cycle, paid over and over while the tables'
// first parts are decoded. At 400 up to 24 MiB of live heap (a heap goal
// of at most the soft limit) it runs 12 times in all instead of 23: 4–9%
// less CPU and wall time on 2 cores, the same peak RSS, since the peak
// comes later, at GOGC=50.
const (
	earlyGCPercent = 400
	earlyLive      = 24 << 20
)

// bigInput is the input size from which SetMemoryTarget collects by the
// soft limit alone.
const bigInput = 256 << 20

// bigLimit is the soft heap limit for total bytes of input from bigInput.
func bigLimit(total int64) int64 { return max(int64(minMemoryTarget), 96<<20+total/10) }

// SetMemoryTarget tunes the collector to the inputs, unless GOMEMLIMIT
// is set (GOGC set: only the soft limit):
//
//   - inputs under 256 MiB: GOGC=50 (400 until the live heap reaches
//     24 MiB: earlyGCPercent) and a soft heap limit of 96 MiB,
//     whatever their size (a .xz's is only guessed). The activity tables
//     are streamed, so the live heap follows the trace's density, not its
//     length (on the 108 MB large_interleaved it peaks at ~100 MiB, mostly
//     the sweep's windows and the instance list). Without a limit the collector lets the heap
//     reach twice that; at GOGC=100 and 144 MiB it still reached the limit
//     early and returned memory to the system only to fault it back in
//     (~54,000 page faults, 171 MB resident); at GOGC=50 and 120 MiB: ~146
//     MB resident, less CPU (96 MiB: ~125 MB on 16 cores, ~113 on 2,
//     see minMemoryTarget). The governor below raises the limit to 1.25×
//     the live heap when the live heap comes within 1/8 of it (more cores
//     decode more parts ahead; an export the sweep must load whole keeps
//     ~1 byte per input byte), so a bigger live set costs memory, never a
//     collector that runs without end.
//   - from 256 MiB: what stays live grows slowly with the input: the
//     compact instance store (phases.Store, ~120 bytes per step or phase
//     instance, pointer-free, so collections do not scan it), the sweep's
//     windows, the statistics of a phase and a row group of
//     phase_instances being encoded (10× large_interleaved, 1.1 GB: ~170
//     MiB at most). GOGC is turned off and the heap collected only at a
//     soft limit of 96 MiB + a tenth of the input (bigLimit: 199 MiB
//     there, ~235 MB resident; 415 MiB for the 3.3 GB 30× export), with
//     the governor raising it to 1.15× the live heap when the live heap
//     comes within 8% of it (the 30× export's live heap reaches ~420 MB
//     at the end of the sweep: ~500 MB resident).
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
	if os.Getenv("GOGC") != "" {
		debug.SetMemoryLimit(max(int64(minMemoryTarget), total*11/10))
		return
	}
	mode.Lock()
	defer mode.Unlock()
	if total < bigInput {
		debug.SetMemoryLimit(minMemoryTarget)
		debug.SetGCPercent(earlyGCPercent)
		early = true
		raiseAt.Store(875)
		raiseTo.Store(1250)
		governorOnce.Do(func() { go governLimit() })
		return
	}
	debug.SetMemoryLimit(bigLimit(total))
	debug.SetGCPercent(-1)
	early = false
	raiseAt.Store(920)
	raiseTo.Store(1150)
	governorOnce.Do(func() { go governLimit() })
}

var governorOnce sync.Once

// mode guards early against a SetMemoryTarget and the governor at once.
var mode sync.Mutex

// early is true while GOGC is earlyGCPercent: the governor sets
// smallGCPercent once the live heap reaches earlyLive.
var early bool

// raiseAt is the share of the soft limit, per mille, past which the
// governor raises the limit to raiseTo per mille of the live heap (the
// last SetMemoryTarget's choice).
var raiseAt, raiseTo atomic.Int64

// governLimit keeps the soft limit above the live heap (see
// SetMemoryTarget): once the live heap passes raiseAt of the limit, the
// limit becomes raiseTo of the live heap.
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
		if n >= earlyLive {
			mode.Lock()
			if early {
				debug.SetGCPercent(smallGCPercent)
				early = false
			}
			mode.Unlock()
		}
		if limit := debug.SetMemoryLimit(-1); n > limit/1000*raiseAt.Load() {
			debug.SetMemoryLimit(n / 1000 * raiseTo.Load())
		}
	}
}
