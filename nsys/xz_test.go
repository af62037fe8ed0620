package nsys_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// TestOpenXZ: a compressed export opens under the name given, is read from
// a private copy, and Close removes the copy.
func TestOpenXZ(t *testing.T) {
	path := filepath.Join(fixture.Root(), "testdata", "nsys-2025.3-h200", "eager_graph_small.sqlite.xz")
	f, err := nsys.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Path != path || f.Disk == path || !strings.HasSuffix(f.Disk, "eager_graph_small.sqlite") {
		t.Errorf("Path %q Disk %q: want the name given and a private .sqlite copy", f.Path, f.Disk)
	}
	if f.Export.SchemaVersion == "" {
		t.Error("no export info read")
	}
	if _, err := os.Stat(f.Disk); err != nil {
		t.Fatalf("copy missing while open: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(f.Disk)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left the copy's directory: %v", err)
	}
}

// TestOpenXZBad: bytes that are not xz fail
// naming the file the user gave, never the temporary copy.
func TestOpenXZBad(t *testing.T) {
	p := filepath.Join(t.TempDir(), "garbage.sqlite.xz")
	if err := os.WriteFile(p, []byte("not xz at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := nsys.Open(p)
	var ie *nsys.InputError
	if !errors.As(err, &ie) || ie.Path != p {
		t.Fatalf("got %v, want an *InputError naming %s", err, p)
	}
}
