// Package btree reads the rows of SQLite tables straight from the pages of a
// database file, following the documented file format
// (https://www.sqlite.org/fileformat2.html): table B-trees, overflow chains
// and the record format.
//
// It exists for speed. An export is written once and never changes, and
// analysis reads its big tables whole, in rowid order. Going through SQLite's
// virtual machine costs about 500 ns per row in pure Go (modernc); decoding
// the records here costs a few tens. Everything else — the schema, small
// queries, aggregates — still goes through SQLite, which also tells this
// package each table's root page.
//
// The reader trusts nothing in the file: every page number, cell offset,
// varint and payload size is bounds-checked, B-tree depth and overflow
// chains are limited, and damage is reported as an error naming the page.
package btree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// ErrUnsupported marks a database this package does not read (a text
// encoding other than UTF-8); callers fall back to SQLite.
var ErrUnsupported = errors.New("unsupported database format")

// CorruptError says where the file contradicts the format.
type CorruptError struct {
	Page   uint32
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("database page %d is damaged (%s)", e.Page, e.Reason)
}

func corrupt(page uint32, format string, args ...any) error {
	return &CorruptError{Page: page, Reason: fmt.Sprintf(format, args...)}
}

// File is an SQLite database opened for direct page reads. It is safe for
// concurrent scans: its only mutable state is the list of released
// scanners, under a mutex.
type File struct {
	r        io.ReaderAt
	pageSize int
	usable   int    // page size less the reserved bytes at the end of each page
	pages    uint32 // pages in the file

	// free holds released scanners with their buffers (read-ahead window,
	// interior pages, overflow space) for the next NewScanner. A table is
	// read in many parts, one scanner each: fresh buffers per part would
	// be fresh memory, a page fault per 4 KiB, each time. Unlike a
	// sync.Pool the list survives collections; it holds at most maxFree.
	mu   sync.Mutex
	free []*Scanner
}

// maxFree bounds the released scanners a File keeps: more than the scans
// that run at once (a few per core), at most maxFree × maxAhead bytes.
const maxFree = 32

// maxDepth bounds the B-tree walk: a real tree of 4 KiB pages holding 2^40
// rows is about 6 levels deep; a cycle in a damaged file is not endless.
const maxDepth = 40

// Open reads the 100-byte header of the database in r (size bytes long).
func Open(r io.ReaderAt, size int64) (*File, error) {
	var h [100]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	if string(h[:16]) != "SQLite format 3\x00" {
		return nil, errors.New("not an SQLite database")
	}
	ps := int(binary.BigEndian.Uint16(h[16:18]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps > 65536 || ps&(ps-1) != 0 {
		return nil, fmt.Errorf("bad page size %d", ps)
	}
	reserved := int(h[20])
	usable := ps - reserved
	if usable < 480 {
		return nil, fmt.Errorf("bad reserved space %d", reserved)
	}
	if enc := binary.BigEndian.Uint32(h[56:60]); enc != 0 && enc != 1 {
		return nil, fmt.Errorf("%w: text encoding %d (UTF-16)", ErrUnsupported, enc)
	}
	pages := size / int64(ps)
	if pages > 1<<32-2 {
		pages = 1<<32 - 2
	}
	return &File{r: r, pageSize: ps, usable: usable, pages: uint32(pages)}, nil
}

// PageSize returns the database page size in bytes.
func (f *File) PageSize() int { return f.pageSize }

// Scanner walks one table B-tree. It reads leaf pages with growing
// read-ahead (exports store a table's leaves mostly in file order), so a
// full scan costs a few large reads rather than one read per page. A
// Scanner is for one goroutine; use one per concurrent scan.
type Scanner struct {
	f       *File
	stop    func() error // checked once per leaf page; nil = never
	ahead   []byte       // read-ahead window: pages [aheadLo, aheadLo+len/pageSize)
	aheadN  int          // pages currently held in ahead
	aheadP  uint32       // first page in ahead
	run     int          // current read-ahead length in pages
	last    uint32       // last leaf page read
	inner   [][]byte     // one buffer per interior level
	over    []byte       // payload reassembled from an overflow chain
	obuf    []byte       // an overflow page outside the read-ahead window
	visits  int64        // B-tree pages visited by this scan
	prev    int64        // the last rowid the scan met (valid when hasPrev)
	hasPrev bool
}

// maxAhead is the largest read-ahead, in bytes. 256 KiB reads cost no
// more per byte than larger ones, and the window is still in the core's
// cache (L2 is 512 KiB–2 MiB) when its records are decoded.
const maxAhead = 256 << 10

// NewScanner returns a scanner of f, reusing the buffers of a released one.
// stop, when not nil, is called once per leaf page; a non-nil result ends
// the scan with that error.
func (f *File) NewScanner(stop func() error) *Scanner {
	f.mu.Lock()
	var s *Scanner
	if n := len(f.free); n > 0 {
		s, f.free[n-1] = f.free[n-1], nil
		f.free = f.free[:n-1]
	}
	f.mu.Unlock()
	if s == nil {
		return &Scanner{f: f, stop: stop, run: 1}
	}
	*s = Scanner{f: f, stop: stop, run: 1, ahead: s.ahead[:0], inner: s.inner, over: s.over[:0], obuf: s.obuf}
	return s
}

// Release hands the scanner and its buffers back to the file for the next
// NewScanner. The scanner must not be used again.
func (s *Scanner) Release() {
	f := s.f
	s.aheadN, s.stop = 0, nil
	f.mu.Lock()
	if len(f.free) < maxFree {
		f.free = append(f.free, s)
	}
	f.mu.Unlock()
}

// Scan calls fn with the rowid and the record of every row of the table
// B-tree rooted at page root whose rowid r satisfies lo ≤ r ≤ hi, in rowid
// order. The record slice is valid only during the call. fn returns false
// to stop early.
//
// Scan checks what SQLite's cursor and integrity check would: every page
// below the root holds at least one cell, and every rowid (leaf or
// interior key) increases and lies within the keys of the cells above it.
// A file whose leaves were swapped or whose rowids were edited is reported
// as a *CorruptError naming the page, never read with rows missing.
func (s *Scanner) Scan(root uint32, lo, hi int64, fn func(rowid int64, record []byte) bool) error {
	s.visits = 0
	s.hasPrev = false
	_, err := s.walk(root, 0, bounds{hi: 1<<63 - 1}, lo, hi, fn)
	return err
}

// bounds are the rowids a subtree may hold, from the keys above it:
// (lo, hi], with no lower bound when !hasLo.
type bounds struct {
	lo, hi int64
	hasLo  bool
}

func (b bounds) holds(r int64) bool { return (!b.hasLo || r > b.lo) && r <= b.hi }

// walk visits the subtree at page p; it reports false when the scan ended
// early (fn said stop, or the rowid passed hi).
func (s *Scanner) walk(p uint32, depth int, in bounds, lo, hi int64, fn func(int64, []byte) bool) (bool, error) {
	if depth > maxDepth {
		return false, corrupt(p, "B-tree deeper than %d levels", maxDepth)
	}
	// A valid tree visits each of its pages once; more visits than the
	// file has pages means the pages form a cycle.
	if s.visits++; s.visits > int64(s.f.pages)+1 {
		return false, corrupt(p, "B-tree pages form a cycle")
	}
	pg, err := s.page(p)
	if err != nil {
		return false, err
	}
	hdr := 0
	if p == 1 {
		hdr = 100
	}
	switch pg[hdr] {
	case 0x05:
		// The walk below refills the read-ahead window: an interior page
		// keeps a copy of its own per level.
		for len(s.inner) <= depth {
			s.inner = append(s.inner, make([]byte, s.f.pageSize))
		}
		inner := s.inner[depth]
		copy(inner, pg)
		return s.interior(p, inner, hdr, depth, in, lo, hi, fn)
	case 0x0d:
		return s.leaf(p, pg, hdr, depth, in, lo, hi, fn)
	default:
		return false, corrupt(p, "page type %#x is not a table B-tree page", pg[hdr])
	}
}

// cells returns the cell count of a B-tree page and the offset of its cell
// pointer array, checked against the page: SQLite refuses a page below the
// root without cells, and an interior root without cells.
func (s *Scanner) cells(p uint32, pg []byte, hdr, hdrLen, depth int) (int, int, error) {
	if hdr+hdrLen > len(pg) {
		return 0, 0, corrupt(p, "page header cut short")
	}
	n := int(binary.BigEndian.Uint16(pg[hdr+3:]))
	ptrs := hdr + hdrLen
	if ptrs+2*n > s.f.usable {
		return 0, 0, corrupt(p, "%d cells do not fit the page", n)
	}
	if n == 0 && depth > 0 {
		return 0, 0, corrupt(p, "a B-tree page below the root has no cells")
	}
	if n == 0 && hdrLen == 12 && p != 1 {
		// SQLite's cursor refuses an interior root without cells (only
		// page 1 may be one, briefly, while the schema is rebalanced).
		return 0, 0, corrupt(p, "an interior root page has no cells")
	}
	return n, ptrs, nil
}

// interiorKey reads the child page and key of cell i of an interior page.
func (s *Scanner) interiorKey(p uint32, pg []byte, ptrs, n, i int) (uint32, int64, error) {
	off := int(binary.BigEndian.Uint16(pg[ptrs+2*i:]))
	if off < ptrs+2*n || off+5 > s.f.usable {
		return 0, 0, corrupt(p, "cell %d at offset %d is outside the page", i, off)
	}
	k, m := varint(pg[off+4 : s.f.usable])
	if m == 0 {
		return 0, 0, corrupt(p, "cell %d has a damaged key", i)
	}
	return binary.BigEndian.Uint32(pg[off:]), int64(k), nil
}

func (s *Scanner) interior(p uint32, pg []byte, hdr, depth int, in bounds, lo, hi int64, fn func(int64, []byte) bool) (bool, error) {
	n, ptrs, err := s.cells(p, pg, hdr, 12, depth)
	if err != nil {
		return false, err
	}
	right := binary.BigEndian.Uint32(pg[hdr+8:])
	child := in // rows of child i have rowids in (key[i-1], key[i]]
	for i := 0; i <= n; i++ {
		var c uint32
		if i < n {
			var key int64
			c, key, err = s.interiorKey(p, pg, ptrs, n, i)
			if err != nil {
				return false, err
			}
			if child.hi = in.hi; !child.holds(key) {
				return false, corrupt(p, "cell %d: key %d is out of order", i, key)
			}
			child.hi = key
		} else {
			c, child.hi = right, in.hi
		}
		if child.hasLo && child.lo >= hi {
			return false, nil // every later row has rowid > hi
		}
		if child.hi >= lo {
			more, err := s.walk(c, depth+1, child, lo, hi, fn)
			if err != nil || !more {
				return more, err
			}
		}
		child.lo, child.hasLo = child.hi, true
	}
	return true, nil
}

func (s *Scanner) leaf(p uint32, pg []byte, hdr, depth int, in bounds, lo, hi int64, fn func(int64, []byte) bool) (bool, error) {
	if s.stop != nil {
		if err := s.stop(); err != nil {
			return false, err
		}
	}
	n, ptrs, err := s.cells(p, pg, hdr, 8, depth)
	if err != nil {
		return false, err
	}
	u := s.f.usable
	// Payloads up to maxLocal sit wholly on the page; larger ones keep
	// a prefix here and the rest in an overflow chain (fileformat2 §1.6).
	maxLocal := u - 35
	minLocal := (u-12)*32/255 - 23
	for i := 0; i < n; i++ {
		off := int(binary.BigEndian.Uint16(pg[ptrs+2*i:]))
		if off < ptrs+2*n || off >= u {
			return false, corrupt(p, "cell %d at offset %d is outside the page", i, off)
		}
		size, m1 := varint(pg[off:u])
		if m1 == 0 {
			return false, corrupt(p, "cell %d has a damaged size", i)
		}
		rowid, m2 := varint(pg[off+m1 : u])
		if m2 == 0 {
			return false, corrupt(p, "cell %d has a damaged rowid", i)
		}
		r := int64(rowid)
		if !in.holds(r) || (s.hasPrev && r <= s.prev) {
			return false, corrupt(p, "cell %d: rowid %d is out of order", i, r)
		}
		s.prev, s.hasPrev = r, true
		if r < lo {
			continue
		}
		if r > hi {
			return false, nil
		}
		start := off + m1 + m2
		if size > 1<<30 {
			return false, corrupt(p, "cell %d claims a %d-byte record", i, size)
		}
		total := int(size)
		var rec []byte
		if total <= maxLocal {
			if start+total > u {
				return false, corrupt(p, "cell %d runs past the page", i)
			}
			rec = pg[start : start+total]
		} else {
			local := minLocal + (total-minLocal)%(u-4)
			if local > maxLocal {
				local = minLocal
			}
			if start+local+4 > u {
				return false, corrupt(p, "cell %d runs past the page", i)
			}
			var err error
			rec, err = s.overflow(p, pg[start:start+local], binary.BigEndian.Uint32(pg[start+local:]), total)
			if err != nil {
				return false, err
			}
		}
		if !fn(r, rec) {
			return false, nil
		}
	}
	return true, nil
}

// Subtrees walks the interior levels of the table B-tree at root breadth
// first and stops at the first level of at least want pages, or at the
// leaves. It returns that level's pages in rowid order and the keys between
// them: page i holds the rowids in (keys[i-1], keys[i]]. It reads only the
// interior pages above that level (and one page of it).
func (f *File) Subtrees(root uint32, want int) (pages []uint32, keys []int64, leaves bool, err error) {
	s := f.NewScanner(nil)
	defer s.Release()
	pages = []uint32{root}
	for depth := 0; ; depth++ {
		if depth > maxDepth {
			return nil, nil, false, corrupt(root, "B-tree deeper than %d levels", maxDepth)
		}
		if len(pages) >= want {
			return pages, keys, false, nil
		}
		var next []uint32
		var nextKeys []int64
		for i, p := range pages {
			pg, err := s.page(p)
			if err != nil {
				return nil, nil, false, err
			}
			hdr := 0
			if p == 1 {
				hdr = 100
			}
			switch pg[hdr] {
			case 0x0d:
				if i == 0 {
					return pages, keys, true, nil
				}
				return nil, nil, false, corrupt(p, "a leaf page beside interior pages")
			case 0x05:
			default:
				return nil, nil, false, corrupt(p, "page type %#x is not a table B-tree page", pg[hdr])
			}
			n, ptrs, err := s.cells(p, pg, hdr, 12, depth)
			if err != nil {
				return nil, nil, false, err
			}
			for c := 0; c < n; c++ {
				child, key, err := s.interiorKey(p, pg, ptrs, n, c)
				if err != nil {
					return nil, nil, false, err
				}
				next, nextKeys = append(next, child), append(nextKeys, key)
			}
			next = append(next, binary.BigEndian.Uint32(pg[hdr+8:]))
			if i < len(keys) {
				nextKeys = append(nextKeys, keys[i])
			}
			if len(next) > int(f.pages) {
				return nil, nil, false, corrupt(p, "B-tree pages form a cycle")
			}
		}
		pages, keys = next, nextKeys
	}
}

// Cells returns the cell count of the table B-tree page p.
func (f *File) Cells(p uint32) (int, error) {
	s := f.NewScanner(nil)
	defer s.Release()
	pg, err := s.page(p)
	if err != nil {
		return 0, err
	}
	hdr := 0
	if p == 1 {
		hdr = 100
	}
	n, _, err := s.cells(p, pg, hdr, 8, 0)
	return n, err
}

// overflow reassembles a record of total bytes from its local prefix and
// the chain of overflow pages starting at next.
func (s *Scanner) overflow(p uint32, local []byte, next uint32, total int) ([]byte, error) {
	per := s.f.usable - 4
	if need := (total - len(local) + per - 1) / per; need > int(s.f.pages) {
		return nil, corrupt(p, "a %d-byte record needs %d overflow pages; the file has %d", total, need, s.f.pages)
	}
	s.over = append(s.over[:0], local...)
	if s.obuf == nil {
		s.obuf = make([]byte, s.f.pageSize)
	}
	for len(s.over) < total {
		if next == 0 {
			return nil, corrupt(p, "overflow chain ends %d %s short", total-len(s.over), plural.Of(total-len(s.over), "byte", "bytes"))
		}
		pg, err := s.readPage(next, s.obuf)
		if err != nil {
			return nil, err
		}
		take := min(per, total-len(s.over))
		s.over = append(s.over, pg[4:4+take]...)
		next = binary.BigEndian.Uint32(pg[:4])
	}
	if next != 0 {
		return nil, corrupt(p, "overflow chain runs on past its %d-byte record (to page %d)", total, next)
	}
	return s.over, nil
}

// readPage returns page p from the read-ahead window if it is there, else
// reads it into buf without touching the window.
func (s *Scanner) readPage(p uint32, buf []byte) ([]byte, error) {
	if p == 0 || p > s.f.pages {
		return nil, corrupt(p, "page number out of range (file has %d %s)", s.f.pages, plural.Of(s.f.pages, "page", "pages"))
	}
	if s.aheadN > 0 && p >= s.aheadP && p < s.aheadP+uint32(s.aheadN) {
		off := int(p-s.aheadP) * s.f.pageSize
		return s.ahead[off : off+s.f.pageSize], nil
	}
	if _, err := s.f.r.ReadAt(buf, int64(p-1)*int64(s.f.pageSize)); err != nil {
		return nil, fmt.Errorf("read page %d: %w", p, err)
	}
	return buf, nil
}

// page returns B-tree page p from the read-ahead window, refilling it when
// p is outside. Consecutive pages double the next read (up to maxAhead);
// a jump starts again from one page.
func (s *Scanner) page(p uint32) ([]byte, error) {
	if p == 0 || p > s.f.pages {
		return nil, corrupt(p, "page number out of range (file has %d %s)", s.f.pages, plural.Of(s.f.pages, "page", "pages"))
	}
	if s.aheadN > 0 && p >= s.aheadP && p < s.aheadP+uint32(s.aheadN) {
		s.last = p
		off := int(p-s.aheadP) * s.f.pageSize
		return s.ahead[off : off+s.f.pageSize], nil
	}
	if p == s.last+1 {
		s.run = min(s.run*2, maxAhead/s.f.pageSize)
	} else {
		s.run = 1
	}
	n := min(uint32(max(s.run, 1)), s.f.pages-p+1)
	need := int(n) * s.f.pageSize
	if cap(s.ahead) < need {
		// At once the largest window a run can need (a scanner is reused
		// for the next part of the table), or the small file whole.
		s.ahead = make([]byte, max(need, min(maxAhead, int(s.f.pages-p+1)*s.f.pageSize)))
	}
	s.ahead = s.ahead[:need]
	if _, err := s.f.r.ReadAt(s.ahead, int64(p-1)*int64(s.f.pageSize)); err != nil {
		s.aheadN = 0
		return nil, fmt.Errorf("read pages %d–%d: %w", p, p+n-1, err)
	}
	s.aheadP, s.aheadN, s.last = p, int(n), p
	return s.ahead[:s.f.pageSize], nil
}

// varint decodes an SQLite varint (big-endian, 7 bits per byte, the ninth
// byte whole) and returns it with its length; length 0 means b is too short.
func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		v = v<<7 | uint64(c&0x7f)
		if c < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}
