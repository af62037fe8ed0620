package btree

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// record builds a record of the given serial types with random bodies.
func record(rng *rand.Rand, types []uint64) []byte {
	var hdr, body []byte
	for _, t := range types {
		hdr = appendVarint(hdr, t)
		n := 0
		switch {
		case t < 12:
			n = int(max(fixedSize[t], 0))
		default:
			n = int(t-12) / 2
		}
		for range n {
			body = append(body, byte(rng.Uint32()))
		}
		if t == 7 && rng.IntN(4) == 0 { // a NaN now and then
			binary.BigEndian.PutUint64(body[len(body)-8:], math.Float64bits(math.NaN()))
		}
	}
	h := len(hdr) + 1
	if h >= 0x80 {
		h++
	}
	rec := appendVarint(nil, uint64(h))
	return append(append(rec, hdr...), body...)
}

// appendVarint appends v as SQLite's big-endian varint.
func appendVarint(b []byte, v uint64) []byte {
	var tmp [9]byte
	n := 0
	for {
		tmp[n] = byte(v & 0x7f)
		n++
		v >>= 7
		if v == 0 {
			break
		}
	}
	for i := n - 1; i >= 0; i-- {
		c := tmp[i]
		if i > 0 {
			c |= 0x80
		}
		b = append(b, c)
	}
	return b
}

// TestParseIntsAgreesWithParse: on random records, intact and damaged,
// ParseInts gives Parse's integers and NULLs, its errors, and gives up
// (ok false, no error) exactly where a selected column is not an integer
// or NULL as Parse reads it.
func TestParseIntsAgreesWithParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	types := []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 19, 40}
	var checked, gaveUp, failed int
	for iter := 0; iter < 20000; iter++ {
		ncol := 1 + rng.IntN(12)
		ts := make([]uint64, ncol)
		for i := range ts {
			ts[i] = types[rng.IntN(len(types))]
		}
		rec := record(rng, ts)
		damaged := true
		switch rng.IntN(6) { // damage some
		default:
			damaged = false
		case 0:
			rec = rec[:rng.IntN(len(rec)+1)]
		case 1:
			rec = append(rec, byte(rng.Uint32()))
		case 2:
			if len(rec) > 0 {
				rec[rng.IntN(len(rec))] ^= byte(1 << rng.IntN(8))
			}
		}
		cols := 1 + rng.IntN(ncol+2) // sometimes more than the record holds
		slot := make([]int8, cols)
		var want uint64
		n := int8(0)
		for i := range slot {
			slot[i] = -1
			if rng.IntN(2) == 0 {
				slot[i], n = n, n+1
				want |= 1 << uint(i)
			}
		}
		var r, p Record
		ints := make([]int64, n)
		nulls, ok, err := r.ParseInts(rec, cols, slot, ints)
		perr := p.Parse(rec, cols, want)
		if err != nil {
			if perr == nil {
				t.Fatalf("record %x cols %d: ParseInts fails (%v), Parse does not", rec, cols, err)
			}
			failed++
			continue
		}
		if !ok {
			gaveUp++
			if perr != nil {
				continue // Parse finds the damage ParseInts stopped short of
			}
			// A real gives up even when it is a NaN, which Parse reads as NULL.
			plain := !damaged
			for i, k := range slot {
				if k >= 0 && (p.Kind(i) != Integer && p.Kind(i) != Null || i < ncol && ts[i] == 7) {
					plain = false
				}
			}
			if plain {
				t.Fatalf("record %x: ParseInts gave up on integers and NULLs", rec)
			}
			continue
		}
		if perr != nil {
			t.Fatalf("record %x cols %d: Parse fails (%v), ParseInts does not", rec, cols, perr)
		}
		checked++
		for i, k := range slot {
			if k < 0 {
				continue
			}
			isNull := nulls&(1<<uint(k)) != 0
			switch kind, v := p.Stored(i); {
			case kind == Null && !isNull, kind != Null && isNull:
				t.Fatalf("record %x col %d: NULL %v, Parse says %v", rec, i, isNull, kind)
			case kind == Integer && ints[k] != v:
				t.Fatalf("record %x col %d: %d, Parse says %d", rec, i, ints[k], v)
			case kind != Integer && kind != Null:
				t.Fatalf("record %x col %d: ParseInts read a %v", rec, i, kind)
			}
		}
	}
	if checked < 1000 || gaveUp < 1000 || failed < 1000 {
		t.Fatalf("too few cases of each outcome: %d decoded, %d given up, %d damaged", checked, gaveUp, failed)
	}
}
