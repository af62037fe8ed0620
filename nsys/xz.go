package nsys

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ulikunitz/xz"
)

// xzBuffer sizes the reads of the compressed file and the writes of the
// copy. The xz decoder asks for a few bytes at a time: unbuffered, decoding
// a large export took 157 s instead of 11 s.
const xzBuffer = 1 << 20

// openXZ decompresses FILE.sqlite.xz into a private temporary file and opens
// that (exports compress 6–10× with xz). The input itself is only read;
// Close removes the copy.
func openXZ(ctx context.Context, path string) (*File, error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, &InputError{Path: path, Problem: "cannot read file", Err: err}
	}
	defer in.Close()
	// A file of several blocks (xz -T writes large files so) is decoded
	// block by block on all cores; anything else in one pass.
	var header []byte
	var blocks []xzBlock
	if st, err := in.Stat(); err == nil {
		var ok bool
		if header, blocks, ok = xzBlocks(in, st.Size()); !ok || len(blocks) < 2 {
			blocks = nil
		}
	}
	var r *xz.Reader
	if blocks == nil {
		if r, err = xz.NewReader(bufio.NewReaderSize(in, xzBuffer)); err != nil {
			return nil, &InputError{Path: path, Problem: "not a valid .xz file", Err: err, Hint: "decompress it with `xz -d` and pass the .sqlite"}
		}
	}
	tmp, err := os.MkdirTemp("", "nsysphase-*")
	if err != nil {
		return nil, &InputError{Path: path, Problem: "cannot create a temporary directory", Err: err}
	}
	disk := filepath.Join(tmp, strings.TrimSuffix(filepath.Base(path), ".xz"))
	if blocks != nil {
		err = decompressBlocks(ctx, in, header, blocks, disk)
	} else {
		err = decompress(ctx, r, disk)
	}
	if err != nil {
		os.RemoveAll(tmp)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &InputError{Path: path, Problem: "cannot decompress", Err: err, Hint: "check the file with `xz -t`"}
	}
	return privateCopy(ctx, disk, path, tmp)
}

// decompress copies r into a new file disk through a buffered writer,
// stopping early when ctx is done.
func decompress(ctx context.Context, r *xz.Reader, disk string) error {
	out, err := os.Create(disk)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, xzBuffer)
	buf := make([]byte, xzBuffer)
	for err == nil {
		if ctx.Err() != nil {
			err = ctx.Err()
			break
		}
		var n int
		n, err = r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
