package cli_test

import (
	"os"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestMain shares one decompressed copy of each fixture .xz among the
// commands the tests run (see fixture.ShareDecompressed).
func TestMain(m *testing.M) {
	fixture.ShareDecompressed()
	os.Exit(m.Run())
}
