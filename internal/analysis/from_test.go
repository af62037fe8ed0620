package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/phases"
)

func analyseFixture(t *testing.T, name string, skip int, sc StatsConfig) *Doc {
	t.Helper()
	cfg := Config{Files: []string{fixture.Get(t, name).XZ},
		Segment: phases.Options{ArmPattern: regexp.MustCompile(phases.DefaultArmPattern), Depth: 1, SkipSteps: skip}}
	files, err := ReadFiles(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(context.Background(), files, sc, "test", skip)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func writeDataset(t *testing.T, d *Doc, withContext, partition bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	opt := export.Options{Metadata: map[string]string{}}
	if withContext {
		c, err := d.ContextMetadata()
		if err != nil {
			t.Fatal(err)
		}
		opt.Metadata[MetaContext] = c
	}
	if partition {
		opt.PartitionBy = []string{"arm", "file"}
	}
	if err := export.WriteDataset(dir, d.Tables(), export.FormatParquet, opt); err != nil {
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

func TestBuildFromDatasets(t *testing.T) {
	ctx := context.Background()
	sc := StatsConfig{Confidence: 0.95, Resamples: 1999, Seed: 1}
	direct := analyseFixture(t, "eager_graph_small", 1, sc)

	t.Run("same document", func(t *testing.T) {
		for _, part := range []bool{false, true} {
			from, err := BuildFromDatasets(ctx, []string{writeDataset(t, direct, true, part)}, FromOptions{SkipSteps: -1}, sc, "test")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(asJSON(t, direct), asJSON(t, from)); diff != "" {
				t.Errorf("partition %v: -direct +from:\n%s", part, diff)
			}
			if !cmp.Equal(direct.UnitStarts(), from.UnitStarts()) {
				t.Errorf("partition %v: unit starts %v, want %v", part, from.UnitStarts(), direct.UnitStarts())
			}
		}
	})

	t.Run("without context", func(t *testing.T) {
		from, err := BuildFromDatasets(ctx, []string{writeDataset(t, direct, false, true)}, FromOptions{SkipSteps: -1}, sc, "test")
		if err != nil {
			t.Fatal(err)
		}
		if len(from.Warnings) == 0 || from.Warnings[0].Code != "dataset_without_context" {
			t.Errorf("first warning %v, want dataset_without_context", from.Warnings)
		}
		// One export: the first step orders its blocks as their starts do.
		if diff := cmp.Diff(asJSON(t, direct.Summary), asJSON(t, from.Summary)); diff != "" {
			t.Errorf("summary -direct +from:\n%s", diff)
		}
		if from.Settings.SkipSteps != 1 {
			t.Errorf("inferred skip_steps %d, want 1", from.Settings.SkipSteps)
		}
	})

	t.Run("skip steps re-applied", func(t *testing.T) {
		want := analyseFixture(t, "eager_graph_small", 3, sc)
		from, err := BuildFromDatasets(ctx, []string{writeDataset(t, direct, true, false)}, FromOptions{SkipSteps: 3}, sc, "test")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(asJSON(t, want.Summary), asJSON(t, from.Summary)); diff != "" {
			t.Errorf("summary -direct(skip 3) +from(skip 3):\n%s", diff)
		}
		if from.Excluded.SkippedSteps != want.Excluded.SkippedSteps || from.Settings.SkipSteps != 3 {
			t.Errorf("skipped %d (setting %d), want %d", from.Excluded.SkippedSteps, from.Settings.SkipSteps, want.Excluded.SkippedSteps)
		}
	})

	t.Run("an export counted twice is refused", func(t *testing.T) {
		dir := writeDataset(t, direct, true, false)
		_, err := BuildFromDatasets(ctx, []string{dir, dir}, FromOptions{SkipSteps: -1}, sc, "test")
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Fatalf("err %v, want a usage error", err)
		}
	})

	t.Run("schema 1 dataset (column unit, not block_label)", func(t *testing.T) {
		// A dataset written before the rename: the same rows under the old
		// column name load to the same document.
		tables := direct.Tables()
		inst := tables[0]
		cols := inst.Columns()
		renamed := false
		for i := range cols {
			if cols[i].Name == "block_label" {
				cols[i].Name, renamed = "unit", true
			}
		}
		if !renamed {
			t.Fatal("phase_instances has no block_label column")
		}
		old := export.NewTable(inst.Name, inst.Doc, cols...)
		for r := range inst.Len() {
			if err := old.AppendRow(inst.Row(r)...); err != nil {
				t.Fatal(err)
			}
		}
		tables[0] = old
		c, err := direct.ContextMetadata()
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "ds")
		if err := export.WriteDataset(dir, tables, export.FormatParquet, export.Options{Metadata: map[string]string{MetaContext: c}}); err != nil {
			t.Fatal(err)
		}
		from, err := BuildFromDatasets(ctx, []string{dir}, FromOptions{SkipSteps: -1}, sc, "test")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(asJSON(t, direct), asJSON(t, from)); diff != "" {
			t.Errorf("-direct +from(schema 1):\n%s", diff)
		}
	})

	t.Run("not a dataset", func(t *testing.T) {
		if _, err := BuildFromDatasets(ctx, []string{t.TempDir()}, FromOptions{SkipSteps: -1}, sc, "test"); err == nil {
			t.Fatal("an empty directory loaded")
		}
	})
}
