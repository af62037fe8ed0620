package nsys

import "slices"

// Processes are told apart by their full globalPid (ProcessKey), not by the
// OS pid it packs: two processes with one OS pid on two hosts (or VMs) are
// two processes, and correlation ids repeat across them. The analysis
// engine keys its joins by an int32 process id; JoinPid gives one that is
// the OS pid for every process whose OS pid no other process of the export
// shares (every single-host export: the engine's numbers and outputs are
// unchanged), and a distinct id from 2^24 up for processes that share one.

// joinBase is the first id given to a process whose OS pid is shared; OS
// pids are 24-bit, so no id of one collides with an OS pid.
const joinBase = 1 << 24

// joinPids is the process table JoinPid reads, built once from PROCESSES.
type joinPids struct {
	ids   map[int64]int32 // ProcessKey → id, for processes whose OS pid is shared
	osPid []int64         // id − joinBase → OS pid
}

func (f *File) joinPidTable() *joinPids {
	f.joinOnce.Do(func() {
		t := &joinPids{}
		procs, err := f.Processes()
		if err != nil {
			f.join = t // unreadable PROCESSES: OS pids, as before
			return
		}
		keys := map[int64][]int64{} // OS pid → its process keys
		for _, p := range procs {
			k := ProcessKey(p.GlobalPid)
			if !slices.Contains(keys[p.Pid], k) {
				keys[p.Pid] = append(keys[p.Pid], k)
			}
		}
		for _, p := range procs {
			k := ProcessKey(p.GlobalPid)
			if len(keys[p.Pid]) < 2 {
				continue
			}
			if t.ids == nil {
				t.ids = map[int64]int32{}
			}
			if _, ok := t.ids[k]; !ok {
				t.ids[k] = int32(joinBase + len(t.osPid))
				t.osPid = append(t.osPid, p.Pid)
			}
		}
		f.join = t
	})
	return f.join
}

// JoinPid returns the process id the analysis joins on for a globalTid or
// globalPid: its OS pid, unless another process of the export has the same
// OS pid (see the comment above). Safe for concurrent use.
func (f *File) JoinPid(global int64) int32 {
	t := f.joinPidTable()
	if t.ids != nil {
		if id, ok := t.ids[ProcessKey(global)]; ok {
			return id
		}
	}
	return int32(Pid(global))
}

// JoinPidOS returns the OS pid of a JoinPid id.
func (f *File) JoinPidOS(id int32) int64 {
	if id < joinBase {
		return int64(id)
	}
	return f.joinPidTable().osPid[id-joinBase]
}

// JoinPidsOfOS returns the JoinPid ids of the processes with OS pid pid
// (pid itself when no other process shares it).
func (f *File) JoinPidsOfOS(pid int64) []int32 {
	t := f.joinPidTable()
	var out []int32
	for i, p := range t.osPid {
		if p == pid {
			out = append(out, int32(joinBase+i))
		}
	}
	if len(out) == 0 {
		out = append(out, int32(pid))
	}
	return out
}
