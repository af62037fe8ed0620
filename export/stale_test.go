package export

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestStaleTempFilesRemoved is issue 16 case 9: a run killed while writing
// -o left .NAME.tmp-* beside the output for good. Temporary files carry the
// writer's pid; the next write removes those of processes that no longer
// run, and keeps a live process's.
func TestStaleTempFilesRemoved(t *testing.T) {
	if processAlive(1 << 30) {
		t.Skip("process liveness cannot be checked on this system: stale files are kept")
	}
	dir := t.TempDir()
	dead := filepath.Join(dir, stagingPrefix("report.md", 1<<30)+"123")
	live := filepath.Join(dir, stagingPrefix("report.md", os.Getppid())+"456")
	other := filepath.Join(dir, stagingPrefix("other.md", 1<<30)+"789")
	for _, p := range []string{dead, live, other} {
		if err := os.WriteFile(p, []byte("half a report"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "report.md")
	if err := WriteFileAtomic(out, func(w io.Writer) error { _, err := io.WriteString(w, "report"); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("temporary file of a dead process kept: %v", err)
	}
	if _, err := os.Stat(live); err != nil && processAlive(os.Getppid()) {
		t.Errorf("temporary file of a live process removed: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("temporary file of another output removed: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 { // report.md, live, other
		t.Errorf("entries after the write: %v", entries)
	}
}
