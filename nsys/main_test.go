package nsys

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain collects at GOGC=400 unless GOGC is set: the tests read the
// same exports hundreds of times, and at the default the collector took
// about a sixth of the package's CPU (no test here measures memory).
func TestMain(m *testing.M) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(m.Run())
}
