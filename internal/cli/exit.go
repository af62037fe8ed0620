package cli

import (
	"fmt"
	"strings"
)

// exitStatuses are the exit statuses of every command: the one table that
// root --help, the generated reference, README.md and docs/guide.md show
// (TestExitStatusTable keeps them equal).
var exitStatuses = []struct {
	Code    int
	Meaning string
}{
	{ExitOK, "success; `check`: no arm is proven slower than the limit (no CI or a within-run CI is inconclusive and passes, unless `--within-run` is asked for); `verdict`: go"},
	{ExitGate, "a gate failed: `check` proved a regression beyond the limit; `verdict`: no-go"},
	{ExitInput, "unusable input or usage: a missing or corrupt file, no step found, a bad flag or limit"},
	{ExitInconclusive, "`verdict` only: inconclusive, the CI straddles `--min-gain` (a warning on stderr)"},
	{ExitInterrupted, "stopped by SIGINT (Ctrl-C), after removing its temporary files and staging directories"},
	{ExitTerminated, "stopped by SIGTERM, likewise"},
}

// ExitStatusMarkdown is the exit-status table as Markdown.
func ExitStatusMarkdown() string {
	var b strings.Builder
	b.WriteString("| exit | meaning |\n|---|---|\n")
	for _, e := range exitStatuses {
		fmt.Fprintf(&b, "| %d | %s |\n", e.Code, e.Meaning)
	}
	return b.String()
}

// exitStatusText is the exit-status table for --help.
func exitStatusText() string {
	var b strings.Builder
	b.WriteString("Exit status (every command):\n")
	for _, e := range exitStatuses {
		fmt.Fprintf(&b, "  %d  %s\n", e.Code, strings.ReplaceAll(e.Meaning, "`", ""))
	}
	return strings.TrimRight(b.String(), "\n")
}
