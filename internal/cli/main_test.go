package cli_test

import (
	"os"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// runMainEnv makes the test binary act as nsysphase itself: tests that need
// a separate process (signals) run os.Args[0] with it set and the command
// line as arguments.
const runMainEnv = "NSYSPHASE_TEST_RUN_MAIN"

// TestMain runs nsysphase itself under runMainEnv; otherwise it shares one
// decompressed copy of each fixture .xz among the commands the tests run
// (see fixture.ShareDecompressed), with a cache directory of its own.
func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	fixture.ShareDecompressed()
	// Hash sums remembered by the commands go to a cache of this run, not
	// the user's.
	cache, err := os.MkdirTemp("", "nsysphase-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}
