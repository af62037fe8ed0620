package phases_test

import (
	"slices"
	"strconv"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

// rankFixtures are the bundled 2-GPU DDP-style run and the multi-rank
// exports beside the repository (when present).
func rankFixtures(t *testing.T) []fixture.Fixture {
	var out []fixture.Fixture
	for _, fx := range fixture.Extra(t) {
		if fx.Name == "dist_allreduce_2gpu" {
			out = append(out, fx)
		}
	}
	// Multirank skips its own subtest when the corpus is absent.
	t.Run("multirank_corpus", func(t *testing.T) { out = append(out, fixture.Multirank(t, "")...) })
	return out
}

type sqlKernel struct {
	pid, dev, start, end int64
	nccl                 bool
}

// sqlKernels reads every kernel with a plain query: process, device,
// interval and whether its name (shortName, else demangledName) starts
// with "nccl".
func sqlKernels(t *testing.T, path string) []sqlKernel {
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var out []sqlKernel
	q := `SELECT (k.globalPid >> 24) & 16777215, k.deviceId, k.start, k.end,
	        substr(coalesce(s.value, d.value), 1, 4) = 'nccl'
	      FROM CUPTI_ACTIVITY_KIND_KERNEL k
	      LEFT JOIN StringIds s ON s.id = k.shortName
	      LEFT JOIN StringIds d ON d.id = k.demangledName`
	err = sqlitex.ExecuteTransient(conn, q, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
		out = append(out, sqlKernel{st.ColumnInt64(0), st.ColumnInt64(1), st.ColumnInt64(2), st.ColumnInt64(3), st.ColumnInt64(4) == 1})
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// plainExposed is the exposed time of one NCCL kernel computed the plain
// way: clip every compute kernel of the process on the device to the NCCL
// kernel, sort, merge, and subtract the covered time.
func plainExposed(k sqlKernel, all []sqlKernel) int64 {
	type iv struct{ s, e int64 }
	var clipped []iv
	for _, c := range all {
		if c.nccl || c.pid != k.pid || c.dev != k.dev {
			continue
		}
		s, e := max(c.start, k.start), min(c.end, k.end)
		if s < e {
			clipped = append(clipped, iv{s, e})
		}
	}
	slices.SortFunc(clipped, func(a, b iv) int { return int(a.s - b.s) })
	covered, curS, curE := int64(0), int64(-1), int64(-1)
	for _, c := range clipped {
		if c.s > curE {
			covered += curE - curS
			curS, curE = c.s, c.e
		} else if c.e > curE {
			curE = c.e
		}
	}
	covered += curE - curS
	return k.end - k.start - covered
}

// TestRanksNCCLMatchesSQL checks every rank's NCCL kernel count and sum
// and its exposed communication against plain SQL and a plain interval
// computation over the same export.
func TestRanksNCCLMatchesSQL(t *testing.T) {
	for _, fx := range rankFixtures(t) {
		t.Run(fx.Name, func(t *testing.T) {
			path := fx.SQLite(t)
			f, err := nsys.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ranks, err := phases.ReadRanks(f)
			if err != nil {
				t.Fatal(err)
			}
			ks := sqlKernels(t, path)
			type sums struct{ n, ns, exposed, all, allNs int64 }
			want := map[int64]*sums{}
			for _, k := range ks {
				s := want[k.pid]
				if s == nil {
					s = &sums{}
					want[k.pid] = s
				}
				s.all++
				s.allNs += k.end - k.start
				if k.nccl {
					s.n++
					s.ns += k.end - k.start
					s.exposed += plainExposed(k, ks)
				}
			}
			for _, r := range ranks {
				w := want[r.Pid]
				if w == nil {
					t.Errorf("pid %d: no kernels in SQL", r.Pid)
					continue
				}
				if r.NCCLKernels != w.n || r.NCCLNs != w.ns || r.NCCLExposedNs != w.exposed || r.Kernels != w.all || r.KernelNs != w.allNs {
					t.Errorf("pid %d: nccl %d kernels %d ns exposed %d (all %d, %d ns); SQL %d, %d, %d (%d, %d)",
						r.Pid, r.NCCLKernels, r.NCCLNs, r.NCCLExposedNs, r.Kernels, r.KernelNs, w.n, w.ns, w.exposed, w.all, w.allNs)
				}
				t.Logf("pid %d kind %s: %d NCCL kernels, %d ns, exposed %d ns; %d collectives; env rank %d (%s), nvtx %d, host %q",
					r.Pid, r.Kind, r.NCCLKernels, r.NCCLNs, r.NCCLExposedNs, len(r.Collectives), r.EnvRank, r.EnvVar, r.NVTXRank, r.Host)
			}
			// Every process with NCCL kernels is a rank.
			for pid, w := range want {
				if w.n > 0 && !slices.ContainsFunc(ranks, func(r phases.RankProcess) bool { return r.Pid == pid }) {
					t.Errorf("pid %d has %d NCCL kernels but is not a rank", pid, w.n)
				}
			}
		})
	}
}

// TestRanksDistAllreduce pins the bundled 2-GPU run's numbers (measured,
// and equal to SQL above): one export, two processes on two GPUs, no rank
// in the recorded environment (the launcher's), so ranks follow process
// order by CUDA device.
func TestRanksDistAllreduce(t *testing.T) {
	fx := fixture.ExtraNamed(t, "dist_allreduce_2gpu")
	f, err := nsys.Open(fx.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ranks, err := phases.ReadRanks(f)
	if err != nil {
		t.Fatal(err)
	}
	phases.AssignRanks(ranks)
	type row struct {
		rank                 int
		pid                  int64
		devices              []int64
		n, ns, exposed       int64
		collectives, located int
	}
	want := []row{{0, 690, []int64{0}, 88, 12980533, 11170459, 88, 88}, {1, 691, []int64{1}, 88, 45646797, 33740617, 88, 88}}
	if len(ranks) != len(want) {
		t.Fatalf("%d ranks, want 2", len(ranks))
	}
	for i, w := range want {
		r := ranks[i]
		located := 0
		for _, c := range r.Collectives {
			if c.CallStart >= 0 && c.Tid != 0 {
				located++
			}
		}
		got := row{r.Rank, r.Pid, r.Devices, r.NCCLKernels, r.NCCLNs, r.NCCLExposedNs, len(r.Collectives), located}
		if got.rank != w.rank || got.pid != w.pid || !slices.Equal(got.devices, w.devices) || got.n != w.n || got.ns != w.ns ||
			got.exposed != w.exposed || got.collectives != w.collectives || got.located != w.located {
			t.Errorf("rank %d: %+v, want %+v", i, got, w)
		}
		if r.RankSource != "process order (exports in input order, then CUDA device, then pid)" || r.Host != "gpu-host" {
			t.Errorf("rank %d: source %q host %q", i, r.RankSource, r.Host)
		}
	}
}

// TestRanksFromEnvironment reads the rank of one-rank-per-file exports
// from the recorded environment (PMI_RANK for the ALCF job on two nodes,
// OMPI_COMM_WORLD_RANK for the Open MPI job).
func TestRanksFromEnvironment(t *testing.T) {
	for _, c := range []struct {
		prefix string
		ranks  []int
		vars   string
		hosts  int
	}{
		{"argonne-lcf__", []int{0, 4}, "environment PMI_RANK", 2},
		{"openhackathons-org__", []int{2, 3, 4, 6, 7}, "environment OMPI_COMM_WORLD_RANK", 1},
	} {
		t.Run(c.prefix, func(t *testing.T) {
			var all []phases.RankProcess
			for _, fx := range fixture.Multirank(t, c.prefix) {
				f, err := nsys.Open(fx.SQLite(t))
				if err != nil {
					t.Fatal(err)
				}
				rs, err := phases.ReadRanks(f)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				if len(rs) != 1 {
					t.Fatalf("%s: %d rank processes, want 1", fx.Name, len(rs))
				}
				all = append(all, rs...)
			}
			phases.AssignRanks(all)
			hosts := map[string]bool{}
			var got []int
			for _, r := range all {
				got = append(got, r.Rank)
				hosts[r.Host] = true
				if r.RankSource != c.vars {
					t.Errorf("rank %d: source %q, want %q", r.Rank, r.RankSource, c.vars)
				}
			}
			if !slices.Equal(got, c.ranks) || len(hosts) != c.hosts {
				t.Errorf("ranks %v on %d hosts, want %v on %d", got, len(hosts), c.ranks, c.hosts)
			}
		})
	}
}

// TestRanksNCCLMatchesVendor: the ranks' NCCL kernel time summed over an
// export equals `nsys stats -r cuda_gpu_kern_sum`'s total of the kernels
// named nccl…, and their counts its instances, on every export that has
// the vendor's report.
func TestRanksNCCLMatchesVendor(t *testing.T) {
	checked := 0
	for _, fx := range rankFixtures(t) {
		_, rows, ok := fx.Vendor(t, "cuda_gpu_kern_sum")
		if !ok {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			var wantNs, wantN int64
			for _, r := range rows {
				if !phases.IsNCCL(r[8]) {
					continue
				}
				ns, err1 := strconv.ParseInt(r[1], 10, 64)
				n, err2 := strconv.ParseInt(r[2], 10, 64)
				if err1 != nil || err2 != nil {
					t.Fatalf("row %v", r)
				}
				wantNs += ns
				wantN += n
			}
			f, err := nsys.Open(fx.SQLite(t))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ranks, err := phases.ReadRanks(f)
			if err != nil {
				t.Fatal(err)
			}
			var gotNs, gotN int64
			for _, r := range ranks {
				gotNs += r.NCCLNs
				gotN += r.NCCLKernels
			}
			if gotNs != wantNs || gotN != wantN {
				t.Errorf("NCCL %d kernels %d ns; nsys stats %d, %d", gotN, gotNs, wantN, wantNs)
			}
		})
		checked++
	}
	t.Logf("%d exports checked against nsys stats", checked)
}
