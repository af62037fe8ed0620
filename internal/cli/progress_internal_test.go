package cli

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestProgressCountsDecompression: opening a .xz through the progress
// opener moves a decompression bar to the compressed size (the counter is
// tested; mpb draws nothing useful off a terminal).
func TestProgressCountsDecompression(t *testing.T) {
	path := fixture.Get(t, "interleaved_graph").XZ
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
