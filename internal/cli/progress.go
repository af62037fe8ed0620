package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/nsys"
)

// progressWanted reports whether a progress bar belongs on stderr: only an
// interactive terminal, outside CI, and not silenced by --quiet or
// --no-progress. Logs and pipes never see one.
func progressWanted(stderr io.Writer, quiet, noProgress bool) bool {
	if quiet || noProgress || os.Getenv("CI") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := rawWriter(stderr).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress shows the files read and the statistics stage on stderr. The
// zero of a nil *progress is silent, so callers need no checks.
type progress struct {
	p     *mpb.Progress
	files *mpb.Bar
	stats *mpb.Bar

	mu         sync.Mutex
	decompress map[string]*mpb.Bar // per .xz input being decompressed
}

// newProgress returns a bar over total files, or nil when not wanted.
func newProgress(ctx context.Context, stderr io.Writer, wanted bool, total int) *progress {
	if !wanted || total <= 0 {
		return nil
	}
	p := mpb.NewWithContext(ctx, mpb.WithOutput(rawWriter(stderr)), mpb.WithWidth(32), mpb.WithRefreshRate(150*time.Millisecond))
	counter := "%d/%d files"
	if total == 1 {
		counter = "%d/%d file"
	}
	files := p.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name("reading ", decor.WCSyncWidthR), decor.CountersNoUnit(counter, decor.WCSyncWidth)),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO), decor.Name(" "), decor.OnComplete(decor.AverageETA(decor.ET_STYLE_GO), "")),
		mpb.BarFillerClearOnAbort(),
	)
	return &progress{p: p, files: files, decompress: map[string]*mpb.Bar{}}
}

// decompressed moves the bar of a .xz input being decompressed (an
// nsys.DecompressProgress): compressed bytes read of the file's size. The
// bar appears on the first report and goes once the input is decoded, so
// "reading 0/1 files" never sits still through the slow step.
func (pr *progress) decompressed(path string, read, total int64) {
	if pr == nil {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	b := pr.decompress[path]
	if b == nil {
		// Beside "reading": the name goes after the bar, shortened, so the
		// line stays well inside 120 columns (a wrapped line breaks the redraw).
		b = pr.p.AddBar(total,
			mpb.PrependDecorators(decor.Name("decompressing ", decor.WCSyncWidthR), decor.Counters(decor.SizeB1024(0), "% .1f / % .1f", decor.WCSyncWidth)),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO), decor.Name(" "+shortName(export.EscapeControl(filepath.Base(path)), 32))),
			mpb.BarRemoveOnComplete(),
		)
		pr.decompress[path] = b
	}
	b.SetCurrent(read)
}

// fileDone counts one file read (or failed).
func (pr *progress) fileDone() {
	if pr != nil {
		pr.files.Increment()
	}
}

// statsStarted shows a spinner while the statistics run.
func (pr *progress) statsStarted() {
	if pr == nil {
		return
	}
	pr.files.SetTotal(-1, true)
	pr.stats = pr.p.AddSpinner(0,
		mpb.PrependDecorators(decor.Name("statistics ", decor.WCSyncWidthR)),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)),
		mpb.BarFillerOnComplete("done"),
		mpb.BarFillerClearOnAbort(),
	)
}

// finish completes (ok) or aborts the bars and waits until they are drawn,
// so nothing written to stderr afterwards is garbled.
func (pr *progress) finish(ok bool) {
	if pr == nil {
		return
	}
	pr.mu.Lock()
	bars := []*mpb.Bar{pr.files, pr.stats}
	for _, b := range pr.decompress {
		bars = append(bars, b)
	}
	pr.mu.Unlock()
	for _, b := range bars {
		if b == nil {
			continue
		}
		if ok {
			b.SetTotal(-1, true)
		} else {
			b.Abort(false)
		}
	}
	pr.p.Wait()
}

// shortName keeps the last max runes of a name, marked with "…".
func shortName(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return "…" + string(r[len(r)-max+1:])
}

// opener wraps analysis.OpenInput so each file counts when it is closed.
func (pr *progress) opener() func(ctx context.Context, path string) (*nsys.File, func(), error) {
	if pr == nil {
		return nil
	}
	return func(ctx context.Context, path string) (*nsys.File, func(), error) {
		f, closeFn, err := analysis.OpenInput(nsys.WithDecompressProgress(ctx, pr.decompressed), path)
		if err != nil {
			pr.fileDone()
			return nil, nil, err
		}
		return f, func() { closeFn(); pr.fileDone() }, nil
	}
}
