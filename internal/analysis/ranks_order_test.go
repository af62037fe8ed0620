package analysis

import (
	"fmt"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/phases"
)

// TestStragglersByOrderKeepEachRanksSequence: matched by order, the k-th
// collective of one rank meets the k-th of the other, whatever part of
// them lies outside the counted steps. On GindaChen's 2-GPU export each
// process's first NCCL kernel has no traced launch; one rank's fell
// outside its step and the other's inside, so the first rank's sequence
// shifted by one and every "collective" paired two kernels ~8.5 ms apart
// (rank 0 "late" by 8.5 ms in 100% of them, while it was the one waiting).
// Every matched arrival must be the SQL's k-th NCCL kernel start of its
// process.
func TestStragglersByOrderKeepEachRanksSequence(t *testing.T) {
	var fx fixture.Fixture
	for _, f := range fixture.Multirank(t, "GindaChen__") {
		if strings.HasSuffix(f.Name, "_before") {
			fx = f
		}
	}
	if fx.Name == "" {
		for _, f := range fixture.Public(t) {
			if f.Name == "GindaChen__nsys-ai__mfu_2gpu_before" {
				fx = f
			}
		}
	}
	if fx.Name == "" {
		t.Skip("GindaChen__nsys-ai__mfu_2gpu_before not in the corpus")
	}
	o := DefaultOptions()
	o.NoStats, o.Files = true, []string{fx.XZ}
	s := analyseFiles(t, o).Ranks
	if s == nil || len(s.Ranks) != 2 || s.Settings.Unit != "collective" {
		t.Fatalf("want two ranks matched by collective: %+v", s)
	}
	starts := ncclStarts(t, fx.SQLite(t))
	pid := map[int]int64{}
	for _, r := range s.Ranks {
		pid[r.Rank] = r.Pid
	}
	if len(s.Steps) != 2*32 || s.Settings.InitCollectives != 1 {
		t.Errorf("%d rows, %d initialisation collectives: want 32 matched collectives of 2 ranks and 1 left out", len(s.Steps), s.Settings.InitCollectives)
	}
	for _, st := range s.Steps {
		var k int
		if _, err := fmt.Sscanf(st.Label, "collective %d", &k); err != nil {
			t.Fatalf("row label %q", st.Label)
		}
		if want := starts[pid[st.Rank]]; k >= len(want) || st.ArrivalNs != want[k] {
			t.Fatalf("rank %d %s: arrival %d, want its process's NCCL kernel %d (SQL: %v)", st.Rank, st.Label, st.ArrivalNs, k, want[min(k, len(want)-1)])
		}
	}
}

// ncclStarts are each process's NCCL kernel starts in time order, by SQL.
func ncclStarts(t *testing.T, path string) map[int64][]int64 {
	t.Helper()
	conn, err := sqlite.OpenConn("file:"+path+"?immutable=1", sqlite.OpenReadOnly|sqlite.OpenURI)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	out := map[int64][]int64{}
	err = sqlitex.ExecuteTransient(conn, `SELECT k.globalPid / 16777216 % 16777216, k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k
JOIN StringIds s ON s.id = k.shortName WHERE s.value LIKE 'nccl%' ORDER BY k.start`, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
		out[st.ColumnInt64(0)] = append(out[st.ColumnInt64(0)], st.ColumnInt64(1))
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRankPhaseZeroWalls: a phase whose instances have no wall on any
// rank (marks, instant ranges) has no imbalance and no relative score —
// null, never the 0 that would read "balanced" or "slowest".
func TestRankPhaseZeroWalls(t *testing.T) {
	ps := []phases.RankProcess{{Rank: 0}, {Rank: 1}}
	byRank := map[int][]rankInst{}
	for r := range 2 {
		byRank[r] = []rankInst{
			{Phase: "step", Tid: 1, Depth: 0, Start: 0, End: 600, IsStep: true, Wall: 600},
			{Phase: "mark", Tid: 1, Depth: 1, Start: 10, End: 10, Wall: 0},
		}
	}
	rows := rankPhaseArm(ps, byRank, "mark", "", &rankCache{})
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		if r.N != 1 || r.WallMeanNs != 0 || r.Imbalance != nil || r.RelativeScore != nil {
			t.Errorf("rank %d: n %d, wall %v, imbalance %v, score %v: want no imbalance and no score", r.Rank, r.N, r.WallMeanNs, r.Imbalance, r.RelativeScore)
		}
	}
	rows = rankPhaseArm(ps, byRank, "step", "", &rankCache{})
	if len(rows) != 2 || rows[0].Imbalance == nil || *rows[0].Imbalance != 1 {
		t.Errorf("step rows %+v: want imbalance 1", rows)
	}
}

// TestStragglersNameMismatchedCollectives: matched by order, rank 1 runs
// an AllGather that rank 0 lacks (a subgroup collective), so the order
// pairs it with rank 0's AllReduce: a collectives_mismatched warning
// counts such pairs; the same operation under another protocol or data type
// (…_RING_LL against …_RING_LL128) is not a mismatch.
func TestStragglersNameMismatchedCollectives(t *testing.T) {
	coll := func(name string, start int64) phases.Collective {
		return phases.Collective{Name: name, Start: start, End: start + 10, CallStart: -1}
	}
	ps := []phases.RankProcess{
		{Rank: 0, Kind: "nccl", Collectives: []phases.Collective{coll("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 100), coll("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 200), coll("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 300)}},
		{Rank: 1, Kind: "nccl", Collectives: []phases.Collective{coll("ncclDevKernel_AllReduce_Sum_f32_RING_LL128", 101), coll("ncclDevKernel_AllGather_RING_LL", 150), coll("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 201)}},
	}
	d := &Doc{Settings: Settings{Confidence: 0.95, Resamples: MinResamples, Seed: 1}}
	s := &RanksSection{Ranks: make([]RankRow, 2)}
	o := DefaultOptions()
	o.NoStats = true
	d.stragglers(s, ps, map[int][]rankInst{}, func(_ *phases.RankProcess, t int64) int64 { return t }, &o)
	var w *Warning
	for i := range d.Warnings {
		if d.Warnings[i].Code == WarnCollectivesMismatched {
			w = &d.Warnings[i]
		}
	}
	if w == nil {
		t.Fatalf("no %s warning: %+v", WarnCollectivesMismatched, d.Warnings)
	}
	if w.Values["mismatched"] != 1 || w.Values["collectives"] != 3 || !strings.Contains(w.Message, "AllGather_RING_LL on rank 1") {
		t.Errorf("warning %+v: want 1 of 3 collectives mismatched, the first naming rank 1's AllGather", w)
	}
	for _, x := range []struct{ a, b string }{{"MPI_Allreduce", "ncclDevKernel_AllReduce_Sum_bf16_RING_SIMPLE"}, {"MPI_Reduce", "MPI_Reduce"}} {
		if collectiveOp(x.a) != collectiveOp(x.b) {
			t.Errorf("%s and %s: different operations %q, %q", x.a, x.b, collectiveOp(x.a), collectiveOp(x.b))
		}
	}
	if collectiveOp("MPI_Allreduce") == collectiveOp("MPI_Reduce") {
		t.Error("allreduce and reduce are one operation")
	}
}
