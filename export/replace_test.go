package export

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A second write replaces the dataset as a whole: with Replace, tables of
// the older layout (partitioned) are gone after a flat write; without it,
// the write is refused and the old dataset is untouched.
func TestDatasetReplacedAsAWhole(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := WriteDataset(dir, []*Table{instancesTable(t)}, FormatParquet, Options{PartitionBy: []string{"arm"}}); err != nil {
		t.Fatal(err)
	}
	before := listTree(t, dir)
	err := WriteDataset(dir, []*Table{sampleTable(t)}, FormatParquet, Options{})
	if !errors.Is(err, ErrDatasetExists) {
		t.Fatalf("second write without Replace: got %v, want ErrDatasetExists", err)
	}
	if got := listTree(t, dir); !slices.Equal(got, before) {
		t.Fatalf("refused write changed the dataset: %v", got)
	}
	if err := WriteDataset(dir, []*Table{sampleTable(t)}, FormatParquet, Options{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := listTree(t, dir), []string{"_dataset.json", "phase_summary.parquet"}; !slices.Equal(got, want) {
		t.Fatalf("after replace: %v, want %v (old partitioned table must be gone)", got, want)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("staging or old dataset left behind: %v", entries)
	}
	tables, err := ReadDataset(dir)
	if err != nil || len(tables) != 1 || tables[0].Name != "phase_summary" {
		t.Fatalf("read back: %v %v", tables, err)
	}
}

// A directory that holds files but is no nsysphase dataset is never
// replaced, Replace or not; an empty directory is written into.
func TestDatasetRefusesForeignDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, replace := range []bool{false, true} {
		err := WriteDataset(dir, []*Table{sampleTable(t)}, FormatParquet, Options{Replace: replace})
		if !errors.Is(err, ErrNotDataset) {
			t.Fatalf("replace=%v: got %v, want ErrNotDataset", replace, err)
		}
	}
	if got := listTree(t, dir); !slices.Equal(got, []string{"notes.txt"}) {
		t.Fatalf("foreign dir changed: %v", got)
	}
	empty := t.TempDir()
	if err := WriteDataset(empty, []*Table{sampleTable(t)}, FormatParquet, Options{}); err != nil {
		t.Fatalf("empty dir: %v", err)
	}
}

// Staging directories of a killed run (its pid no longer exists) are
// removed by the next write beside them; a live process's are kept.
func TestStaleStagingRemoved(t *testing.T) {
	parent := t.TempDir()
	dead := filepath.Join(parent, stagingPrefix("out", 1<<30)+"123")
	live := filepath.Join(parent, stagingPrefix("out", os.Getppid())+"456")
	for _, d := range []string{dead, live} {
		if err := os.MkdirAll(filepath.Join(d, "phase_instances"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteDataset(filepath.Join(parent, "out"), []*Table{sampleTable(t)}, FormatParquet, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("stale staging of a dead process kept: %v", err)
	}
	if _, err := os.Stat(live); err != nil && processAlive(os.Getppid()) {
		t.Errorf("staging of a live process removed: %v", err)
	}
}

// ReadDataset refuses a directory that mixes datasets: an entry outside the
// manifest (a stale table of another layout or format), a nested dataset,
// or one table both flat and partitioned (no manifest).
func TestReadDatasetRefusesMixes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteDataset(dir, []*Table{sampleTable(t)}, FormatParquet, Options{}); err != nil {
		t.Fatal(err)
	}
	extra := randomTable(5, 2)
	if err := writeNewFile(filepath.Join(dir, "random.parquet"), extra, FormatParquet, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDataset(dir); err == nil || !strings.Contains(err.Error(), "more than one dataset") {
		t.Fatalf("extra table: got %v", err)
	}

	outer := t.TempDir()
	for i := range 2 {
		if err := WriteDataset(filepath.Join(outer, "run"+strconv.Itoa(i)), []*Table{sampleTable(t)}, FormatParquet, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ReadDataset(outer); err == nil || !strings.Contains(err.Error(), "more than one dataset") {
		t.Fatalf("nested datasets: got %v", err)
	}

	legacy := t.TempDir() // written before manifests: both layouts of one table
	if err := writeNewFile(filepath.Join(legacy, "phase_summary.parquet"), sampleTable(t), FormatParquet, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := stageTable(legacy, instancesTable(t), FormatParquet, Options{PartitionBy: []string{"arm"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(legacy, "phase_instances"), filepath.Join(legacy, "x")); err != nil {
		t.Fatal(err)
	}
	if _, err := stageTable(legacy, instancesTable(t), FormatParquet, Options{PartitionBy: []string{"arm"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDataset(legacy); err == nil || !strings.Contains(err.Error(), "more than one dataset") {
		t.Fatalf("one table twice: got %v", err)
	}
}
