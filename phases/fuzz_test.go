package phases_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

// writeSynthetic writes a minimal export with random NVTX ranges (arm
// blocks, steps, phases, stray and unbalanced ranges) and random API calls
// with kernels on two threads, derived from seed.
func writeSynthetic(t testing.TB, path string, seed uint64) {
	t.Helper()
	c, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if err := sqlitex.Execute(c, q, &sqlitex.ExecOptions{Args: args}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)")
	exec("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.20.3')")
	exec("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
	exec("INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'cudaStreamSynchronize_v3020'), (3, 'cudaMalloc_v3020'), (4, 'k')")
	exec("CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER)")
	exec("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL)")
	exec("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL)")
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	const pid = 7
	tids := []int64{pid<<24 | pid, pid<<24 | (pid + 1)}
	gpid := int64(pid << 24)
	exec("BEGIN")
	t0 := int64(1_000_000)
	corr := int64(1)
	nBlocks := 1 + rng.IntN(4)
	for b := 0; b < nBlocks; b++ {
		arm := []string{"a", "b"}[b%2]
		bs := t0
		nSteps := 1 + rng.IntN(6)
		for s := 0; s < nSteps; s++ {
			ss := t0
			for p := 0; p < 1+rng.IntN(4); p++ {
				ps := t0
				for k := 0; k < rng.IntN(5); k++ {
					tid := tids[rng.IntN(2)]
					cs := t0 + int64(rng.IntN(50))
					ce := cs + int64(rng.IntN(400))
					name := 1 + rng.IntN(3)
					exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, ?)", cs, ce, tid, corr, name)
					if name == 1 {
						ks := cs + int64(rng.IntN(900))
						exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 7, ?, ?, 4)", ks, ks+int64(rng.IntN(3000)), corr, gpid)
					}
					corr++
					t0 = ce + int64(rng.IntN(30))
				}
				t0 += int64(rng.IntN(100))
				exec("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, ?, ?, NULL, NULL, 0)", ps, t0, fmt.Sprintf("phase%d", p), tids[0])
				t0++
			}
			exec("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, 'step', ?, NULL, NULL, 0)", ss, t0, tids[0])
			t0 += 10
			if rng.IntN(8) == 0 { // an unclosed or reversed stray range
				exec("INSERT INTO NVTX_EVENTS VALUES (?, NULL, 59, 'stray', ?, NULL, NULL, 0)", t0, tids[rng.IntN(2)])
			}
		}
		exec("INSERT INTO NVTX_EVENTS VALUES (?, ?, 60, ?, ?, NULL, NULL, 0)", bs, t0, fmt.Sprintf("arm=%s block=%d", arm, b/2), tids[0])
		t0 += 100
	}
	exec("COMMIT")
}

// checkInvariants: the six parts sum to wall, nothing is negative, every
// step has exactly one arm and block and unit, phases lie inside their step.
func checkInvariants(t *testing.T, res *phases.Result) {
	t.Helper()
	var step *phases.Instance
	for i := range res.Instances {
		x := &res.Instances[i]
		var sum int64
		for _, p := range phases.WallParts() {
			sum += x.M[p]
		}
		if sum != x.M[phases.Wall] {
			t.Fatalf("%s: parts %d != wall %d", x.Phase, sum, x.M[phases.Wall])
		}
		for m := range phases.NumMetrics() {
			if x.M[m] < 0 {
				t.Fatalf("%s: %s = %d < 0", x.Phase, m.Name(), x.M[m])
			}
		}
		if x.IsStep {
			step = x
			continue
		}
		if step == nil || x.Unit != step.Unit || x.Arm != step.Arm || x.Block != step.Block || x.Start < step.Start || x.End > step.End {
			t.Fatalf("phase %s [%d, %d] is not inside its step", x.Phase, x.Start, x.End)
		}
	}
}

func segmentSynthetic(t *testing.T, seed uint64) {
	path := filepath.Join(t.TempDir(), "synthetic.sqlite")
	writeSynthetic(t, path, seed)
	f, err := nsys.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := phases.Segment(f, phases.Options{Step: "step"})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	checkInvariants(t, res)
	steps := 0
	for _, x := range res.Instances {
		if x.IsStep {
			steps++
		}
	}
	if steps == 0 {
		t.Fatalf("seed %d: no step found", seed)
	}
}

// TestSegmentInvariants runs the invariants on a fixed set of random exports.
func TestSegmentInvariants(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		segmentSynthetic(t, seed)
	}
}

// FuzzSegment: random NVTX/API/kernel streams keep the invariants.
func FuzzSegment(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { segmentSynthetic(t, seed) })
}

// TestDeepNesting: one thread nested 200,000 levels deep (every level named
// like the step) segments in linear time: one step instance, the outermost,
// with its single direct child as the phase.
func TestDeepNesting(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 200k ranges")
	}
	path := filepath.Join(t.TempDir(), "deep.sqlite")
	writeSynthetic(t, path, 1)
	c, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200_000
	tid := int64(8<<24 | 8) // a process without arm blocks
	if err := sqlitex.Execute(c, "BEGIN", nil); err != nil {
		t.Fatal(err)
	}
	st := c.Prep("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, 'deep', ?, NULL, NULL, 0)")
	for i := int64(0); i < n; i++ {
		st.BindInt64(1, 10+i)
		st.BindInt64(2, 10+2*n-i)
		st.BindInt64(3, tid)
		if _, err := st.Step(); err != nil {
			t.Fatal(err)
		}
		if err := st.Reset(); err != nil {
			t.Fatal(err)
		}
	}
	if err := sqlitex.Execute(c, "COMMIT", nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	f, err := nsys.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := phases.Segment(f, phases.Options{Step: "deep"})
	if err != nil {
		t.Fatal(err)
	}
	steps, phs := 0, 0
	for _, x := range res.Instances {
		if x.IsStep {
			steps++
		} else if x.Phase != phases.Unannotated {
			phs++
		}
	}
	if steps != 1 || phs != 1 {
		t.Errorf("%d steps and %d phases, want the outermost range as the one step with one child", steps, phs)
	}
}
