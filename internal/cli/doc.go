// Package cli is the nsysphase command line: it parses each command's flags
// into that command's options, runs the pipeline (nsys → phases → stats,
// through internal/analysis) and hands the result to internal/report, which
// renders every format. Main takes arguments and writers and returns the
// exit status (the table in exit.go), so every command runs in tests
// exactly as from a shell; each NewCmdX(runF) lets a test check flag
// parsing without running the pipeline.
package cli
