// Package regular refuses, before opening it, a path that should be a file
// and is a named pipe, device, socket or directory: opening a FIFO blocks
// until something writes to it (forever, in CI), and reading a device
// never ends.
package regular

import (
	"fmt"
	"io/fs"
	"os"
)

// Check returns nil when path is a regular file (after symlinks) or does
// not exist (the caller's open names that problem); else an error saying
// what it is: "is a named pipe (FIFO), not a regular file".
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("is %s, not a regular file", Kind(st.Mode()))
}

// Kind names a file mode for an error message.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	}
	return "not a regular file"
}
