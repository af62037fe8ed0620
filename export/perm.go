package export

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Outputs are created with the modes an ordinary program uses, 0666 for a
// file and 0777 for a directory, less the process's umask: under umask 077
// a report stays private, under 022 it is 0644 as before. os.CreateTemp and
// os.MkdirTemp make 0600 and 0700, and widening them with chmod ignored
// the umask, so the staging files and directories are made here. A file or
// dataset that is replaced keeps the mode it had.
const (
	filePerm = 0o666
	dirPerm  = 0o777
)

// createStaging creates a new file prefix+RANDOM in dir, mode filePerm less
// the umask.
func createStaging(dir, prefix string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, filePerm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, prefix+"*"), Err: fs.ErrExist}
}

// mkdirStaging creates a new directory prefix+RANDOM in dir, mode dirPerm
// less the umask.
func mkdirStaging(dir, prefix string) (string, error) {
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		err := os.Mkdir(name, dirPerm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, err
	}
	return "", &fs.PathError{Op: "mkdirtemp", Path: filepath.Join(dir, prefix+"*"), Err: fs.ErrExist}
}

// keepMode gives staged the permission bits of old when old exists, so
// that replacing a file or dataset does not change who may read it.
func keepMode(staged, old string) error {
	st, err := os.Stat(old)
	if err != nil {
		return nil // nothing to keep: the new output has the umask's mode
	}
	return os.Chmod(staged, st.Mode().Perm())
}
