package dataset

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/phases"
)

// syntheticRank is rank k of a synthetic job made from one real
// single-rank export (fr, analysed once): named rankK.sqlite, its session
// start moved by up to ±1 ms and every duration scaled by 1 ± 3 % (times
// scaled about the first step's start, so nesting is kept), drawn from a
// generator seeded by k.
func syntheticRank(fr *analysis.FileResult, xs []phases.Instance, k int) *analysis.FileResult {
	rng := rand.New(rand.NewPCG(uint64(k), 39))
	f := 1 + 0.06*(rng.Float64()-0.5)
	shift := int64(2e6 * (rng.Float64() - 0.5))
	path := fmt.Sprintf("rank%d.sqlite", k)
	t0 := fr.MinTime
	scale := func(t int64) int64 { return t0 + int64(float64(t-t0)*f) }
	out := make([]phases.Instance, len(xs))
	for i, x := range xs {
		x.File, x.Unit.File = path, path
		x.Start, x.End = scale(x.Start), scale(x.End)
		for m := range phases.NumMetrics() {
			if m.Unit() == "ns" {
				x.M[m] = int64(float64(x.M[m]) * f)
			}
		}
		x.M[phases.Wall] = 0 // the parts still sum to the wall
		for _, m := range phases.WallParts() {
			x.M[phases.Wall] += x.M[m]
		}
		out[i] = x
	}
	res := *fr.Result
	res.Instances, res.Store = out, nil
	res.Inputs = append([]phases.Input(nil), fr.Result.Inputs...)
	for i := range res.Inputs {
		res.Inputs[i].File = path
	}
	info := *fr.Info
	info.File = path
	c := *fr
	c.Path, c.Result, c.Info, c.StartUTC = path, &res, &info, fr.StartUTC+shift
	c.Ranks = append([]phases.RankProcess(nil), fr.Ranks...)
	for i := range c.Ranks {
		c.Ranks[i].File, c.Ranks[i].EnvRank, c.Ranks[i].EnvVar = path, k, "RANK"
		c.Ranks[i].SessionStartUTC += shift
	}
	return &c
}

// writeSyntheticRankDatasets writes the datasets of a synthetic job of n
// ranks into dir (see TestWriteSyntheticRankDatasets) and returns their
// directories in rank order.
func writeSyntheticRankDatasets(tb testing.TB, dir string, n int) []string {
	tb.Helper()
	src := rankCopy(tb, fixture.Get(tb, "eager_graph_small").SQLite(tb), tb.TempDir(), "rank", 0, 0)
	frs, err := analysis.ReadFiles(context.Background(), analysis.Config{Files: []string{src},
		Segment: phases.Options{ArmPattern: regexp.MustCompile(phases.DefaultArmPattern), Depth: 1, SkipSteps: 1}})
	if err != nil {
		tb.Fatal(err)
	}
	fr := frs[0]
	if len(fr.Ranks) != 1 {
		tb.Fatalf("%d rank processes in the source", len(fr.Ranks))
	}
	xs := fr.Result.InstanceStore().All()
	var dirs []string
	for k := range n {
		one := syntheticRank(fr, xs, k)
		d, err := analysis.Build(context.Background(), []*analysis.FileResult{one}, pointOptions(1), "test")
		if err != nil {
			tb.Fatal(err)
		}
		c, err := ContextMetadata(d)
		if err != nil {
			tb.Fatal(err)
		}
		opt := export.Options{Metadata: map[string]string{MetaContext: c}}
		out := filepath.Join(dir, fmt.Sprintf("rank%04d", k))
		if err := export.WriteDataset(out, Tables(d), export.FormatParquet, opt); err != nil {
			tb.Fatal(err)
		}
		dirs = append(dirs, out)
	}
	return dirs
}

// BenchmarkRankReduce is the reduce of docs/ranks.md, `analyze --from`
// over the datasets of a synthetic job (64 ranks, or
// $NSYSPHASE_BENCH_RANKS), with the default statistics: loading the
// datasets, pooling their instances and building the document with its
// rank view (not rendering it). scripts/bench_ranks.sh times the whole
// command over 1,024 ranks.
func BenchmarkRankReduce(b *testing.B) {
	n := 64
	if s := os.Getenv("NSYSPHASE_BENCH_RANKS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	dirs := writeSyntheticRankDatasets(b, b.TempDir(), n)
	b.ReportAllocs()
	for b.Loop() {
		d, err := Build(context.Background(), dirs, analysis.DefaultOptions(), "bench")
		if err != nil {
			b.Fatal(err)
		}
		if d.Ranks == nil || len(d.Ranks.Ranks) != n {
			b.Fatalf("rank view of %v ranks, want %d", d.Ranks, n)
		}
	}
}

// TestWriteSyntheticRankDatasets writes the datasets of a synthetic job of
// $NSYSPHASE_RANK_DATASETS_N ranks (default 1024) into
// $NSYSPHASE_RANK_DATASETS, as `analyze --no-stats --out` of each rank's
// export would (the map of docs/ranks.md); scripts/bench_ranks.sh then
// times the reduce over them. Skipped unless the directory is given.
func TestWriteSyntheticRankDatasets(t *testing.T) {
	dir := os.Getenv("NSYSPHASE_RANK_DATASETS")
	if dir == "" {
		t.Skip("set NSYSPHASE_RANK_DATASETS=DIR to write the synthetic rank datasets")
	}
	n := 1024
	if s := os.Getenv("NSYSPHASE_RANK_DATASETS_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	writeSyntheticRankDatasets(t, dir, n)
}
