package memtune

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestSetMemoryTargetBigInput: from 256 MiB of input the heap is collected
// at a soft limit of 96 MiB + a tenth of the input, GOGC off, and the
// governor raises the limit once the live heap comes within 8% of it
// instead of letting the collector run without end.
func TestSetMemoryTargetBigInput(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" || os.Getenv("GOGC") != "" {
		t.Skip("GOMEMLIMIT or GOGC set: SetMemoryTarget leaves the collector alone")
	}
	defer debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetGCPercent(100)
	small := filepath.Join(t.TempDir(), "small.sqlite")
	if err := os.WriteFile(small, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	SetMemoryTarget([]string{small})
	if got := debug.SetMemoryLimit(-1); got != minMemoryTarget {
		t.Errorf("small input: limit %d, want %d", got, minMemoryTarget)
	}
	isEarly := func() bool { mode.Lock(); defer mode.Unlock(); return early }
	mode.Lock() // the governor cannot change GOGC between the read and its restore
	if p := debug.SetGCPercent(earlyGCPercent); p != earlyGCPercent || !early {
		t.Errorf("small input: GOGC %d (early %v), want %d while the live heap is small", p, early, earlyGCPercent)
	}
	mode.Unlock()
	heap := make([]byte, earlyLive+8<<20) // the live heap past earlyLive
	for i := range heap {
		heap[i] = byte(i)
	}
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	for isEarly() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetGCPercent(smallGCPercent); got != smallGCPercent {
		t.Errorf("small input, live heap of %d MiB: GOGC %d, want %d", len(heap)>>20, got, smallGCPercent)
	}
	runtime.KeepAlive(heap)
	runtime.GC()
	big := filepath.Join(t.TempDir(), "big.sqlite")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(300 << 20); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	SetMemoryTarget([]string{big})
	want := int64(96<<20 + 30<<20)
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Errorf("300 MiB input: limit %d, want %d", got, want)
	}
	if old := debug.SetGCPercent(-1); old != -1 {
		t.Errorf("300 MiB input: GOGC %d, want off", old)
	}
	live := make([]byte, 128<<20) // past 92% of 126 MiB
	for i := range live {
		live[i] = byte(i)
	}
	runtime.GC()
	deadline = time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) == want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got < 128<<20*9/8 {
		t.Errorf("live heap of 128 MiB: limit still %d MiB", got>>20)
	}
	runtime.KeepAlive(live)
}
