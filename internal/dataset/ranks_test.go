package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/phases"
)

// TestRanksPerRankDatasets: one job per rank export, each writing its
// dataset; --from over them finds the same ranks section as one analysis
// of them all (openmpi_5_ranks: five exports of one MPI job).
func TestRanksPerRankDatasets(t *testing.T) {
	fxs := fixture.Multirank(t, "openhackathons-org__")
	d := analyseRanks(t, nil, []string{strings.Replace(fxs[0].XZ, "report1", "report*", 1)}, 1)
	if d.Ranks == nil || len(d.Ranks.Ranks) != 5 {
		t.Fatalf("ranks %+v", d.Ranks)
	}
	var dirs []string
	for _, fx := range fxs {
		one := analyseRanks(t, nil, []string{fx.XZ}, 1)
		if one.Ranks != nil {
			t.Fatalf("%s alone: a ranks section of %d", fx.Name, len(one.Ranks.Ranks))
		}
		dirs = append(dirs, writeDataset(t, one, true, false))
	}
	from, err := Build(context.Background(), dirs, statsOptions(1), "test")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(from.Ranks)
	b, _ := json.Marshal(d.Ranks)
	if string(a) != string(b) {
		t.Errorf("--from over the per-rank datasets: ranks section differs:\n got %.400s\nwant %.400s", a, b)
	}
}

// TestRanksDataset: phase_instances carries each instance's rank (null
// without ranks), a dataset written with ranks has a stragglers table, and
// --from reads the rank back.
func TestRanksDataset(t *testing.T) {
	d := analyseRanks(t, []string{distAllreduce(t)}, nil, 1)
	pidRank := map[int64]int{690: 0, 691: 1}
	for _, x := range d.Instances() {
		if !x.HasRank || x.Rank != pidRank[x.Pid] {
			t.Fatalf("pid %d: rank %d (has %v)", x.Pid, x.Rank, x.HasRank)
		}
	}
	var names []string
	for _, tb := range Tables(d) {
		names = append(names, tb.Name)
		if tb.Name == "stragglers" && tb.Len() != 2*76 {
			t.Errorf("stragglers: %d rows, want %d", tb.Len(), 2*76)
		}
	}
	if !strings.Contains(strings.Join(names, " "), "stragglers") {
		t.Errorf("tables %v lack stragglers", names)
	}
	dir := writeDataset(t, d, true, false)
	ds, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	frs, _, _, err := fileResultsOf([]*Dataset{ds}, pointOptions(1)) // skip-steps not given: the dataset's own
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fr := range frs {
		for _, x := range fr.Result.InstanceStore().Each() {
			n++
			if !x.HasRank || x.Rank != pidRank[x.Pid] {
				t.Fatalf("--from: pid %d rank %d (has %v)", x.Pid, x.Rank, x.HasRank)
			}
		}
	}
	if n != len(d.Instances()) {
		t.Errorf("--from read %d instances, wrote %d", n, len(d.Instances()))
	}
	// Without ranks: no stragglers table and a null rank.
	single := analyseFixture(t, "interleaved_graph", pointOptions(1))
	for _, tb := range Tables(single) {
		if tb.Name == "stragglers" {
			t.Error("single-rank export has a stragglers table")
		}
	}
	if x := single.Instances()[0]; x.HasRank {
		t.Errorf("single-rank instance has rank %d", x.Rank)
	}
}

// TestRanksFromDataset: --from rebuilds the same ranks section from a
// dataset (flat or partitioned): the context carries the rank processes,
// rank_collectives their collectives.
func TestRanksFromDataset(t *testing.T) {
	direct := analyseRanks(t, []string{distAllreduce(t)}, nil, 1)
	want, err := json.Marshal(direct.Ranks)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []bool{false, true} {
		dir := writeDataset(t, direct, true, part)
		from, err := Build(context.Background(), []string{dir}, statsOptions(1), "test")
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(from.Ranks)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("partition %v: --from ranks section differs:\n got %.600s\nwant %.600s", part, got, want)
		}
	}
}

// checkRankRows checks every rank × phase row of s, as JSON carries it,
// against xs (phase_instances) grouped by rank: the kept instances'
// count, mean wall metric and mean GPU busy (null where an instance's is
// not measured); and that every rank × phase with kept instances has a row.
func checkRankRows(t *testing.T, s *analysis.RanksSection, xs []phases.Instance) {
	t.Helper()
	type key struct {
		phase, arm string
		rank       int
	}
	type agg struct {
		n, busyN   int
		wall, busy int64
	}
	want := map[key]*agg{}
	for i := range xs {
		x := &xs[i]
		// another thread's row without ranges has no wall: no rank row
		if x.Warmup || !x.HasRank || x.IsNull(phases.Wall) {
			continue
		}
		k := key{x.Phase, x.Arm, x.Rank}
		a := want[k]
		if a == nil {
			a = &agg{}
			want[k] = a
		}
		a.n++
		a.wall += x.M[phases.Wall]
		if !x.IsNull(phases.GPUBusy) {
			a.busyN++
			a.busy += x.M[phases.GPUBusy]
		}
	}
	raw, err := json.Marshal(s.Phases)
	if err != nil {
		t.Fatal(err)
	}
	var rows []analysis.RankPhaseRow
	if err := json.Unmarshal(raw, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Errorf("%d rank rows, phase_instances has %d rank × phase groups", len(rows), len(want))
	}
	for _, r := range rows {
		a := want[key{r.Phase, r.Arm, r.Rank}]
		if a == nil {
			t.Errorf("row %s/%s rank %d: no kept instances", r.Phase, r.Arm, r.Rank)
			continue
		}
		if r.N != a.n || r.WallMeanNs != float64(a.wall)/float64(a.n) {
			t.Errorf("%s/%s rank %d: n %d wall %v; phase_instances n %d wall %v", r.Phase, r.Arm, r.Rank, r.N, r.WallMeanNs, a.n, float64(a.wall)/float64(a.n))
		}
		switch {
		case a.busyN < a.n && r.GPUBusyMeanNs != nil:
			t.Errorf("%s/%s rank %d: gpu busy %v where not measured", r.Phase, r.Arm, r.Rank, *r.GPUBusyMeanNs)
		case a.busyN == a.n && (r.GPUBusyMeanNs == nil || *r.GPUBusyMeanNs != float64(a.busy)/float64(a.n)):
			t.Errorf("%s/%s rank %d: gpu busy %v, phase_instances %v", r.Phase, r.Arm, r.Rank, r.GPUBusyMeanNs, float64(a.busy)/float64(a.n))
		}
	}
}

// TestRankRowsArePhaseInstances: on every multi-rank export, each rank ×
// phase row equals phase_instances grouped by rank, in the document and
// in the dataset's phase_instances read back by --from; the (unannotated)
// row is the step's time outside its phases, never the step's.
func TestRankRowsArePhaseInstances(t *testing.T) {
	sc := statsOptions(1)
	check := func(t *testing.T, d *analysis.Doc, parquet bool) {
		t.Helper()
		if d.Ranks == nil {
			t.Fatal("no ranks section")
		}
		checkRankRows(t, d.Ranks, d.Instances())
		steps := map[string]float64{}
		for _, r := range d.Ranks.Phases {
			if r.Phase == d.Step {
				steps[fmt.Sprint(r.Arm, r.Rank)] = r.WallMeanNs
			}
		}
		for _, r := range d.Ranks.Phases {
			if r.Phase == phases.Unannotated && r.WallMeanNs >= steps[fmt.Sprint(r.Arm, r.Rank)] {
				t.Errorf("(unannotated) rank %d arm %q: wall %v, the step's %v", r.Rank, r.Arm, r.WallMeanNs, steps[fmt.Sprint(r.Arm, r.Rank)])
			}
		}
		if !parquet {
			return
		}
		from, err := Build(context.Background(), []string{writeDataset(t, d, true, false)}, sc, "test")
		if err != nil {
			t.Fatal(err)
		}
		checkRankRows(t, d.Ranks, from.Instances())
	}
	t.Run("dist_allreduce", func(t *testing.T) {
		d := analyseRanks(t, []string{distAllreduce(t)}, nil, 1)
		check(t, d, true)
		// measured: arm sync, rank 0 — the breakdown's (unannotated) is
		// a few µs, not the step's 909 µs
		for _, r := range d.Ranks.Phases {
			if r.Phase == phases.Unannotated && r.Arm == "sync" && r.Rank == 0 && (r.WallMeanNs > 20e3 || r.NCCLNsMean != 0) {
				t.Errorf("(unannotated) sync rank 0: %+v", r)
			}
		}
	})
	t.Run("openmpi_jacobi", func(t *testing.T) {
		fxs := fixture.Multirank(t, "openhackathons-org__")
		var files []string
		for _, fx := range fxs {
			files = append(files, fx.XZ)
		}
		check(t, analyseRanks(t, files, files, 1), true)
	})
	t.Run("alcf_2_nodes", func(t *testing.T) {
		fxs := fixture.Multirank(t, "argonne-lcf__")
		check(t, analyseRanks(t, []string{fxs[0].XZ, fxs[1].XZ}, nil, 1), false)
	})
	// Our own two-rank recordings without traced communication (gloo, one
	// GPU): one export per node, and one per rank.
	dist := func(t *testing.T, names ...string) []string {
		var out []string
		for _, n := range names {
			f := filepath.Join("../../testdata/nsys-2025.3-h200-dist", n+".sqlite.xz")
			if _, err := os.Stat(f); err != nil {
				t.Skipf("no %s: scripts/record/record_dist.sh records it", f)
			}
			out = append(out, f)
		}
		return out
	}
	t.Run("gloo_per_node", func(t *testing.T) {
		check(t, analyseRanks(t, dist(t, "gloo_ddp_strag_node"), nil, 1), true)
	})
	t.Run("gloo_per_rank", func(t *testing.T) {
		check(t, analyseRanks(t, dist(t, "gloo_ddp_strag_rank_rank0", "gloo_ddp_strag_rank_rank1"), nil, 1), true)
	})
	t.Run("mfu_2gpu", func(t *testing.T) {
		fxs := fixture.Multirank(t, "GindaChen__")
		check(t, analyseRanks(t, []string{fxs[0].XZ}, nil, 1), false)
	})
}
