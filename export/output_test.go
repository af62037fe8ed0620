//go:build unix

package export

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func writeTextAtomic(path, text string) error {
	return WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, text); return err })
}

// -o through a symlink replaces the link's target and keeps the link; a
// FIFO or directory at the path is refused and left as it was.
func TestWriteFileAtomicSpecialPaths(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "report.md")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "latest.md")
	if err := os.Symlink("report.md", link); err != nil {
		t.Fatal(err)
	}
	if err := writeTextAtomic(link, "new"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("symlink replaced: %v %v", st, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Fatalf("target holds %q", b)
	}

	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no mkfifo:", err)
	}
	err := writeTextAtomic(fifo, "x")
	if err == nil || !strings.Contains(err.Error(), "a FIFO") {
		t.Fatalf("FIFO: got %v", err)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatal("FIFO replaced")
	}
	if err := writeTextAtomic(dir, "x"); err == nil || !strings.Contains(err.Error(), "a directory") {
		t.Fatalf("directory: got %v", err)
	}
}

// The output may not be one of the inputs, however it is spelled.
func TestCheckOutputRefusesInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "run.sqlite")
	if err := os.WriteFile(in, []byte("export"), 0o644); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(dir, "alias.sqlite")
	if err := os.Symlink(in, alias); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{in, alias, filepath.Join(dir, ".", "run.sqlite")} {
		if err := CheckOutput(out, []string{in}); err == nil || !strings.Contains(err.Error(), "is the input") {
			t.Errorf("CheckOutput(%s): got %v", out, err)
		}
	}
	if err := CheckOutput(filepath.Join(dir, "new.md"), []string{in}); err != nil {
		t.Errorf("new file: %v", err)
	}
}
