package phases

import (
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// openFixture opens fx for the test and closes it after.
func openFixture(t testing.TB, fx fixture.Fixture) *nsys.File {
	t.Helper()
	f, err := nsys.Open(fx.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
