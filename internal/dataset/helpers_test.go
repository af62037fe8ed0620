package dataset

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/phases"
)

// statsOptions are the default options with 1999 resamples (the fewest
// Validate accepts: quick tests) and skip warm-up steps.
func statsOptions(skip int) analysis.Options {
	o := analysis.DefaultOptions()
	o.Resamples, o.SkipSteps = analysis.MinResamples, skip
	return o
}

// pointOptions are the default options without statistics, skip warm-up
// steps.
func pointOptions(skip int) analysis.Options {
	o := analysis.DefaultOptions()
	o.NoStats, o.SkipSteps = true, skip
	return o
}

// analyseFixture analyses the bundled export name with the options o.
func analyseFixture(t *testing.T, name string, o analysis.Options) *analysis.Doc {
	t.Helper()
	o.Files = []string{fixture.Get(t, name).XZ}
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	files, err := analysis.ReadFiles(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Build(context.Background(), files, o, "test")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// analyseRanks analyses files, and the rank exports rankGlobs name, with
// statistics, skip warm-up steps.
func analyseRanks(t *testing.T, files []string, rankGlobs []string, skip int) *analysis.Doc {
	t.Helper()
	cfg := analysis.Config{Files: files, RankGlobs: rankGlobs,
		Segment: phases.Options{ArmPattern: regexp.MustCompile(phases.DefaultArmPattern), Depth: 1, SkipSteps: skip}}
	frs, err := analysis.ReadFiles(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Build(context.Background(), frs, statsOptions(skip), "test")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// distAllreduce is the bundled two-rank NCCL export.
func distAllreduce(t *testing.T) string {
	for _, fx := range fixture.Extra(t) {
		if fx.Name == "dist_allreduce_2gpu" {
			return fx.XZ
		}
	}
	t.Skip("no dist_allreduce_2gpu")
	return ""
}

// writeDataset writes d's tables as analyze --out does (with the analysis
// context or without), flat or partitioned by arm and file.
func writeDataset(t *testing.T, d *analysis.Doc, withContext, partition bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	opt := export.Options{Metadata: map[string]string{}}
	if withContext {
		c, err := ContextMetadata(d)
		if err != nil {
			t.Fatal(err)
		}
		opt.Metadata[MetaContext] = c
	}
	if partition {
		opt.PartitionBy = []string{"arm", "file"}
	}
	if err := export.WriteDataset(dir, Tables(d), export.FormatParquet, opt); err != nil {
		t.Fatal(err)
	}
	return dir
}

func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
