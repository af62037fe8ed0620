// Package corrset is a set of one process's CUDA correlation ids, built for
// the ids' shape: small integers that grow with time, dense within a
// process. The engine (package phases) keeps several per process (ids seen,
// used, let go) and the streamed vendor projection (package projection)
// two, so the set lives below both.
package corrset

// Set is a set of correlation ids: a bitmap from base, the first id added
// less 2^20, so ids that start high cost nothing below. top, the largest id
// in it, answers most lookups without the bitmap: ids grow with time, and
// callers mostly ask about ids newer than the set's. Negative ids are never
// members. The zero Set is empty; a nil *Set answers Has.
type Set struct {
	base int32
	top  int32    // when bits != nil
	bits []uint64 // nil: empty
}

// Add inserts id (a negative id is ignored).
func (c *Set) Add(id int32) {
	if id < 0 {
		return
	}
	if c.bits == nil || id > c.top {
		c.top = id
	}
	if c.bits == nil || id < c.base {
		// First id, or one below the bitmap: start it lower.
		nb := max(0, id-1<<20) &^ 63
		if c.bits != nil {
			grown := make([]uint64, int(c.base-nb)>>6+len(c.bits))
			copy(grown[int(c.base-nb)>>6:], c.bits)
			c.bits = grown
		}
		c.base = nb
	}
	w := int(id-c.base) >> 6
	if w >= len(c.bits) {
		// Grown by a quarter, not doubled: the engine's sets live to the end
		// of its sweep and grow with the export (a bit per id: 17 MB a set at
		// 30×).
		grown := make([]uint64, max(w+1, len(c.bits)+len(c.bits)/4+64))
		copy(grown, c.bits)
		c.bits = grown
	}
	c.bits[w] |= 1 << (uint(id-c.base) & 63)
}

// AddNew adds id (≥ 0) and reports whether it was absent: Has and Add in
// one lookup, for the million calls of an export. Ids mostly grow, so the
// common case is an id past the largest so far that still fits the bitmap
// (bits past the largest id are never set).
func (c *Set) AddNew(id int32) bool {
	if c.bits != nil && id >= c.base {
		off := id - c.base
		if w := int(off >> 6); w < len(c.bits) {
			m := uint64(1) << (uint(off) & 63)
			if c.bits[w]&m != 0 {
				return false
			}
			c.bits[w] |= m
			c.top = max(c.top, id)
			return true
		}
	}
	c.Add(id) // outside the bitmap: absent
	return true
}

// Has reports whether id is in the set.
func (c *Set) Has(id int32) bool {
	if c == nil || c.bits == nil || id < c.base || id > c.top {
		return false
	}
	w := int(id-c.base) >> 6
	return w < len(c.bits) && c.bits[w]&(1<<(uint(id-c.base)&63)) != 0
}
