package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/phases"
)

func analyseRanks(t *testing.T, files []string, rankGlobs []string, skip int) *Doc {
	t.Helper()
	cfg := Config{Files: files, RankGlobs: rankGlobs,
		Segment: phases.Options{ArmPattern: regexp.MustCompile(phases.DefaultArmPattern), Depth: 1, SkipSteps: skip}}
	frs, err := ReadFiles(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(context.Background(), frs, statsOptions(skip), "test")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func distAllreduce(t *testing.T) string {
	for _, fx := range fixture.Extra(t) {
		if fx.Name == "dist_allreduce_2gpu" {
			return fx.XZ
		}
	}
	t.Skip("no dist_allreduce_2gpu")
	return ""
}

// checkStragglerRows recomputes, from the per-step rows alone, what the
// rank rows say: each matched step has one straggler, the earliest rank's
// lateness is 0 when the step holds one collective, and each rank's
// straggler count and mean lateness.
func checkStragglerRows(t *testing.T, s *RanksSection) {
	t.Helper()
	nr := len(s.Ranks)
	if len(s.Steps) != s.Settings.Steps*nr {
		t.Fatalf("%d step rows for %d steps × %d ranks", len(s.Steps), s.Settings.Steps, nr)
	}
	count := map[int]int{}
	sum := map[int]int64{}
	for i := 0; i < len(s.Steps); i += nr {
		rows := s.Steps[i : i+nr]
		last, lo, hi := 0, int64(math.MaxInt64), int64(0)
		for _, r := range rows {
			if r.Straggler {
				last++
				count[r.Rank]++
			}
			sum[r.Rank] += r.LatenessNs
			lo, hi = min(lo, r.LatenessNs), max(hi, r.LatenessNs)
		}
		if last != 1 {
			t.Fatalf("step %d: %d stragglers", rows[0].Step, last)
		}
		if rows[0].Collectives == 1 && (lo != 0 || hi != rows[0].SkewNs) {
			t.Fatalf("step %d: lateness %d..%d, skew %d", rows[0].Step, lo, hi, rows[0].SkewNs)
		}
	}
	for _, r := range s.Ranks {
		if r.StragglerSteps != count[r.Rank] {
			t.Errorf("rank %d: %d straggler steps, rows say %d", r.Rank, r.StragglerSteps, count[r.Rank])
		}
		if want := float64(sum[r.Rank]) / float64(s.Settings.Steps); r.LatenessMeanNs == nil || math.Abs(*r.LatenessMeanNs-want) > 1e-6 {
			t.Errorf("rank %d: mean lateness %v, rows say %v", r.Rank, r.LatenessMeanNs, want)
		}
	}
}

// TestRanksSectionDistAllreduce: the bundled 2-GPU DDP-style run (one
// export, two processes). Values measured on it; NCCL sums and exposed
// time are equal to SQL (phases.TestRanksNCCLMatchesSQL).
func TestRanksSectionDistAllreduce(t *testing.T) {
	d := analyseRanks(t, []string{distAllreduce(t)}, nil, 1)
	s := d.Ranks
	if s == nil || len(s.Ranks) != 2 {
		t.Fatalf("ranks section %+v", s)
	}
	if !strings.HasPrefix(s.Source, "process order") || s.MultiHost || s.Settings.Unit != "step" {
		t.Errorf("source %q, multi-host %v, unit %q", s.Source, s.MultiHost, s.Settings.Unit)
	}
	want := []struct {
		pid                   int64
		nccl, exposed         int64
		stragglerSteps, steps int
	}{{690, 12980533, 11170459, 74, 76}, {691, 45646797, 33740617, 2, 76}}
	for i, w := range want {
		r := s.Ranks[i]
		if r.Rank != i || r.Pid != w.pid || r.NCCLNs != w.nccl || r.NCCLExposedNs != w.exposed || r.StragglerSteps != w.stragglerSteps || s.Settings.Steps != w.steps {
			t.Errorf("rank %d: pid %d nccl %d exposed %d last in %d of %d steps; want %+v", r.Rank, r.Pid, r.NCCLNs, r.NCCLExposedNs, r.StragglerSteps, s.Settings.Steps, w)
		}
		if r.OverlapShare == nil || math.Abs(*r.OverlapShare-float64(w.nccl-w.exposed)/float64(w.nccl)) > 1e-12 {
			t.Errorf("rank %d: overlap share %v", i, r.OverlapShare)
		}
	}
	// Rank 0 arrives last at almost every allreduce (its forward is slower),
	// with a between-block CI (4 arm blocks: jackknife).
	if r := s.Ranks[0]; r.LatenessMeanNs == nil || math.Abs(*r.LatenessMeanNs-143206.84210526315) > 1e-6 || r.LatenessCI == nil || r.Method != "cluster-jackknife-t" {
		t.Errorf("rank 0 lateness %v CI %v method %q", r.LatenessMeanNs, r.LatenessCI, r.Method)
	}
	checkStragglerRows(t, s)
	// In each step a rank's NCCL kernel is its wait for the last rank plus
	// the collective's time after that arrival: wait + after = the step's
	// NCCL time per step (the step rows', averaged over the two arms' 38
	// steps each).
	for _, r := range s.Ranks {
		var nccl float64
		for _, p := range s.Phases {
			if p.Phase == "step" && p.Rank == r.Rank {
				nccl += p.NCCLNsMean / 2
			}
		}
		if r.WaitMeanNs == nil || r.AfterLastMeanNs == nil || math.Abs(*r.WaitMeanNs+*r.AfterLastMeanNs-nccl) > 0.005*nccl {
			t.Errorf("rank %d: wait %v + after last %v, step NCCL %v", r.Rank, r.WaitMeanNs, r.AfterLastMeanNs, nccl)
		}
	}
	// Every NCCL kernel is launched inside the allreduce phase, so its NCCL
	// time per instance equals the step's, and imbalance is max/mean.
	byKey := map[string]RankPhaseRow{}
	for _, p := range s.Phases {
		byKey[p.Phase+"/"+p.Arm+"/"+string(rune('0'+p.Rank))] = p
	}
	// Per-rank arm comparisons: their means are the phase rows' means.
	// The step, its three phases and (unannotated).
	if len(s.Comparisons) != 5*2 {
		t.Errorf("%d rank comparisons, want 5 phases × 2 ranks", len(s.Comparisons))
	}
	for _, c := range s.Comparisons {
		key := c.Phase + "/%s/" + string(rune('0'+c.Rank))
		b, a := byKey[fmt.Sprintf(key, "sync")], byKey[fmt.Sprintf(key, "overlap")]
		if c.Baseline != "sync" || c.Arm != "overlap" || math.Abs(c.BaseMeanNs-b.WallMeanNs) > 1e-6 || math.Abs(c.ArmMeanNs-a.WallMeanNs) > 1e-6 ||
			c.Ratio == nil || math.Abs(*c.Ratio-a.WallMeanNs/b.WallMeanNs) > 1e-12 || c.NUnits != 2 {
			t.Errorf("rank comparison %+v; phase rows %v, %v", c, b.WallMeanNs, a.WallMeanNs)
		}
	}
	// The straggler rows' step walls are the ranks' kept step walls.
	for _, r := range []int{0, 1} {
		sum, n := int64(0), 0
		for _, st := range s.Steps {
			if st.Rank == r {
				if st.StepWallNs == nil {
					t.Fatalf("rank %d step %d: no step wall", r, st.Step)
				}
				sum += *st.StepWallNs
				n++
			}
		}
		rk := string(rune('0' + r))
		want := (byKey["step/sync/"+rk].WallMeanNs + byKey["step/overlap/"+rk].WallMeanNs) / 2 // 38 steps each
		if got := float64(sum) / float64(n); math.Abs(got-want) > 1e-6 {
			t.Errorf("rank %d: straggler rows' mean step wall %v, phase rows %v", r, got, want)
		}
	}
	if len(byKey) != 5*2*2 {
		t.Fatalf("%d phase rows, want 5 phases × 2 arms × 2 ranks", len(byKey))
	}
	for _, arm := range []string{"sync", "overlap"} {
		for _, r := range []string{"0", "1"} {
			st, ar := byKey["step/"+arm+"/"+r], byKey["allreduce/"+arm+"/"+r]
			if st.N != 38 || st.N != ar.N || math.Abs(st.NCCLNsMean-ar.NCCLNsMean) > 1e-6 || ar.NCCLNsMean == 0 {
				t.Errorf("%s rank %s: step NCCL %v (n %d), allreduce %v (n %d)", arm, r, st.NCCLNsMean, st.N, ar.NCCLNsMean, ar.N)
			}
			// The sync arm allreduces after the backward pass: nothing to
			// overlap (a measured 0); the overlap arm hides part of it.
			o := ar.OverlapShare
			if arm == "sync" && (o == nil || *o != 0) || arm == "overlap" && (o == nil || *o < 0.3) {
				t.Errorf("%s rank %s: overlap share %v", arm, r, o)
			}
		}
		f0, f1 := byKey["forward/"+arm+"/0"], byKey["forward/"+arm+"/1"]
		if want := max(f0.WallMeanNs, f1.WallMeanNs) / ((f0.WallMeanNs + f1.WallMeanNs) / 2); f0.Imbalance == nil || math.Abs(*f0.Imbalance-want) > 1e-12 || *f0.Imbalance < 1.29 {
			t.Errorf("%s forward imbalance %v, want %v", arm, f0.Imbalance, want)
		}
	}
}

// TestRanksAbsentOnSingleRank: an export without ranks has no ranks
// section, and its JSON no "ranks" key.
func TestRanksAbsentOnSingleRank(t *testing.T) {
	for _, name := range []string{"interleaved_graph", "sharing_mps_1"} {
		d := analyseFixture(t, name, pointOptions(1))
		if d.Ranks != nil {
			t.Errorf("%s: ranks section %+v", name, d.Ranks)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"ranks"`) {
			t.Errorf("%s: JSON has a ranks key", name)
		}
	}
}

// TestRanksPerRankExports: one export per rank, ranks from the recorded
// environment, arrivals on one timeline through each export's session
// start. The clock is checked by physics: every rank leaves a blocking
// collective at (nearly) the same moment, so the aligned ends of matched
// collectives agree to within 0.5 ms while their starts differ by
// hundreds of µs.
func TestRanksPerRankExports(t *testing.T) {
	t.Run("openmpi_5_ranks", func(t *testing.T) {
		fxs := fixture.Multirank(t, "openhackathons-org__")
		d := analyseRanks(t, nil, []string{strings.Replace(fxs[0].XZ, "report1", "report*", 1)}, 1)
		s := d.Ranks
		if s == nil || len(s.Ranks) != 5 {
			t.Fatalf("ranks %+v", s)
		}
		// 1000 steady-state collectives; the 2 outside the counted steps
		// (initialisation) are reported apart.
		if s.Source != "environment OMPI_COMM_WORLD_RANK" || s.Settings.Unit != "collective" || s.Settings.Steps != 1000 || s.Settings.InitCollectives != 2 || s.MultiHost {
			t.Errorf("source %q unit %q steps %d multi-host %v", s.Source, s.Settings.Unit, s.Settings.Steps, s.MultiHost)
		}
		got := map[int]int{}
		for _, r := range s.Ranks {
			got[r.Rank] = r.StragglerSteps
			if r.NCCLNs != 0 || r.OverlapShare != nil || r.Collectives != 1002 {
				t.Errorf("rank %d: nccl %d overlap %v collectives %d", r.Rank, r.NCCLNs, r.OverlapShare, r.Collectives)
			}
		}
		// Rank 3 arrives last at 956 of the 1000 steady-state MPI collectives.
		if got[3] != 956 {
			t.Errorf("straggler counts %v", got)
		}
		// measured: rank 3 is 19.0 ms late over the two init collectives,
		// apart from its steady 501.2 µs mean (482.3 µs median) lateness
		for _, r := range s.Ranks {
			if r.Rank == 3 && (r.InitLatenessNs != 19006000 || r.LatenessMedianNs == nil || *r.LatenessMedianNs != 482260 || math.Abs(*r.LatenessMeanNs-501246.343) > 1e-3) {
				t.Errorf("rank 3: init lateness %d, steady mean %v median %v", r.InitLatenessNs, *r.LatenessMeanNs, *r.LatenessMedianNs)
			}
		}
		checkStragglerRows(t, s)
		if s.Steps[0].StepWallNs != nil {
			t.Error("collectives matched alone carry a step wall")
		}
		checkAlignedEnds(t, d, 100_000)
	})
	t.Run("alcf_2_nodes", func(t *testing.T) {
		fxs := fixture.Multirank(t, "argonne-lcf__")
		d := analyseRanks(t, []string{fxs[0].XZ, fxs[1].XZ}, nil, 1)
		s := d.Ranks
		if s == nil || len(s.Ranks) != 2 || !s.MultiHost || s.Source != "environment PMI_RANK" {
			t.Fatalf("ranks %+v", s)
		}
		if s.Ranks[0].Rank != 0 || s.Ranks[1].Rank != 4 || s.Ranks[1].StragglerSteps != 1 {
			t.Errorf("ranks %d, %d; rank 4 last %d", s.Ranks[0].Rank, s.Ranks[1].Rank, s.Ranks[1].StragglerSteps)
		}
		// The all-gather: rank 0 waits 167 ms in its kernel for rank 4.
		if l := s.Ranks[1].LatenessMeanNs; l == nil || *l < 166e6 || *l > 168e6 {
			t.Errorf("rank 4 lateness %v", l)
		}
		checkAlignedEnds(t, d, 500_000)
	})
}

// checkAlignedEnds reads the ranks' collectives again and checks that the
// k-th collective ends within tol ns on every rank once each export's
// session start is added.
func checkAlignedEnds(t *testing.T, d *Doc, tol int64) {
	t.Helper()
	var files []*FileResult
	seen := map[string]bool{}
	for _, r := range d.Ranks.Ranks {
		if !seen[r.File] {
			seen[r.File] = true
			frs, err := ReadFiles(context.Background(), Config{Files: []string{r.File}, RankGlobs: []string{r.File},
				Segment: phases.Options{ArmPattern: regexp.MustCompile(phases.DefaultArmPattern), Depth: 1}})
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, frs...)
		}
	}
	n := math.MaxInt
	for _, fr := range files {
		n = min(n, len(fr.Ranks[0].Collectives))
	}
	worst := int64(0)
	for k := range n {
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, fr := range files {
			p := fr.Ranks[0]
			e := p.SessionStartUTC + p.Collectives[k].End
			lo, hi = min(lo, e), max(hi, e)
		}
		worst = max(worst, hi-lo)
	}
	if worst > tol {
		t.Errorf("aligned ends of matched collectives differ by up to %d ns", worst)
	}
	t.Logf("%d matched collectives: aligned ends within %d ns", n, worst)
}

// TestRankStepKeys: numbered steps match by their label; others by arm,
// block and the rank's own index, which counts warm-up steps too.
func TestRankStepKeys(t *testing.T) {
	st := func(arm string, block int, start int64, label string) rankInst {
		return rankInst{IsStep: true, Arm: arm, Block: block, Start: start, End: start + 10, StepLabel: label, Phase: "step"}
	}
	xs := []rankInst{st("a", 0, 0, ""), st("a", 0, 20, ""), st("b", 0, 40, ""), st("a", 0, 60, ""),
		{Phase: "fwd", Start: 21, End: 25}, {Phase: "fwd", Start: 1, End: 5}, st("c", 0, 80, "")}
	xs[0].Warmup = true
	steps := stepsOf(xs)
	if keys, want := rankStepKeys(steps), []string{"a block 0 step 0", "a block 0 step 1", "b block 0 step 0", "a block 0 step 2", "c block 0 step 0"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	numbered := []rankInst{st("", 0, 0, "ProfilerStep#7"), st("", 0, 20, "ProfilerStep#8")}
	if keys := rankStepKeys(numbered); !slices.Equal(keys, []string{"ProfilerStep#7", "ProfilerStep#8"}) {
		t.Errorf("numbered keys %v", keys)
	}
}

// TestRankPhaseNCCLThreads: an NCCL kernel counts in the phase instance
// whose range holds its launching call on the instance's thread; one
// launched meanwhile by another thread of the process is reported beside
// it; one launched outside every instance counts nowhere.
func TestRankPhaseNCCLThreads(t *testing.T) {
	ps := []phases.RankProcess{{Rank: 0, Kind: "nccl", Collectives: []phases.Collective{
		{Start: 100, End: 150, ExposedNs: 20, Tid: 1, CallStart: 12},  // own thread, in instance 1
		{Start: 200, End: 230, ExposedNs: 30, Tid: 2, CallStart: 15},  // autograd thread, during instance 1
		{Start: 300, End: 310, ExposedNs: 10, Tid: 1, CallStart: 500}, // outside
	}}}
	inst := func(phase string, depth int, start, end, wall int64) rankInst {
		return rankInst{Phase: phase, Tid: 1, Depth: depth, Start: start, End: end, IsStep: depth == 0, Wall: wall}
	}
	byRank := map[int][]rankInst{0: {
		inst("step", 0, 0, 600, 600),
		inst("bwd", 1, 10, 20, 10),
		inst("bwd", 1, 30, 40, 10),
		// spans the step; its wall is the step's time outside every phase
		inst(phases.Unannotated, 1, 0, 600, 580),
	}}
	byRank[0][3].BusyNull = true
	rows := rankPhaseArm(ps, byRank, "bwd", "", &rankCache{})
	if len(rows) != 1 {
		t.Fatalf("rows %+v", rows)
	}
	r := rows[0]
	if r.N != 2 || r.WallMeanNs != 10 || r.NCCLNsMean != 25 || r.NCCLExposedNsMean != 10 || r.NCCLOtherThreadNsMean != 15 ||
		r.OverlapShare == nil || *r.OverlapShare != 0.6 || r.Imbalance == nil || *r.Imbalance != 1 || r.GPUBusyMeanNs == nil || *r.GPUBusyMeanNs != 0 {
		t.Errorf("row %+v (overlap %v)", r, *r.OverlapShare)
	}
	// (unannotated): its wall metric, the NCCL kernel launched outside
	// every phase (CallStart 500) alone, GPU busy not measured.
	rows = rankPhaseArm(ps, byRank, phases.Unannotated, "", &rankCache{})
	if r := rows[0]; r.N != 1 || r.WallMeanNs != 580 || r.NCCLNsMean != 10 || r.NCCLExposedNsMean != 10 || r.GPUBusyMeanNs != nil {
		t.Errorf("(unannotated) row %+v", r)
	}
	// the step: every NCCL kernel launched on its thread inside it
	rows = rankPhaseArm(ps, byRank, "step", "", &rankCache{})
	if r := rows[0]; r.WallMeanNs != 600 || r.NCCLNsMean != 60 || r.NCCLOtherThreadNsMean != 30 {
		t.Errorf("step row %+v", r)
	}
}

// TestRanksFromManifest: a run manifest beside the export that lists
// {"rank", "pid"} names the ranks (here the reverse of process order).
func TestRanksFromManifest(t *testing.T) {
	dir := t.TempDir()
	src := distAllreduce(t)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "ddp.sqlite.xz")
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	man := `{"ranks": [{"rank": 1, "pid": 690}, {"rank": 0, "pid": 691}]}`
	if err := os.WriteFile(filepath.Join(dir, "ddp.manifest.json"), []byte(man), 0o644); err != nil {
		t.Fatal(err)
	}
	d := analyseRanks(t, []string{dst}, nil, 1)
	s := d.Ranks
	if s == nil || s.Source != "run manifest" || s.Ranks[0].Pid != 691 || s.Ranks[1].Pid != 690 {
		t.Fatalf("ranks %+v", s)
	}
	// The straggler is the same process, now rank 1.
	if s.Ranks[1].StragglerSteps != 74 {
		t.Errorf("pid 690 (rank 1) last in %d steps, want 74", s.Ranks[1].StragglerSteps)
	}
}
