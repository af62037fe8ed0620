package phases_test

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ulikunitz/xz"

	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

// untarXZ extracts a .tar.xz into dir.
func untarXZ(t *testing.T, path, dir string) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Skipf("no parquetdir archive: %v", err)
	}
	defer fh.Close()
	xr, err := xz.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(xr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Clean("/" + h.Name)[1:])
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := os.Create(dst)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				t.Fatal(err)
			}
			out.Close()
		}
	}
}

// TestParquetDirEqualsSQLite: the `nsys export --type parquetdir` form of an
// export gives the same activity summary and the same instances, metric for
// metric, as its SQLite form.
func TestParquetDirEqualsSQLite(t *testing.T) {
	fx := extra(t, "nvtx_streams")
	dir := t.TempDir()
	untarXZ(t, filepath.Join(filepath.Dir(fx.XZ), "nvtx_streams.parquetdir.tar.xz"), dir)
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
