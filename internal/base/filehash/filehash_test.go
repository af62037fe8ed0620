package filehash

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// entries lists the cache's entries.
func entries(t *testing.T, cache string) []os.DirEntry {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(cache, "nsysphase", "sha256"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return es
}

func TestSHA256RemembersUnchangedFilesOnly(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sums are cached on Linux only")
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	path := filepath.Join(t.TempDir(), "export.sqlite")
	a := []byte("first contents")
	if err := os.WriteFile(path, a, 0o644); err != nil {
		t.Fatal(err)
	}
	// A file changed just now is not remembered (racy).
	got, err := SHA256(path)
	if err != nil || got != sumOf(a) {
		t.Fatalf("SHA256 = %q, %v; want %q", got, err, sumOf(a))
	}
	if n := len(entries(t, cache)); n != 0 {
		t.Fatalf("a file changed %v ago was remembered (%d entries)", time.Duration(0), n)
	}
	// Once settled it is, and the remembered sum is served.
	time.Sleep(racyAge + 100*time.Millisecond)
	if got, _ = SHA256(path); got != sumOf(a) {
		t.Fatalf("settled: SHA256 = %q, want %q", got, sumOf(a))
	}
	es := entries(t, cache)
	if len(es) != 1 {
		t.Fatalf("settled file: %d cache entries, want 1", len(es))
	}
	// Proof that the entry is what is read: a doctored sum in it is served
	// for the unchanged file...
	entry := filepath.Join(cache, "nsysphase", "sha256", es[0].Name())
	b, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	fake := sumOf([]byte("doctored"))
	doctored := append(b[:len(b)-65:len(b)-65], fake+"\n"...)
	if err := os.WriteFile(entry, doctored, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ = SHA256(path); got != fake {
		t.Fatalf("the cache entry was not read: got %q", got)
	}
	// ...and never once the file changes, even to the same size with its
	// modification time put back.
	st, _ := os.Stat(path)
	bb := []byte("other contents")
	if err := os.WriteFile(path, bb, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got, _ = SHA256(path); got != sumOf(bb) {
		t.Fatalf("changed file: SHA256 = %q, want %q", got, sumOf(bb))
	}
	// A copy is another file: computed, not served from the original's entry.
	cp := filepath.Join(filepath.Dir(path), "copy.sqlite")
	if err := os.WriteFile(cp, a, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ = SHA256(cp); got != sumOf(a) {
		t.Fatalf("copy: SHA256 = %q, want %q", got, sumOf(a))
	}
}

func TestSHA256WithoutCacheDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	path := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := SHA256(path); err != nil || got != sumOf([]byte("x")) {
		t.Fatalf("SHA256 = %q, %v", got, err)
	}
	if _, err := SHA256(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing file hashed without error")
	}
}
