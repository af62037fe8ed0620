package nsys

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nsysphase/nsysphase/internal/base/budget"
	"github.com/nsysphase/nsysphase/internal/base/filehash"
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
// by the report's SHA-256 and the nsys binary (os.UserCacheDir()/nsysphase/
// exports/HASH-nsysID), so a report
// is exported once and nothing is ever written beside an input. fresh says
// the export was written by this call.
//
// An export is cached only once it opens as an export (an nsys that once
// wrote a bad file, with exit 0, used to poison the cache for good). The
// export runs for at most NSYSPHASE_EXPORT_TIMEOUT (default 30m); when ctx
// is done (SIGINT, SIGTERM) or the time is up, nsys and its children are
// killed and their partial output removed.
func exportReport(ctx context.Context, report string) (cached string, fresh bool, err error) {
	bin, ok := nsysBinary()
	if !ok {
		return "", false, &InputError{Path: report, Problem: "an Nsight Systems report, not its SQLite export, and nsys was not found (set NSYS or put nsys on PATH)",
			Hint: "or export it yourself: `nsys export --type sqlite -o FILE.sqlite " + report + "`"}
	}
	sum, err := reportHash(report)
	if err != nil {
		return "", false, &InputError{Path: report, Problem: "cannot read file", Err: err}
	}
	dir, err := exportCacheDir()
	if err != nil {
		return "", false, &InputError{Path: report, Problem: "no cache directory for its SQLite export", Err: err,
			Hint: "set XDG_CACHE_HOME, or export it yourself: `nsys export --type sqlite -o FILE.sqlite " + report + "`"}
	}
	timeout, err := exportTimeout()
	if err != nil {
		return "", false, &InputError{Path: report, Problem: err.Error(), Hint: "set NSYSPHASE_EXPORT_TIMEOUT to a Go duration such as 30m"}
	}
	// DIR/HASH/NAME.sqlite keeps the report's name, and the run manifest
	// beside the report (NAME.manifest.json, read by --arm-key) is linked
	// beside its export.
	base := strings.TrimSuffix(filepath.Base(report), filepath.Ext(report))
	// The key is the report and the nsys that exports it: another nsys
	// (NSYS, PATH, an upgrade in place) may export the report differently,
	// and its export is never taken for this one's.
	keyed := filepath.Join(dir, sum+"-"+nsysIdentity(bin))
	if err := os.MkdirAll(keyed, 0o755); err != nil {
		return "", false, &InputError{Path: report, Problem: "cannot write its SQLite export to " + dir, Err: err}
	}
	cached = filepath.Join(keyed, base+".sqlite")
	if m, err := filepath.Abs(filepath.Join(filepath.Dir(report), base+".manifest.json")); err == nil {
		link := filepath.Join(keyed, base+".manifest.json")
		if _, err := os.Stat(m); err == nil {
			_ = os.Remove(link)
			_ = os.Symlink(m, link)
		}
	}
	if _, err := os.Stat(cached); err == nil {
		return cached, false, nil
	}
	// The report is passed as an absolute path: a name such as
	// "--force-overwrite=false.nsys-rep" can never read as an option.
	abs, err := filepath.Abs(report)
	if err != nil {
		return "", false, &InputError{Path: report, Problem: "cannot resolve path", Err: err}
	}
	tmp, err := os.MkdirTemp(keyed, "export-*")
	if err != nil {
		return "", false, &InputError{Path: report, Problem: "cannot write its SQLite export to " + dir, Err: err}
	}
	defer os.RemoveAll(tmp)
	part := filepath.Join(tmp, "export.sqlite")
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bin, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", part, abs)
	killGroupOnCancel(cmd)
	cmd.WaitDelay = 5 * time.Second // a grandchild holding the output pipe does not block the return
	// nsys may print without end: the last budget.SubprocessOutputBytes
	// are kept, for the error message.
	msg := &tailBuffer{max: budget.SubprocessOutputBytes}
	cmd.Stdout, cmd.Stderr = msg, msg
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return "", false, ctx.Err()
	case runCtx.Err() != nil:
		return "", false, &InputError{Path: report, Problem: fmt.Sprintf("%s export did not finish within %s and was stopped", bin, timeout),
			Hint: "set NSYSPHASE_EXPORT_TIMEOUT for a longer limit, or export it yourself: `nsys export --type sqlite -o FILE.sqlite " + report + "`"}
	}
	if err == nil {
		_, err = os.Stat(part)
	}
	if err != nil {
		return "", false, &InputError{Path: report, Problem: fmt.Sprintf("%s export failed: %s", bin, lastLine(msg.String())), Err: err,
			Hint: "check that this nsys can read the report (a newer report needs a newer nsys)"}
	}
	if f, err := openSQLite(ctx, part, report); err != nil {
		problem := err.Error()
		var ie *InputError
		if errors.As(err, &ie) {
			problem = ie.Problem
		}
		return "", false, &InputError{Path: report, Problem: fmt.Sprintf("%s export exited 0 but wrote an unusable export (%s); nothing was cached", bin, problem),
			Hint: "check that this nsys can read the report, or export it yourself: `nsys export --type sqlite -o FILE.sqlite " + report + "`"}
	} else {
		f.Close()
	}
	if err := os.Rename(part, cached); err != nil { // atomic: a reader never sees half an export
		return "", false, &InputError{Path: report, Problem: "cannot store its SQLite export in " + dir, Err: err}
	}
	return cached, true, nil
}

// defaultExportTimeout bounds one `nsys export` (a large report takes
// minutes; a hung nsys would otherwise hold a CI job forever).
const defaultExportTimeout = 30 * time.Minute

// exportTimeout is NSYSPHASE_EXPORT_TIMEOUT, else defaultExportTimeout.
func exportTimeout() (time.Duration, error) {
	v := os.Getenv("NSYSPHASE_EXPORT_TIMEOUT")
	if v == "" {
		return defaultExportTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("NSYSPHASE_EXPORT_TIMEOUT %q is not a positive duration", v)
	}
	return d, nil
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

// lastLine is the last line of a subprocess's output, at most
// budget.DisplayNameBytes of its end.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	if s == "" {
		return "no output"
	}
	if len(s) > budget.DisplayNameBytes {
		cut := len(s) - budget.DisplayNameBytes
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		s = "…" + s[cut:]
	}
	return CleanName(s)
}

// tailBuffer keeps the last max bytes written to it (a subprocess's output
// of any length costs at most max).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return n, nil
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// nsysIdentity names the nsys binary for the export cache: its resolved
// path, size and modification time, hashed (an upgrade in place changes
// them; running nsys --version would cost a second per report).
func nsysIdentity(bin string) string {
	id := bin
	if p, err := exec.LookPath(bin); err == nil {
		id = p
	}
	if p, err := filepath.EvalSymlinks(id); err == nil {
		id = p
	}
	if p, err := filepath.Abs(id); err == nil {
		id = p
	}
	if st, err := os.Stat(id); err == nil {
		id += "\x00" + strconv.FormatInt(st.Size(), 10) + "\x00" + strconv.FormatInt(st.ModTime().UnixNano(), 10)
	}
	sum := sha256.Sum256([]byte(id))
	return "nsys" + hex.EncodeToString(sum[:6])
}
