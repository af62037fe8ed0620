package phases

import (
	"cmp"
	"slices"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// TestSyncPartsSumToSync: on every fixture, per instance, the three parts
// of sync_ns sum to it exactly, and the GPU context times stay inside wall;
// per recorded call that waits, its split sums to its host time.
func TestSyncPartsSumToSync(t *testing.T) {
	for _, fx := range fixture.WithExtra(t) {
		t.Run(fx.Name, func(t *testing.T) {
			res, err := Segment(openFixture(t, fx), Options{Depth: 2, Calls: true})
			if err != nil {
				t.Skipf("no steps: %v", err)
			}
			var waits int
			for _, c := range res.Calls {
				if c.Sync() == SyncNone {
					if c.OwnGPUNs != 0 || c.OtherGPUNs != 0 || c.NoGPUNs != 0 {
						t.Fatalf("call %s at %d waits for nothing but has a split", res.CallAPIs[c.API], c.Start)
					}
					continue
				}
				waits++
				if c.OwnGPUNs+c.OtherGPUNs+c.NoGPUNs != c.Dur || c.OwnGPUNs < 0 || c.OtherGPUNs < 0 {
					t.Fatalf("call %s at %d: split %d+%d+%d, host time %d", res.CallAPIs[c.API], c.Start, c.OwnGPUNs, c.OtherGPUNs, c.NoGPUNs, c.Dur)
				}
			}
			var sum [MaxMetrics]int64
			for _, x := range res.Instances {
				if x.Phase == Unannotated {
					continue // the step minus its phases: its GPU context is null (rest.go)
				}
				m := x.M
				if got := m[SyncOwnGPU] + m[SyncOtherGPU] + m[SyncNoGPU]; got != m[SyncAPI] {
					t.Fatalf("%s step %d %s: sync parts %d+%d+%d = %d, sync_ns %d", x.Arm, x.Step, x.Phase, m[SyncOwnGPU], m[SyncOtherGPU], m[SyncNoGPU], got, m[SyncAPI])
				}
				for _, p := range []Metric{SyncOwnGPU, SyncOtherGPU, SyncNoGPU, OtherProcessGPU, GPUIdle, OtherThreadSyncNs} {
					if x.IsNull(p) {
						continue
					}
					// another thread's row without ranges has no wall to bound it
					if m[p] < 0 || (!x.IsNull(Wall) && m[p] > m[Wall]) {
						t.Fatalf("%s step %d %s: %s %d outside [0, wall %d]", x.Arm, x.Step, x.Phase, p.Name(), m[p], m[Wall])
					}
				}
				if !x.IsNull(GPUIdle) && (m[SyncNoGPU] > m[GPUIdle] || m[SyncOtherGPU] > m[OtherProcessGPU]) {
					t.Fatalf("%s step %d %s: sync_no_gpu %d > gpu_idle %d or sync_other_gpu %d > other_process_gpu %d", x.Arm, x.Step, x.Phase, m[SyncNoGPU], m[GPUIdle], m[SyncOtherGPU], m[OtherProcessGPU])
				}
				if x.IsStep {
					for k := range sum {
						sum[k] += m[k]
					}
				}
			}
			t.Logf("%d waiting calls; steps: sync %d = own %d + other %d + none %d; other process %d, idle %d, other-thread sync %d (%d calls)", waits,
				sum[SyncAPI], sum[SyncOwnGPU], sum[SyncOtherGPU], sum[SyncNoGPU], sum[OtherProcessGPU], sum[GPUIdle], sum[OtherThreadSyncNs], sum[OtherThreadSyncs])
		})
	}
}

// TestGPUContextFromSQL: other_process_gpu_ns and gpu_idle_ns of every
// instance equal a computation from plain SQL rows on the sharing exports
// (two processes on one GPU, with and without MPS): the ops' intervals per
// process and GPU, merged in one loop; a process's GPUs are those where its
// first op starts before the instance ends; each instance window is
// intersected with the union of the other processes' intervals and with
// the union of everyone's.
func TestGPUContextFromSQL(t *testing.T) {
	type key struct{ pid, gpu int64 }
	for _, name := range []string{"sharing_null_1", "sharing_null_2", "sharing_mps_1", "sharing_mps_2"} {
		t.Run(name, func(t *testing.T) {
			fx := fixture.Get(t, name)
			conn, err := sqlite.OpenConn("file:"+fx.SQLite(t)+"?mode=ro&immutable=1", sqlite.OpenReadOnly|sqlite.OpenURI)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Ops without a correlation id belong to no call and are not counted.
			raw := map[key][]interval{}
			first := map[key]int64{}
			err = sqlitex.ExecuteTransient(conn, `SELECT o.globalPid, d.gpuId, o.start, o.end FROM (
  SELECT globalPid, deviceId, start, end, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL
  UNION ALL SELECT globalPid, deviceId, start, end, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY
  UNION ALL SELECT globalPid, deviceId, start, end, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET) o
JOIN TARGET_INFO_CUDA_DEVICE d ON d.pid = o.globalPid / 16777216 % 16777216 AND d.cudaId = o.deviceId
WHERE o.end > o.start AND o.correlationId >= 0 ORDER BY o.start`, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
				k := key{nsys.Pid(st.ColumnInt64(0)), st.ColumnInt64(1)}
				if _, ok := first[k]; !ok {
					first[k] = st.ColumnInt64(2)
				}
				raw[k] = append(raw[k], interval{st.ColumnInt64(2), st.ColumnInt64(3)})
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			merge := func(iv []interval) []interval { // sorted by start
				var out []interval
				for _, x := range iv {
					if n := len(out); n > 0 && x.start <= out[n-1].end {
						out[n-1].end = max(out[n-1].end, x.end)
					} else {
						out = append(out, x)
					}
				}
				return out
			}
			// within is |∪ lists ∩ [s, e)|, by a merge of the clipped pieces.
			within := func(lists [][]interval, s, e int64) int64 {
				var pieces []interval
				for _, l := range lists {
					for _, x := range l {
						if lo, hi := max(x.start, s), min(x.end, e); hi > lo {
							pieces = append(pieces, interval{lo, hi})
						}
					}
				}
				sortIntervals(pieces)
				return totalLength(merge(pieces))
			}
			busy := map[key][]interval{}
			for k, iv := range raw {
				busy[k] = merge(iv)
			}
			res, err := Segment(openFixture(t, fx), Options{Depth: 2})
			if err != nil {
				t.Fatal(err)
			}
			var otherSum, idleSum int64
			for _, x := range res.Instances {
				if x.Phase == Unannotated {
					continue // not a window of its own (rest.go)
				}
				var others, all [][]interval
				for k := range busy {
					if k.pid != x.Pid || first[k] >= x.End {
						continue
					}
					for k2, iv := range busy {
						if k2.gpu == k.gpu {
							all = append(all, iv)
							if k2.pid != x.Pid {
								others = append(others, iv)
							}
						}
					}
				}
				wantOther := within(others, x.Start, x.End)
				wantIdle := x.End - x.Start - within(all, x.Start, x.End)
				if x.M[OtherProcessGPU] != wantOther || x.M[GPUIdle] != wantIdle {
					t.Fatalf("%s step %d %s [%d, %d]: other_process_gpu_ns %d gpu_idle_ns %d, SQL %d and %d",
						x.Arm, x.Step, x.Phase, x.Start, x.End, x.M[OtherProcessGPU], x.M[GPUIdle], wantOther, wantIdle)
				}
				if x.IsStep {
					otherSum += wantOther
					idleSum += wantIdle
				}
			}
			if otherSum == 0 || idleSum == 0 {
				t.Errorf("steps: other-process time %d ns, idle %d ns: both should be nonzero with two processes on one GPU", otherSum, idleSum)
			}
			t.Logf("%d instances; steps: other-process %d ns, idle %d ns", len(res.Instances), otherSum, idleSum)
		})
	}
}

func sortIntervals(iv []interval) {
	for i := 1; i < len(iv); i++ { // insertion sort: the pieces come nearly sorted
		for j := i; j > 0 && iv[j].start < iv[j-1].start; j-- {
			iv[j], iv[j-1] = iv[j-1], iv[j]
		}
	}
}

// TestOtherThreadSync: host syncs on other threads of the process while a
// range is open (the nvtx_streams values equal plain SQL: its steps inside
// arm blocks joined with the *Synchronize* rows of other threads, clipped).
// nvtx_streams blocks its `completion` thread in
// cudaStreamSynchronize while the main thread's steps run; the JAX export's
// measured steps (those inside arm blocks) make no blocking CUDA call on
// any thread — XLA waits through host callbacks (cuLaunchHostFunc) and
// non-blocking copies, which the trace cannot see as waits — so its value
// is a measured zero, while its warm-up and compile steps outside the arm
// blocks do block on runtime threads.
func TestOtherThreadSync(t *testing.T) {
	for _, c := range []struct {
		name       string
		ns, syncs  int64
		stepsTotal bool
	}{
		{"nvtx_streams", 44649607, 180, true},
		{"jax_nvtx", 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var fx fixture.Fixture
			for _, e := range fixture.Extra(t) {
				if e.Name == c.name {
					fx = e
				}
			}
			if fx.Name == "" {
				t.Skipf("extra fixture %s absent", c.name)
			}
			res, err := Segment(openFixture(t, fx), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var ns, n int64
			for _, x := range res.Instances {
				if x.IsStep {
					ns += x.M[OtherThreadSyncNs]
					n += x.M[OtherThreadSyncs]
				}
			}
			if ns != c.ns || n != c.syncs {
				t.Errorf("steps: other_thread_sync_ns %d, other_thread_syncs %d; want %d and %d", ns, n, c.ns, c.syncs)
			}
		})
	}
}

// TestGPUCoverageFromSQL: step_choice.gpu_coverage's denominator — the
// GPU busy time of the step's processes — equals the union of their
// kernels and copies per GPU computed by plain SQL (these exports record no
// memset).
func TestGPUCoverageFromSQL(t *testing.T) {
	for _, name := range []string{"sharing_null_1", "interleaved_graph"} {
		t.Run(name, func(t *testing.T) {
			fx := fixture.Get(t, name)
			conn, err := sqlite.OpenConn("file:"+fx.SQLite(t)+"?mode=ro&immutable=1", sqlite.OpenReadOnly|sqlite.OpenURI)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			type key struct{ pid, gpu int64 }
			raw := map[key][]interval{}
			err = sqlitex.ExecuteTransient(conn, `SELECT o.globalPid, d.gpuId, o.start, o.end FROM (
  SELECT globalPid, deviceId, start, end, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL
  UNION ALL SELECT globalPid, deviceId, start, end, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY) o
JOIN TARGET_INFO_CUDA_DEVICE d ON d.pid = o.globalPid / 16777216 % 16777216 AND d.cudaId = o.deviceId
WHERE o.end > o.start AND o.correlationId >= 0`, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
				k := key{nsys.Pid(st.ColumnInt64(0)), st.ColumnInt64(1)}
				raw[k] = append(raw[k], interval{st.ColumnInt64(2), st.ColumnInt64(3)})
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			res := segmentPath(t, fx.SQLite(t), Options{})
			var inSteps int64
			pids := map[int64]bool{}
			for _, x := range res.Instances {
				if x.IsStep || x.OtherThread {
					inSteps += x.M[GPUBusy]
					pids[x.Pid] = true
				}
			}
			var busy int64
			for k, iv := range raw {
				if pids[k.pid] {
					slices.SortFunc(iv, func(a, b interval) int { return cmp.Compare(a.start, b.start) })
					busy += totalLength(mergeIntervals(iv))
				}
			}
			got := res.StepChoice.GPUCoverage
			if want := round3(float64(inSteps) / float64(busy)); got == nil || *got != want {
				t.Errorf("gpu_coverage %v, want %v (%d ns in steps of %d ns busy by SQL)", got, want, inSteps, busy)
			}
		})
	}
}
