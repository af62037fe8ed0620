package export

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// An output named /dev/stdout (or /dev/stderr, /dev/fd/N, /proc/self/fd/N,
// or a symlink to one) is a descriptor this process already holds, not a
// file to replace: the kernel's link leads to whatever the shell opened,
// and a rename over its target once wiped `… -o /dev/stdout >> ci.log`
// (the log was replaced by the report). Such an output is streamed into
// the descriptor as it is, keeping the shell's append mode or pipe.

// OutputDescriptor reports whether path names, directly or through
// symlinks, one of this process's open file descriptors, and which.
func OutputDescriptor(path string) (int, bool) {
	for range 40 { // like the kernel's symlink limit
		if fd, ok := descriptorName(path); ok {
			return fd, true
		}
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			return 0, false
		}
		target, err := os.Readlink(path)
		if err != nil {
			return 0, false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return 0, false
}

// descriptorName recognises the names of a descriptor of this process.
func descriptorName(path string) (int, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, false
	}
	switch abs {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	own := "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/"
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", own} {
		if rest, ok := strings.CutPrefix(abs, dir); ok {
			fd, err := strconv.Atoi(rest)
			return fd, err == nil && fd >= 0
		}
	}
	return 0, false
}

// writeDescriptor streams what fill produces into descriptor fd, left open.
func writeDescriptor(fd int, fill func(io.Writer) error) error {
	var f *os.File
	switch fd {
	case 0:
		f = os.Stdin
	case 1:
		f = os.Stdout
	case 2:
		f = os.Stderr
	default:
		f = os.NewFile(uintptr(fd), "/dev/fd/"+strconv.Itoa(fd))
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := fill(bw); err != nil {
		return err
	}
	return bw.Flush()
}
