package phases_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

// TestParquetDirEqualsSQLite: the `nsys export --type parquetdir` form of an
// export gives the same activity summary and the same instances, metric for
// metric, as its SQLite form.
func TestParquetDirEqualsSQLite(t *testing.T) {
	fx := extra(t, "nvtx_streams")
	dir := t.TempDir()
	fixture.UntarXZ(t, filepath.Join(filepath.Dir(fx.XZ), "nvtx_streams.parquetdir.tar.xz"), dir)
	pq := filepath.Join(dir, "nvtx_streams.parquetdir")
	if !nsys.IsParquetDir(pq) {
		t.Fatalf("%s is not recognised as a parquetdir", pq)
	}
	fromSQLite, sf := segmentFixture(t, fx, phases.Options{})
	pf, err := nsys.Open(pq)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fromParquet, err := phases.Segment(pf, phases.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fromSQLite.Instances) == 0 || len(fromParquet.Instances) != len(fromSQLite.Instances) {
		t.Fatalf("%d instances from parquetdir, %d from SQLite", len(fromParquet.Instances), len(fromSQLite.Instances))
	}
	for i := range fromSQLite.Instances {
		a, b := fromSQLite.Instances[i], fromParquet.Instances[i]
		if a.Phase != b.Phase || a.Arm != b.Arm || a.Start != b.Start || a.M != b.M {
			t.Fatalf("instance %d differs:\nsqlite  %s %s %d %v\nparquet %s %s %d %v", i, a.Phase, a.Arm, a.Start, a.M, b.Phase, b.Arm, b.Start, b.M)
		}
	}
	strs1, err := sf.Strings()
	if err != nil {
		t.Fatal(err)
	}
	strs2, err := pf.Strings()
	if err != nil {
		t.Fatal(err)
	}
	act1, err := sf.SummarizeActivity(strs1)
	if err != nil {
		t.Fatal(err)
	}
	act2, err := pf.SummarizeActivity(strs2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(act1, act2); diff != "" {
		t.Errorf("activity summary differs (-sqlite +parquetdir):\n%s", diff)
	}
	// The input directory is left as it was: the import went to a temp copy.
	if _, err := os.Stat(filepath.Join(pq, "nvtx_streams.sqlite")); err == nil {
		t.Error("a database appeared inside the parquetdir")
	}
}
