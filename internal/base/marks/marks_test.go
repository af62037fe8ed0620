package marks

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"
	"time"
)

func capture(t *testing.T, enabled bool) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	oldOn, oldOut := on, out
	on, out = enabled, &b
	t.Cleanup(func() { on, out = oldOn, oldOut })
	return &b
}

func TestOff(t *testing.T) {
	b := capture(t, false)
	Mark("x")
	Markf("y %d", 1)
	var tl Tally
	tl.Start()
	tl.Lap("a")
	tl.Print("loop")
	if b.Len() != 0 {
		t.Errorf("printed %q with marks off", b)
	}
}

func TestMarkAndTally(t *testing.T) {
	b := capture(t, true)
	Markf("read %d rows", 3)
	var tl Tally
	tl.Start()
	for range 2 {
		time.Sleep(2 * time.Millisecond)
		tl.Lap("sleep")
		tl.Lap("nothing")
	}
	tl.Print("loop")
	lines := regexp.MustCompile(`(?m)^mark +[0-9.]+ ms  (.*)$`).FindAllStringSubmatch(b.String(), -1)
	if len(lines) != 2 || lines[0][1] != "read 3 rows" {
		t.Fatalf("output %q", b)
	}
	m := regexp.MustCompile(`^loop \(ms\): sleep ([0-9.]+) nothing ([0-9.]+)$`).FindStringSubmatch(lines[1][1])
	if m == nil {
		t.Fatalf("tally line %q", lines[1][1])
	}
	if ms, err := strconv.ParseFloat(m[1], 64); err != nil || ms < 4 {
		t.Errorf("sleep laps sum to %s ms, want ≥ 4 (two sleeps of 2 ms)", m[1])
	}
}
