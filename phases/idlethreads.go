package phases

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/nsysphase/nsysphase/nsys"
)

// idleStepThreads words a trap of step choice by name: when a second
// thread of a process repeats the step's ranges (a logger or data-loader
// thread mirroring the training loop's annotation) but does no CUDA work
// in them, its steps join the same statistics unit as the working
// thread's, and every per-step CUDA metric is averaged over steps half of
// which are empty. The engine keeps them (the user may mean it); the
// warning names both threads and the share of empty steps.
func idleStepThreads(s *Store, step, path string) []nsys.Warning {
	type thread struct {
		pid, tid    int64
		name        string
		steps       int
		calls, ops  int64
		notMeasured bool
	}
	type key struct{ pid, tid int64 }
	byKey := map[key]*thread{}
	var order []*thread
	for i := range s.Len() {
		if !s.IsStep(i) || s.OtherThread(i) || s.Phase(i) != step {
			continue
		}
		k := key{s.Pid(i), s.Tid(i)}
		t := byKey[k]
		if t == nil {
			t = &thread{pid: k.pid, tid: k.tid, name: s.Thread(i)}
			byKey[k] = t
			order = append(order, t)
		}
		t.steps++
		if s.Null(i)&(1<<uint(APICalls)) != 0 {
			t.notMeasured = true // no API table: nothing to tell idle from busy
		}
		t.calls += s.Metric(i, APICalls)
		t.ops += s.Metric(i, GPUOps)
	}
	slices.SortStableFunc(order, func(a, b *thread) int { return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.tid, b.tid)) })
	var out []nsys.Warning
	for lo := 0; lo < len(order); {
		hi := lo + 1
		for hi < len(order) && order[hi].pid == order[lo].pid {
			hi++
		}
		var busy, idle []*thread
		for _, t := range order[lo:hi] {
			switch {
			case t.notMeasured:
			case t.calls == 0 && t.ops == 0:
				idle = append(idle, t)
			default:
				busy = append(busy, t)
			}
		}
		if len(busy) > 0 {
			total := 0
			for _, t := range order[lo:hi] {
				total += t.steps
			}
			for _, t := range idle {
				out = append(out, nsys.FileWarning(nsys.WarnIdleStepThread, path,
					"process %d: thread %s repeats step %q (%d steps) with no CUDA API call or GPU operation in any of them; its empty steps are pooled with those of thread %s, so per-step CUDA metrics are averaged over %d steps of which %d are empty",
					t.pid, threadLabel(t.tid, t.name), step, t.steps, threadLabel(busy[0].tid, busy[0].name), total, t.steps))
			}
		}
		lo = hi
	}
	return out
}

// threadLabel is "TID" or "TID (NAME)".
func threadLabel(tid int64, name string) string {
	if name == "" {
		return fmt.Sprint(tid)
	}
	return fmt.Sprintf("%d (%s)", tid, name)
}
