package dataset

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
)

func TestBuild(t *testing.T) {
	ctx := context.Background()
	sc := statsOptions(1)
	direct := analyseFixture(t, "eager_graph_small", sc)

	t.Run("same document", func(t *testing.T) {
		for _, part := range []bool{false, true} {
			from, err := Build(ctx, []string{writeDataset(t, direct, true, part)}, sc, "test")
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
		from, err := Build(ctx, []string{writeDataset(t, direct, false, true)}, sc, "test")
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
		skip3 := statsOptions(3)
		want := analyseFixture(t, "eager_graph_small", skip3)
		skip3.SetGiven("skip-steps") // re-applied only where given
		from, err := Build(ctx, []string{writeDataset(t, direct, true, false)}, skip3, "test")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(asJSON(t, want.Summary), asJSON(t, from.Summary)); diff != "" {
			t.Errorf("summary -direct(skip 3) +from(skip 3):\n%s", diff)
		}
		if from.Excluded.SkippedSteps != want.Excluded.SkippedSteps || from.Settings.SkipSteps != 3 {
			t.Errorf("skipped %d (setting %d), want %d", from.Excluded.SkippedSteps, from.Settings.SkipSteps, want.Excluded.SkippedSteps)
		}
		if got := from.Options().SkipSteps; got != 3 {
			t.Errorf("Options().SkipSteps %d, want the applied 3 (what a history is loaded with)", got)
		}
	})

	// A warm-up rule not given (a command line without --skip-steps, the
	// Go API without SetSkipSteps) keeps the one the dataset was written
	// with, whatever the field holds.
	t.Run("skip steps not given", func(t *testing.T) {
		notGiven := statsOptions(3)
		from, err := Build(ctx, []string{writeDataset(t, direct, true, false)}, notGiven, "test")
		if err != nil {
			t.Fatal(err)
		}
		if from.Settings.SkipSteps != 1 || from.Excluded.SkippedSteps != direct.Excluded.SkippedSteps {
			t.Errorf("skip steps 3 not given: setting %d, skipped %d; want the dataset's 1, %d", from.Settings.SkipSteps, from.Excluded.SkippedSteps, direct.Excluded.SkippedSteps)
		}
	})

	t.Run("an export counted twice is refused", func(t *testing.T) {
		dir := writeDataset(t, direct, true, false)
		_, err := Build(ctx, []string{dir, dir}, sc, "test")
		var ue *analysis.UsageError
		if !errors.As(err, &ue) {
			t.Fatalf("err %v, want a usage error", err)
		}
	})

	t.Run("schema 1 dataset (column unit, not block_label)", func(t *testing.T) {
		// A dataset written before the rename: the same rows under the old
		// column name load to the same document.
		tables := Tables(direct)
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
		c, err := ContextMetadata(direct)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "ds")
		if err := export.WriteDataset(dir, tables, export.FormatParquet, export.Options{Metadata: map[string]string{MetaContext: c}}); err != nil {
			t.Fatal(err)
		}
		from, err := Build(ctx, []string{dir}, sc, "test")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(asJSON(t, direct), asJSON(t, from)); diff != "" {
			t.Errorf("-direct +from(schema 1):\n%s", diff)
		}
	})

	t.Run("not a dataset", func(t *testing.T) {
		if _, err := Build(ctx, []string{t.TempDir()}, sc, "test"); err == nil {
			t.Fatal("an empty directory loaded")
		}
	})
}
