package nsys

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/ulikunitz/xz"
	"golang.org/x/sync/errgroup"
)

// xzBlock is one block of a single-stream .xz file, from its index: where
// it lies in the file and in the decompressed data.
type xzBlock struct {
	off, unpadded int64 // block start in the file; header + data + check, without padding
	uoff, usize   int64 // start and size in the decompressed data
}

// xzBlocks reads the stream header and the index of the .xz file in (size
// bytes) and lists its blocks. ok is false, with no error, for anything
// but one stream whose blocks exactly fill it (stream padding, concatenated
// streams): those are decoded in one pass.
func xzBlocks(in io.ReaderAt, size int64) (header []byte, blocks []xzBlock, ok bool) {
	const hdrLen, footLen = 12, 12
	if size < hdrLen+footLen+8 {
		return nil, nil, false
	}
	header = make([]byte, hdrLen)
	foot := make([]byte, footLen)
	if _, err := in.ReadAt(header, 0); err != nil {
		return nil, nil, false
	}
	if _, err := in.ReadAt(foot, size-footLen); err != nil {
		return nil, nil, false
	}
	if !bytes.Equal(header[:6], []byte{0xfd, '7', 'z', 'X', 'Z', 0}) || string(foot[10:]) != "YZ" ||
		!bytes.Equal(foot[8:10], header[6:8]) || crc32.ChecksumIEEE(foot[4:10]) != binary.LittleEndian.Uint32(foot[:4]) {
		return nil, nil, false
	}
	backward := (int64(binary.LittleEndian.Uint32(foot[4:8])) + 1) * 4
	idxAt := size - footLen - backward
	if idxAt < hdrLen || backward > 1<<24 {
		return nil, nil, false
	}
	idx := make([]byte, backward)
	if _, err := in.ReadAt(idx, idxAt); err != nil {
		return nil, nil, false
	}
	if idx[0] != 0 || crc32.ChecksumIEEE(idx[:len(idx)-4]) != binary.LittleEndian.Uint32(idx[len(idx)-4:]) {
		return nil, nil, false
	}
	body := idx[1 : len(idx)-4]
	n, k := binary.Uvarint(body)
	if k <= 0 || n > uint64(len(body)) {
		return nil, nil, false
	}
	body = body[k:]
	off, uoff := int64(hdrLen), int64(0)
	for range n {
		unpadded, k1 := binary.Uvarint(body)
		if k1 <= 0 {
			return nil, nil, false
		}
		usize, k2 := binary.Uvarint(body[k1:])
		if k2 <= 0 || unpadded == 0 || unpadded > uint64(size) || usize > 1<<50 {
			return nil, nil, false
		}
		body = body[k1+k2:]
		blocks = append(blocks, xzBlock{off: off, unpadded: int64(unpadded), uoff: uoff, usize: int64(usize)})
		off += (int64(unpadded) + 3) &^ 3
		uoff += int64(usize)
	}
	if off != idxAt || len(body) > 3 || bytes.ContainsFunc(body, func(r rune) bool { return r != 0 }) {
		return nil, nil, false
	}
	return header, blocks, true
}

// blockStream makes block b a stream of its own: the file's stream header,
// the block, and an index and footer listing only it. The xz reader then
// checks the block (its check, its sizes against that index) as in the
// whole file.
func blockStream(in io.ReaderAt, header []byte, b xzBlock) io.Reader {
	var idx []byte
	idx = append(idx, 0)
	idx = binary.AppendUvarint(idx, 1)
	idx = binary.AppendUvarint(idx, uint64(b.unpadded))
	idx = binary.AppendUvarint(idx, uint64(b.usize))
	for len(idx)%4 != 0 {
		idx = append(idx, 0)
	}
	idx = binary.LittleEndian.AppendUint32(idx, crc32.ChecksumIEEE(idx))
	foot := make([]byte, 12)
	binary.LittleEndian.PutUint32(foot[4:8], uint32(len(idx)/4-1))
	copy(foot[8:10], header[6:8])
	binary.LittleEndian.PutUint32(foot[:4], crc32.ChecksumIEEE(foot[4:10]))
	copy(foot[10:], "YZ")
	tail := append(idx, foot...)
	return io.MultiReader(bytes.NewReader(header), io.NewSectionReader(in, b.off, (b.unpadded+3)&^3), bytes.NewReader(tail))
}

// decompressBlocks decodes the blocks of in into disk concurrently, each
// written at its place (xz -T writes a large file as several blocks).
func decompressBlocks(ctx context.Context, in io.ReaderAt, header []byte, blocks []xzBlock, disk string) error {
	// The index says the decoded size: the free space is checked before
	// anything is written, and the first block's start must be an SQLite
	// header declaring that size (see sqliteGuard).
	last := blocks[len(blocks)-1]
	total := last.uoff + last.usize
	if err := checkRoom(filepath.Dir(disk), total); err != nil {
		return err
	}
	r, err := xz.ReaderConfig{SingleStream: true}.NewReader(bufio.NewReaderSize(blockStream(in, header, blocks[0]), xzBuffer))
	if err != nil {
		return err
	}
	head := make([]byte, sqliteHeaderLen)
	if _, err := io.ReadFull(r, head); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	size, err := declaredSize(head)
	if err != nil {
		return err
	}
	if size > 0 && total > size {
		return &guardError{problem: fmt.Sprintf("the decompressed data runs past the %d bytes its SQLite header declares (%d)", size, total), hint: "check the file with `xz -t`, or re-export"}
	}
	out, err := os.Create(disk)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, b := range blocks {
		g.Go(func() error {
			r, err := xz.ReaderConfig{SingleStream: true}.NewReader(bufio.NewReaderSize(blockStream(in, header, b), xzBuffer))
			if err != nil {
				return err
			}
			buf := make([]byte, xzBuffer)
			at := b.uoff
			for {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				n, err := r.Read(buf)
				if at+int64(n) > b.uoff+b.usize {
					return fmt.Errorf("block at byte %d decodes to more than its %d bytes", b.off, b.usize)
				}
				if n > 0 {
					if _, werr := out.WriteAt(buf[:n], at); werr != nil {
						return werr
					}
					at += int64(n)
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
			}
			if at != b.uoff+b.usize {
				return fmt.Errorf("block at byte %d decodes to %d bytes, its index says %d", b.off, at-b.uoff, b.usize)
			}
			return nil
		})
	}
	err = g.Wait()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
