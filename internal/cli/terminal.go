package cli

import (
	"io"

	"github.com/nsysphase/nsysphase/export"
)

// Every byte a command prints passes through one guard, installed by Main
// on stdout and stderr: export.ControlFilter writes each control character
// but newline and tab as a visible escape (\x1b, \x07, \u009b). Strings from
// an export are escaped where they are read (nsys.CleanName); file names,
// manifest values, dataset metadata and error messages that quote them are
// not, and reach the terminal only through this guard.
//
// Binary formats on stdout (parquet, arrow) and the progress bar (our own
// cursor movements) ask for the raw writer with rawWriter.

// guarded is a writer behind the control filter, with the writer it guards.
type guarded struct {
	filtered io.Writer
	raw      io.Writer
}

func (g *guarded) Write(p []byte) (int, error) { return g.filtered.Write(p) }

// guard wraps w in the control filter (once).
func guard(w io.Writer) *guarded {
	if g, ok := w.(*guarded); ok {
		return g
	}
	return &guarded{filtered: export.ControlFilter(w), raw: w}
}

// flush writes a byte the filter held back (the lead byte of a possible C1
// control at the very end of the output).
func (g *guarded) flush() { _ = export.FlushControlFilter(g.filtered) }

// rawWriter is the writer behind the guard: for bytes that are not text
// (Parquet, Arrow) and for the progress bar's own escape sequences.
func rawWriter(w io.Writer) io.Writer {
	if g, ok := w.(*guarded); ok {
		return g.raw
	}
	return w
}
