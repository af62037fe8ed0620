package nsys

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
)

// A .xz input is decompressed into the temporary directory before SQLite
// opens it. A small .xz can expand to gigabytes (772 KB of zeros became
// 4 GiB), so the decoded stream is checked as it is written: its first 100
// bytes must be an SQLite header, the stream may not run past the size that
// header declares, and that size must fit in the free space of the
// temporary directory. A refusal stops the decoder at once.

// guardError is a refusal of the decoded stream, worded for the user.
type guardError struct{ problem, hint string }

func (e *guardError) Error() string { return e.problem }

// sqliteHeaderLen is the length of the SQLite database header.
const sqliteHeaderLen = 100

// declaredSize checks an SQLite header and returns the database size it
// declares (page size × page count), or -1 when the header's page count is
// not to be trusted (an older writer: SQLite then ignores it too).
func declaredSize(head []byte) (int64, error) {
	if len(head) < sqliteHeaderLen || !bytes.HasPrefix(head, sqliteMagic) {
		return 0, &guardError{problem: "the decompressed data is not an SQLite database (no SQLite header at its start)", hint: "compress the .sqlite written by `nsys export --type sqlite` with xz"}
	}
	pageSize := int64(binary.BigEndian.Uint16(head[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		return 0, &guardError{problem: fmt.Sprintf("the decompressed data has a damaged SQLite header (page size %d)", pageSize), hint: hintReexport}
	}
	pages := int64(binary.BigEndian.Uint32(head[28:32]))
	changes, validFor := binary.BigEndian.Uint32(head[24:28]), binary.BigEndian.Uint32(head[92:96])
	if pages == 0 || changes != validFor {
		return -1, nil
	}
	return pages * pageSize, nil
}

// checkRoom refuses a database of size bytes that the free space of dir
// cannot hold (nothing is refused where the free space is unknown).
func checkRoom(dir string, size int64) error {
	free, ok := freeSpace(dir)
	if !ok || size <= free {
		return nil
	}
	return &guardError{
		problem: fmt.Sprintf("decompressed, it takes %d MB, and the temporary directory %s has %d MB free", size>>20, dir, free>>20),
		hint:    "set TMPDIR to a directory with more room, or pass the decompressed .sqlite",
	}
}

// sqliteGuard passes a decoded stream to w while it is a plausible SQLite
// database: see the comment at the top of this file.
type sqliteGuard struct {
	w       io.Writer
	dir     string // the temporary directory
	head    []byte
	limit   int64 // the declared size; -1: unknown, or the header is not read yet
	byRoom  bool  // limit is the free space (the header declares no size)
	written int64
	refused error // the first refusal (exec reports the decoder's SIGPIPE instead)
}

func newSQLiteGuard(w io.Writer, disk string) *sqliteGuard {
	return &sqliteGuard{w: w, dir: filepath.Dir(disk), limit: -1}
}

func (g *sqliteGuard) Write(p []byte) (int, error) {
	n, err := g.write(p)
	if _, ok := asGuardError(err); ok && g.refused == nil {
		g.refused = err
	}
	return n, err
}

func (g *sqliteGuard) write(p []byte) (int, error) {
	if len(g.head) < sqliteHeaderLen {
		g.head = append(g.head, p[:min(len(p), sqliteHeaderLen-len(g.head))]...)
		if len(g.head) == sqliteHeaderLen {
			size, err := declaredSize(g.head)
			if err != nil {
				return 0, err
			}
			if size > 0 {
				if err := checkRoom(g.dir, size); err != nil {
					return 0, err
				}
			} else if free, ok := freeSpace(g.dir); ok {
				size, g.byRoom = free, true // no size declared: the free space bounds it
			}
			g.limit = size
		}
	}
	if g.limit >= 0 && g.written+int64(len(p)) > g.limit {
		if g.byRoom {
			return 0, &guardError{problem: fmt.Sprintf("decompressed, it takes more than the %d MB free in the temporary directory %s", g.limit>>20, g.dir),
				hint: "set TMPDIR to a directory with more room, or pass the decompressed .sqlite"}
		}
		return 0, &guardError{problem: fmt.Sprintf("the decompressed data runs past the %d bytes its SQLite header declares", g.limit), hint: "check the file with `xz -t`, or re-export"}
	}
	n, err := g.w.Write(p)
	g.written += int64(n)
	return n, err
}

// finish refuses a stream too short to hold an SQLite header.
func (g *sqliteGuard) finish() error {
	if len(g.head) < sqliteHeaderLen {
		_, err := declaredSize(g.head)
		return err
	}
	return nil
}

// asGuardError returns err's refusal, if it is one.
func asGuardError(err error) (*guardError, bool) {
	var ge *guardError
	ok := errors.As(err, &ge)
	return ge, ok
}

// freeSpace is the space left in a directory (a variable for tests).
var freeSpace = freeSpaceOS
