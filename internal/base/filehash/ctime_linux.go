package filehash

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// identity is the file's identity as a line of text; ok is false for
// anything but a regular file.
func identity(path string, fi os.FileInfo) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return "", false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	ctime, _ := changeTime(fi)
	return fmt.Sprintf("v1 dev=%d ino=%d size=%d mtime=%d ctime=%d path=%s",
		st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano(), ctime.UnixNano(), abs), true
}

// changeTime is the file's change time (st_ctim).
func changeTime(fi os.FileInfo) (time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(st.Ctim.Unix()), true
}
