// Package report renders the result of every nsysphase command — the
// analysis, the CI gate, the capture verdict and boundary, the inventory,
// and the export's info and NVTX ranges — in the formats a person or a tool
// reads: aligned text for a terminal, Markdown for a pull-request comment,
// JSON, CSV, Parquet and Arrow (through package export), and one
// self-contained HTML page for an analysis.
//
// One entry point, pprof-style: [Generate](w, format, result, options).
// The commands (internal/cli) parse flags and run the pipeline; they never
// format output themselves. internal/analysis returns numbers; the words
// about them live here: both breakdown tables (analysis_text.go,
// breakdown.go), the sentences on why phases wait (gpuwait.go), the
// warnings in words (warnings_text.go) and the definitions docs/schema.md
// carries (schema_notes.go).
//
// Stage: after internal/analysis (reads its results). Output: bytes on w.
package report
