package cli

import (
	"io"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/report"
)

// writeHTMLReport renders analyze --format html: one self-contained page.
func writeHTMLReport(w io.Writer, doc *analysis.Doc) error {
	return report.Write(w, doc, report.Options{Tool: "nsysphase " + Version()})
}
