package nsys_test

import (
	"context"
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

// TestDecompressProgress: under WithDecompressProgress, opening a .xz
// reports the compressed bytes read, from 0 up to the file's size, never
// going back, in more than a start and an end (the large exports take
// seconds to decode, and a bar must move meanwhile).
func TestDecompressProgress(t *testing.T) {
	path := filepath.Join(fixture.Root(), "testdata", "nsys-2025.3-h200", "interleaved_graph.sqlite.xz")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var calls, last, total int64 = 0, -1, 0
	report := func(p string, read, tot int64) {
		if p != path {
			t.Errorf("progress names %q, want %q", p, path)
		}
		if read < last || read > tot {
			t.Errorf("progress %d/%d after %d", read, tot, last)
		}
		calls, last, total = calls+1, read, tot
	}
	f, err := nsys.OpenContext(nsys.WithDecompressProgress(context.Background(), report), path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if total != st.Size() || last != st.Size() {
		t.Errorf("progress ended at %d/%d, want %d/%d", last, total, st.Size(), st.Size())
	}
	if want := st.Size()/(1<<20) + 1; calls < want {
		t.Errorf("%d progress calls for %d bytes, want ≥ %d (one per MiB read)", calls, st.Size(), want)
	}
}
