package memtune

import "testing"

// TestAdviseHugePagesKeepsContents: Bytes views a slice's memory exactly,
// and advising it (a misaligned large slice, a small one) leaves every value
// as written.
func TestAdviseHugePagesKeepsContents(t *testing.T) {
	type rec struct{ a, b int64 }
	for _, n := range []int{3, 3<<20 + 1} { // 48 B; 48 MiB + 16 B
		s := make([]rec, n)
		for i := range s {
			s[i] = rec{int64(i), -int64(i)}
		}
		b := Bytes(s[1:]) // start 16 bytes in: misaligned
		if len(b) != (n-1)*16 {
			t.Fatalf("n=%d: Bytes has %d bytes, want %d", n, len(b), (n-1)*16)
		}
		b[0] = 0xff // the first byte of s[1].a (little-endian)
		if s[1].a != 0xff {
			t.Fatalf("n=%d: Bytes does not alias the slice: s[1].a = %#x", n, s[1].a)
		}
		s[1].a = 1
		AdviseHugePages(b)
		for i := range s {
			if s[i] != (rec{int64(i), -int64(i)}) {
				t.Fatalf("n=%d: s[%d] = %v after advising", n, i, s[i])
			}
		}
	}
	if Bytes([]int64(nil)) != nil {
		t.Fatal("Bytes of an empty slice is not nil")
	}
}
