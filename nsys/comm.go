package nsys

import (
	"iter"
	"strings"
)

// MPI tables written by `nsys profile --trace=mpi`: calls without extra
// parameters (MPI_OTHER_EVENTS: MPI_Allreduce, MPI_Barrier, … in exports
// of 2020–2024) and collectives with their parameters (MPI_COLLECTIVES_EVENTS,
// newer exports). Absent tables yield no rows.
const (
	TableMPIOther       = "MPI_OTHER_EVENTS"
	TableMPICollectives = "MPI_COLLECTIVES_EVENTS"
)

// MPICall is one MPI call traced on the host.
type MPICall struct {
	Start, End int64
	GlobalTid  int64
	TextID     int64 // StringIds id of the call's name (MPI_Allreduce)
}

var mpiCols = []column{req("start"), reqInt("end", 0), req("globalTid"), req("textId")}

// MPICalls streams the MPI calls of table t (TableMPIOther or
// TableMPICollectives).
func (f *File) MPICalls(t string) iter.Seq2[MPICall, error] {
	return seq(f, t, mpiCols, "record with `nsys profile -t mpi` and export again", func(st row) MPICall {
		return MPICall{Start: st.ColumnInt64(0), End: st.ColumnInt64(1), GlobalTid: st.ColumnInt64(2), TextID: st.ColumnInt64(3)}
	})
}

// HasStringPrefix reports whether StringIds holds a string that starts
// with prefix (case-sensitive), stopping at the first: a cheap test for a
// library's kernels or ranges before reading the big tables (NCCL kernel
// names start with "nccl").
func (f *File) HasStringPrefix(prefix string) (bool, error) {
	found := false
	err := f.scan(TableStrings, []column{req("value")}, hintReexport, func(st row) bool {
		if strings.HasPrefix(st.ColumnText(0), prefix) {
			found = true
			return false
		}
		return true
	})
	return found, err
}

// EnvironmentBlocks returns the strings of StringIds that are a process's
// environment block: NUL-separated NAME=VALUE entries, one of which is
// marker= (nsys keeps each profiled process's environment as one string,
// linked to no table). Each block is returned as its entries.
func (f *File) EnvironmentBlocks(marker string) ([][]string, error) {
	var out [][]string
	err := f.scan(TableStrings, []column{req("value")}, hintReexport, func(st row) bool {
		v := st.ColumnText(0)
		if !strings.Contains(v, "\x00") || !strings.Contains(v, marker+"=") {
			return true
		}
		entries := strings.Split(v, "\x00")
		for _, e := range entries {
			if strings.HasPrefix(e, marker+"=") {
				out = append(out, entries)
				break
			}
		}
		return true
	})
	return out, err
}
