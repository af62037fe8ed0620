package phases

import (
	"testing"
	"unsafe"
)

// TestPartsAhead: the sweep decodes as many parts ahead as before on 2
// cores (GOMAXPROCS+1 = 3), and on 16 cores no more than readAheadBytes
// of 16Ki-row parts (large_interleaved's API and kernel tables), not 17.
func TestPartsAhead(t *testing.T) {
	part := partCap(1<<30, 1<<14) // a part of a big table: 16Ki rows and an eighth
	api, op := unsafe.Sizeof(streamCall{}), unsafe.Sizeof(gpuOp{})
	for _, c := range []struct {
		name        string
		procs, rows int
		row         uintptr
		want        int
	}{
		{"2 cores, API", 2, part, api, 3},
		{"2 cores, kernels", 2, part, op, 3},
		{"1 core", 1, part, op, 2},
		{"16 cores, API", 16, part, api, 14},
		{"16 cores, kernels", 16, part, op, 11},
		{"16 cores, huge parts", 16, 1 << 24, op, minAhead},
		{"16 cores, a small table", 16, 100, op, 17},
	} {
		if got := partsAhead(c.procs, c.rows, c.row); got != c.want {
			t.Errorf("%s: %d parts ahead, want %d", c.name, got, c.want)
		}
	}
}
