package export

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchangeDirs swaps the directories a and b in one atomic step
// (renameat2 RENAME_EXCHANGE), so a reader of b sees the old or the new
// dataset, never a mix; on file systems without it, it falls back to two
// renames.
func exchangeDirs(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EOPNOTSUPP) {
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return exchangeByRenames(a, b)
}

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
