package nsys

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ulikunitz/xz"

	"github.com/nsysphase/nsysphase/internal/base/xzshare"
)

// xzBuffer sizes the reads of the compressed file and the writes of the
// copy. The xz decoder asks for a few bytes at a time: unbuffered, decoding
// a large export took 157 s instead of 11 s.
const xzBuffer = 1 << 20

// DecompressProgress is told, while a .xz export is decompressed, how many
// of its compressed bytes have been read so far and how many it has: a
// progress display's counter for the one slow step of reading a .xz.
type DecompressProgress func(path string, readBytes, totalBytes int64)

type decompressProgressKey struct{}

// WithDecompressProgress returns a context under which Open reports the
// decompression of .xz inputs to f (from several goroutines when inputs are
// read concurrently; each call names its input).
func WithDecompressProgress(ctx context.Context, f DecompressProgress) context.Context {
	return context.WithValue(ctx, decompressProgressKey{}, f)
}

// countingReader reports the bytes read through it to a DecompressProgress;
// behind the bufio.Reader it sees one call per xzBuffer.
type countingReader struct {
	r           io.Reader
	path        string
	read, total int64
	report      DecompressProgress
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.read += int64(n)
		c.report(c.path, c.read, c.total)
	}
	return n, err
}

// xzCommand is the xz program used when found on PATH: liblzma decodes
// about twice as fast as the pure-Go decoder (the fallback), which on a
// large export is most of the run. Tests set it to "" to use the fallback.
var xzCommand = "xz"

// xzMagic starts every .xz stream.
var xzMagic = []byte{0xFD, '7', 'z', 'X', 'Z', 0x00}

// openXZ decompresses FILE.sqlite.xz into a private temporary file and opens
// that (exports compress 6–10× with xz). The input itself is only read;
// Close removes the copy.
func openXZ(ctx context.Context, path string) (*File, error) {
	if share := xzshare.Decompressed; share != nil {
		if disk, ok := share(path); ok { // tests: a copy shared by the process, never removed
			return openSQLite(ctx, disk, path)
		}
	}
	in, err := openInterruptible(ctx, path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &InputError{Path: path, Problem: "cannot read file", Err: err}
	}
	defer in.Close()
	// A pipe's read waits for its writer: closing the file ends the wait
	// when the run is cancelled (SIGTERM, SIGINT).
	stop := context.AfterFunc(ctx, func() { in.Close() })
	defer stop()
	head := make([]byte, len(xzMagic))
	if _, err := io.ReadFull(in, head); err != nil || !bytes.Equal(head, xzMagic) {
		return nil, &InputError{Path: path, Problem: "not a valid .xz file", Err: err, Hint: "decompress it with `xz -d` and pass the .sqlite"}
	}
	return decompressXZ(ctx, path, in, head)
}

// decompressXZ decompresses the xz stream in, whose first bytes head were
// read already, into a private temporary copy and opens it.
func decompressXZ(ctx context.Context, path string, in *os.File, head []byte) (*File, error) {
	// The magic goes back in front rather than by a seek: the input may be
	// a pipe.
	var rest io.Reader = in
	if report, ok := ctx.Value(decompressProgressKey{}).(DecompressProgress); ok && report != nil {
		if st, err := in.Stat(); err == nil {
			report(path, int64(len(head)), st.Size())
			rest = &countingReader{r: in, path: path, read: int64(len(head)), total: st.Size(), report: report}
		}
	}
	src := io.MultiReader(bytes.NewReader(head), rest)
	tmp, err := os.MkdirTemp("", "nsysphase-*")
	if err != nil {
		return nil, &InputError{Path: path, Problem: "cannot create a temporary directory", Err: err}
	}
	disk := filepath.Join(tmp, strings.TrimSuffix(filepath.Base(path), ".xz"))
	if err := decompressTo(ctx, in, src, disk); err != nil {
		os.RemoveAll(tmp)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if ge, ok := asGuardError(err); ok {
			return nil, &InputError{Path: path, Problem: ge.problem, Hint: ge.hint}
		}
		return nil, &InputError{Path: path, Problem: "cannot decompress", Err: err, Hint: "check the file with `xz -t`"}
	}
	return privateCopy(ctx, disk, path, tmp)
}

// decompressTo writes the decoded stream src (read from in) into a new file
// disk (in, when not nil, is the file src reads, for block access): through the xz program when there is one (liblzma, about twice the
// Go decoder's speed); else, for a regular file of several blocks (xz -T
// writes large files so), block by block on all cores; else in one pass.
func decompressTo(ctx context.Context, in *os.File, src io.Reader, disk string) error {
	if xzCommand != "" {
		if bin, err := exec.LookPath(xzCommand); err == nil {
			return decompressExec(ctx, bin, src, disk)
		}
	}
	if in != nil {
		if st, err := in.Stat(); err == nil && st.Mode().IsRegular() {
			if header, blocks, ok := xzBlocks(in, st.Size()); ok && len(blocks) >= 2 {
				return decompressBlocks(ctx, in, header, blocks, disk)
			}
		}
	}
	r, err := xz.NewReader(bufio.NewReaderSize(src, xzBuffer))
	if err != nil {
		return err
	}
	return decompress(ctx, r, disk)
}

// decompressExec runs `xz -dc` from src into disk; the context kills it.
func decompressExec(ctx context.Context, bin string, src io.Reader, disk string) error {
	out, err := os.Create(disk)
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "-dc", "-T0") // -T0: blocks in parallel where xz can
	// After a cancel, do not wait on a stdin copy blocked reading a pipe.
	cmd.WaitDelay = time.Second
	// Reads of xzBuffer bytes: the progress counter moves once per MiB.
	// The output goes through the guard: a refusal closes the pipe, and xz
	// stops at its next write.
	guard := newSQLiteGuard(out, disk)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bufio.NewReaderSize(src, xzBuffer), guard, &stderr
	err = cmd.Run()
	switch {
	case guard.refused != nil:
		err = guard.refused
	case err == nil:
		err = guard.finish()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if _, ok := asGuardError(err); ok {
		return err
	}
	if err != nil && stderr.Len() > 0 {
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return err
}

// decompress copies r into a new file disk through a buffered writer,
// stopping early when ctx is done.
func decompress(ctx context.Context, r *xz.Reader, disk string) error {
	out, err := os.Create(disk)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, xzBuffer)
	guard := newSQLiteGuard(w, disk)
	buf := make([]byte, xzBuffer)
	for err == nil {
		if ctx.Err() != nil {
			err = ctx.Err()
			break
		}
		var n int
		n, err = r.Read(buf)
		if n > 0 {
			if _, werr := guard.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
	}
	if errors.Is(err, io.EOF) {
		err = guard.finish()
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// openInterruptible opens path for reading. A regular file opens at once; a
// named pipe (a .sqlite.xz piped in) blocks in open until a writer comes,
// so it is opened aside and a cancelled ctx (SIGTERM, SIGINT) returns at
// once instead of never.
func openInterruptible(ctx context.Context, path string) (*os.File, error) {
	if st, err := os.Stat(path); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return os.Open(path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
		go func() { // the open returns when a writer comes, if ever
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
