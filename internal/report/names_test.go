package report

import "testing"

// TestDistinctNames: four phases that share a long prefix stay four rows
// when shortened (they were four rows "MatrixMultiplication/Me…").
func TestDistinctNames(t *testing.T) {
	names := []string{"MatrixMultiplication/MemoryAllocation", "MatrixMultiplication/MemoryCopyH2D",
		"MatrixMultiplication/MemoryCopyD2H", "MatrixMultiplication/MemoryDeallocation", "short"}
	got := distinctNames(names, 24)
	seen := map[string]string{}
	for _, n := range names {
		s := got[n]
		if len([]rune(s)) > 24 && s != n {
			t.Errorf("%q → %q: longer than 24", n, s)
		}
		if o, dup := seen[s]; dup {
			t.Errorf("%q and %q both shorten to %q", o, n, s)
		}
		seen[s] = n
	}
	if got["short"] != "short" || got["MatrixMultiplication/MemoryCopyH2D"] != "MatrixMulti…emoryCopyH2D" {
		t.Errorf("got %q", got)
	}
}

// TestScaleFor: a column reads in µs below 10 ms, ms below 10 s, s above.
func TestScaleFor(t *testing.T) {
	for ns, want := range map[float64]string{624_700: "µs", 37_100_000: "ms", 430_089_563_000: "s", 0: "µs"} {
		if got := scaleFor(ns).unit; got != want {
			t.Errorf("scaleFor(%g) = %s, want %s", ns, got, want)
		}
	}
}
