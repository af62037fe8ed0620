//go:build unix

package cli_test

import (
	"testing"

	"golang.org/x/sys/unix"
)

// makeFIFO creates a named pipe at path.
func makeFIFO(t *testing.T, path string) string {
	t.Helper()
	if err := unix.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
