//go:build unix

package nsys

import "golang.org/x/sys/unix"

// freeSpace is the space an unprivileged user may still write in dir.
func freeSpaceOS(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true //nolint:unconvert // Bsize is int64 on Linux, uint32 on Darwin
}
