package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestProgressCountsDecompression: opening a .xz through the progress
// opener moves a decompression bar to the compressed size (the counter is
// tested; mpb draws nothing useful off a terminal).
func TestProgressCountsDecompression(t *testing.T) {
	// A copy outside testdata: TestMain shares decompressed fixtures, which
	// would skip the decompression this test watches.
	data, err := os.ReadFile(fixture.Get(t, "interleaved_graph").XZ)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "interleaved_graph.sqlite.xz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	pr := newProgress(context.Background(), &stderr, true, 1)
	f, closeFn, err := pr.opener()(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	pr.mu.Lock()
	b := pr.decompress[path]
	pr.mu.Unlock()
	if b == nil {
		t.Fatalf("no decompression bar for %s (bars: %v)", path, pr.decompress)
	}
	if got := b.Current(); got != st.Size() {
		t.Errorf("decompression bar at %d bytes, want the compressed size %d", got, st.Size())
	}
	if f.Path != path {
		t.Errorf("opened %q, want %q", f.Path, path)
	}
	closeFn()
	pr.finish(true)
}
