package cli_test

import (
	"os"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
)

// runMainEnv makes the test binary act as nsysphase itself: tests that need
// a separate process (signals) run os.Args[0] with it set and the command
// line as arguments.
const runMainEnv = "NSYSPHASE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
