package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ulikunitz/xz"

	"github.com/nsysphase/nsysphase/nsys"
)

// Materialize returns a path SQLite can open. Exports compress 6–10× with xz,
// so FILE.sqlite.xz is accepted and decompressed to a private temp file that
// cleanup removes; the input itself is only read.
func Materialize(path string) (local string, cleanup func(), err error) {
	noop := func() {}
	if !strings.HasSuffix(path, ".xz") {
		return path, noop, nil
	}
	in, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", noop, &nsys.InputError{Path: path, Problem: "no such file", Hint: "check the path"}
		}
		return "", noop, &nsys.InputError{Path: path, Problem: "cannot read file", Err: err}
	}
	defer in.Close()
	r, err := xz.NewReader(in)
	if err != nil {
		return "", noop, &nsys.InputError{Path: path, Problem: "not a valid .xz file", Err: err, Hint: "decompress it with `xz -d` and pass the .sqlite"}
	}
	dir, err := os.MkdirTemp("", "nsysphase-*")
	if err != nil {
		return "", noop, fmt.Errorf("decompress %s: %w", path, err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	local = filepath.Join(dir, strings.TrimSuffix(filepath.Base(path), ".xz"))
	out, err := os.Create(local)
	if err == nil {
		_, err = io.Copy(out, r)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		cleanup()
		return "", noop, &nsys.InputError{Path: path, Problem: "cannot decompress", Err: err, Hint: "check the file with `xz -t`"}
	}
	return local, cleanup, nil
}

// RenamePath reports errors about a decompressed temp copy under the name the
// user gave.
func RenamePath(err error, local, user string) error {
	if local == user {
		return err
	}
	var ie *nsys.InputError
	if errors.As(err, &ie) && ie.Path == local {
		c := *ie
		c.Path = user
		return &c
	}
	return err
}

// OpenInput opens an export given by the user (.sqlite or .sqlite.xz)
// read-only; close releases it and any decompressed copy.
func OpenInput(ctx context.Context, path string) (*nsys.File, func(), error) {
	local, cleanup, err := Materialize(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := nsys.OpenContext(ctx, local)
	if err != nil {
		cleanup()
		return nil, nil, RenamePath(err, local, path)
	}
	return f, func() { f.Close(); cleanup() }, nil
}
