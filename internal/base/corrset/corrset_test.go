package corrset

import "testing"

// TestSet: ids far from zero cost no bitmap below them; an id below the
// bitmap moves its base down and keeps every id already in.
func TestSet(t *testing.T) {
	var c *Set
	if c.Has(5) {
		t.Fatal("nil set has 5")
	}
	var empty Set
	if empty.Has(0) || empty.Has(-1) {
		t.Fatal("empty set has a member")
	}
	c = &Set{}
	ids := []int32{2_000_000_000, 2_000_000_001, 2_000_000_640, 1_900_000_000, 7, 0, 2_147_483_647}
	for _, id := range ids {
		c.Add(id)
		if c.base > id || c.base%64 != 0 {
			t.Fatalf("after %d: base %d", id, c.base)
		}
	}
	for _, id := range ids {
		if !c.Has(id) {
			t.Errorf("lost %d", id)
		}
	}
	for _, id := range []int32{1, 6, 8, 1_999_999_999, 2_000_000_002, 2_147_483_646, -1} {
		if c.Has(id) {
			t.Errorf("has %d, never added", id)
		}
	}
	var first Set
	first.Add(2_000_000_000)
	if !first.Has(2_000_000_000) || first.Has(2_000_000_001) || first.Has(1_999_999_999) {
		t.Error("one id: has another, or lost it")
	}
	if n := len(first.bits); n > 1<<20/64+1 {
		t.Errorf("one high id: %d words, want the 2^20 ids below it at most", n)
	}
	var neg Set
	neg.Add(-5)
	if neg.Has(-5) || neg.bits != nil {
		t.Error("a negative id went in")
	}
}

// TestAddNew: AddNew reports absence exactly as Has did before the Add,
// across growth below and above the range held.
func TestAddNew(t *testing.T) {
	var s, ref Set
	ids := []int32{5000, 5000, 5001, 4999, 1 << 22, 0, 3, 1 << 22, 70000, 5001, 2_000_000, 0}
	for _, id := range ids {
		want := !ref.Has(id)
		ref.Add(id)
		if got := s.AddNew(id); got != want {
			t.Fatalf("AddNew(%d) = %v, want %v", id, got, want)
		}
	}
	for _, id := range append(ids, 1, 4998, 5002, 1<<22+1) {
		if s.Has(id) != ref.Has(id) {
			t.Errorf("Has(%d) = %v, want %v", id, s.Has(id), ref.Has(id))
		}
	}
}
