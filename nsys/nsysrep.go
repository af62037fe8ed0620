package nsys

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nsysphase/nsysphase/internal/filehash"
)

// reportExts are the extensions of an Nsight Systems report, which nsysphase
// reads through its SQLite export: .nsys-rep (nsys 2021.3 on) and .qdrep
// (before 2021.3; current nsys exports both the same way).
var reportExts = []string{".nsys-rep", ".qdrep"}

// isReport says whether path names an Nsight Systems report (by its
// extension, case-insensitive) rather than an export.
func isReport(path string) bool {
	lower := strings.ToLower(path)
	for _, ext := range reportExts {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// nsysBinary finds the nsys executable: $NSYS, else nsys on PATH.
func nsysBinary() (string, bool) {
	if p := os.Getenv("NSYS"); p != "" {
		return p, true
	}
	p, err := exec.LookPath("nsys")
	return p, err == nil
}

// exportReport returns the cached SQLite export of report, exporting it on
// first use with `nsys export` (NSYS, else nsys on PATH) into a cache keyed
// by the report's SHA-256 (os.UserCacheDir()/nsysphase/exports), so a report
// is exported once and nothing is ever written beside an input.
func exportReport(report string) (string, error) {
	bin, ok := nsysBinary()
	if !ok {
		return "", &InputError{Path: report, Problem: "an Nsight Systems report, not its SQLite export, and nsys was not found (set NSYS or put nsys on PATH)",
			Hint: "or export it yourself: `nsys export --type sqlite -o FILE.sqlite " + report + "`"}
	}
	sum, err := reportHash(report)
	if err != nil {
		return "", &InputError{Path: report, Problem: "cannot read file", Err: err}
	}
	dir, err := exportCacheDir()
	if err != nil {
		return "", &InputError{Path: report, Problem: "no cache directory for its SQLite export", Err: err,
			Hint: "set XDG_CACHE_HOME, or export it yourself: `nsys export --type sqlite -o FILE.sqlite " + report + "`"}
	}
	// DIR/HASH/NAME.sqlite keeps the report's name, and the run manifest
	// beside the report (NAME.manifest.json, read by --arm-key) is linked
	// beside its export.
	base := strings.TrimSuffix(filepath.Base(report), filepath.Ext(report))
	keyed := filepath.Join(dir, sum)
	if err := os.MkdirAll(keyed, 0o755); err != nil {
		return "", &InputError{Path: report, Problem: "cannot write its SQLite export to " + dir, Err: err}
	}
	cached := filepath.Join(keyed, base+".sqlite")
	if m, err := filepath.Abs(filepath.Join(filepath.Dir(report), base+".manifest.json")); err == nil {
		link := filepath.Join(keyed, base+".manifest.json")
		if _, err := os.Stat(m); err == nil {
			_ = os.Remove(link)
			_ = os.Symlink(m, link)
		}
	}
	if _, err := os.Stat(cached); err == nil {
		return cached, nil
	}
	tmp, err := os.MkdirTemp(keyed, "export-*")
	if err != nil {
		return "", &InputError{Path: report, Problem: "cannot write its SQLite export to " + dir, Err: err}
	}
	defer os.RemoveAll(tmp)
	part := filepath.Join(tmp, "export.sqlite")
	cmd := exec.Command(bin, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", part, report)
	msg, err := cmd.CombinedOutput()
	if err == nil {
		_, err = os.Stat(part)
	}
	if err != nil {
		return "", &InputError{Path: report, Problem: fmt.Sprintf("%s export failed: %s", bin, lastLine(string(msg))), Err: err,
			Hint: "check that this nsys can read the report (a newer report needs a newer nsys)"}
	}
	if err := os.Rename(part, cached); err != nil { // atomic: a reader never sees half an export
		return "", &InputError{Path: report, Problem: "cannot store its SQLite export in " + dir, Err: err}
	}
	return cached, nil
}

// exportCacheDir is os.UserCacheDir()/nsysphase/exports, created on demand.
func exportCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "nsysphase", "exports")
	return dir, os.MkdirAll(dir, 0o755)
}

// reportHash is the report's SHA-256; an unchanged report opened again is
// not read again (filehash), and its provenance hash is the same lookup.
func reportHash(path string) (string, error) { return filehash.SHA256(path) }

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return "no output"
}
