package nsys

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// openStream opens an export that is not a regular file: a pipe
// (`nsysphase analyze /dev/stdin`, `<(xz -dc run.sqlite.xz)`) or a
// character device. SQLite reads at random offsets, which a pipe cannot
// give, so the stream is copied into a private temporary file first — or
// decompressed into one when it is xz, whatever its name. Its first bytes
// say which; anything else is refused before a byte is written.
func openStream(ctx context.Context, path string) (*File, error) {
	// Opened without waiting for a writer: a named pipe nobody writes to
	// reads as empty at once instead of blocking the run (a pipe from the
	// shell has its writer already); reads still wait for data.
	in, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &InputError{Path: path, Problem: "cannot read file", Err: err}
	}
	defer in.Close()
	stop := context.AfterFunc(ctx, func() { in.Close() })
	defer stop()
	head := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(in, head)
	head = head[:n]
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case n == 0 && (err == nil || errors.Is(err, io.EOF)):
		return nil, &InputError{Path: path, Problem: "empty input (the stream ended before any byte)", Hint: "start the program that writes the export into the pipe first, or pass the export's file"}
	case bytes.HasPrefix(head, xzMagic):
		return decompressXZ(ctx, path, in, head)
	case !bytes.Equal(head, sqliteMagic):
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &InputError{Path: path, Problem: "cannot read file", Err: err}
		}
		return nil, &InputError{Path: path, Problem: "not an Nsight Systems export (the stream is neither SQLite nor xz)", Hint: "pipe in the .sqlite written by `nsys export --type sqlite`, or its .xz"}
	}
	tmp, err := os.MkdirTemp("", "nsysphase-*")
	if err != nil {
		return nil, &InputError{Path: path, Problem: "cannot create a temporary directory", Err: err}
	}
	disk := filepath.Join(tmp, "stdin.sqlite")
	if err := copyStream(disk, io.MultiReader(bytes.NewReader(head), in)); err != nil {
		os.RemoveAll(tmp)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &InputError{Path: path, Problem: "cannot copy the stream to a temporary file", Err: err, Hint: "check the space in $TMPDIR"}
	}
	return privateCopy(ctx, disk, path, tmp)
}

// copyStream writes src to a new file disk.
func copyStream(disk string, src io.Reader) error {
	out, err := os.OpenFile(disk, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, src)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
