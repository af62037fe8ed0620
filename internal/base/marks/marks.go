// Package marks prints the time of named points of a run to standard error
// when NSYSPHASE_MARKS is set: how long each stage took on the critical
// path, for the performance notes, without a profiler. Off, a mark costs a
// load and a branch.
package marks

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

var (
	on    = os.Getenv("NSYSPHASE_MARKS") != ""
	start = time.Now()
	mu    sync.Mutex
	out   io.Writer = os.Stderr
)

// Mark prints the milliseconds since the process started (this package's
// initialisation) and what was reached.
func Mark(what string) {
	if !on {
		return
	}
	d := time.Since(start)
	mu.Lock()
	fmt.Fprintf(out, "mark %8.1f ms  %s\n", float64(d.Microseconds())/1000, what)
	mu.Unlock()
}

// Markf is Mark of a formatted text.
func Markf(format string, args ...any) {
	if on {
		Mark(fmt.Sprintf(format, args...))
	}
}

// Tally sums the time one goroutine spends in named stretches of a loop
// (each Lap ends one, begun by the Lap or Start before it); Print prints
// the sums. Its zero value is ready; off, it records nothing.
type Tally struct {
	names []string
	sums  []time.Duration
	last  time.Time
}

// Start begins the first stretch.
func (t *Tally) Start() {
	if on {
		t.last = time.Now()
	}
}

// Lap ends the current stretch, counting it as name, and begins the next.
func (t *Tally) Lap(name string) {
	if !on {
		return
	}
	now := time.Now()
	i := 0
	for i < len(t.names) && t.names[i] != name {
		i++
	}
	if i == len(t.names) {
		t.names, t.sums = append(t.names, name), append(t.sums, 0)
	}
	t.sums[i] += now.Sub(t.last)
	t.last = now
}

// Print marks the sums, in the order the names were first met.
func (t *Tally) Print(what string) {
	if !on {
		return
	}
	var b []byte
	for i, n := range t.names {
		b = fmt.Appendf(b, " %s %.1f", n, float64(t.sums[i].Microseconds())/1000)
	}
	Mark(what + " (ms):" + string(b))
}
