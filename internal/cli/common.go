package cli

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/report"
)

// CommonFlags are the flags every command has, registered in one place
// (addCommonFlags) so that they read and behave the same everywhere: -o,
// --quiet, --no-progress, --wide and --warnings. --format and --jobs are
// common too (addFormatFlag, addJobsFlag); their values differ by command.
type CommonFlags struct {
	Output      string // file instead of stdout (-o/--output), written atomically
	Quiet       bool   // print nothing on stdout; no progress bar
	NoProgress  bool   // no progress bar
	Wide        bool   // every column, names in full: no fitting to the terminal
	AllWarnings bool   // every warning in full, not the grouped few lines
}

func addCommonFlags(cmd *cobra.Command, c *CommonFlags) {
	f := cmd.Flags()
	f.StringVarP(&c.Output, "output", "o", "", "write the --format output to FILE instead of stdout (atomically)")
	f.BoolVarP(&c.Quiet, "quiet", "q", false, "print nothing on stdout (the exit status still tells; with -o or --out the file is written) and no progress bar")
	f.BoolVar(&c.NoProgress, "no-progress", false, "no progress bar (it shows only on an interactive terminal, never when CI is set)")
	f.BoolVar(&c.Wide, "wide", false, "table format: every column and every name in full (the default fits 120 columns)")
	f.BoolVar(&c.AllWarnings, "warnings", false, "every warning in full, not a few grouped lines (--format json always lists each)")
}

// addFormatFlag registers --format with the command's choices, table first.
func addFormatFlag(cmd *cobra.Command, format *string, choices []string, help string) {
	usage := "output: " + orList(choices)
	if help != "" {
		usage += " (" + help + ")"
	}
	cmd.Flags().StringVar(format, "format", "table", usage)
}

// checkFormat refuses a --format outside choices, naming them, and returns
// the canonical name (md → markdown, text → table).
func checkFormat(format string, choices []string) (string, error) {
	f, err := report.ParseFormat(format)
	if err != nil || !slices.Contains(choices, f.String()) {
		return "", usageErr("--format %q: want %s", format, orList(choices))
	}
	return f.String(), nil
}

// addJobsFlag registers -j/--jobs: files read in parallel.
func addJobsFlag(cmd *cobra.Command, jobs *int) {
	cmd.Flags().IntVarP(jobs, "jobs", "j", analysis.DefaultOptions().Jobs, "files read in parallel, at most "+strconv.Itoa(maxJobs)+" (default: number of CPUs)")
}

// checkJobs refuses a --jobs outside 0..maxJobs.
func checkJobs(jobs int) error {
	if jobs < 0 || jobs > maxJobs {
		return usageErr("--jobs %d: want 0 (the number of CPUs) to %d", jobs, maxJobs)
	}
	return nil
}

// reportOptions are the rendering options the common flags set.
func (c *CommonFlags) reportOptions() report.Options {
	return report.Options{Wide: c.Wide, AllWarnings: c.AllWarnings}
}

// expandFiles expands the quoted globs among a command's file arguments,
// as every command does (sorted; a pattern that matches nothing is kept for
// the reader to name).
func expandFiles(args []string) ([]string, error) {
	files, _, err := analysis.ExpandInputs(args, nil)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return files, nil
}

// eachFile runs fn on every file, jobs at a time (0: the number of CPUs),
// with the progress bar of the common flags; the results keep the input
// order, and the first error in input order wins.
func eachFile[T any](cmd *cobra.Command, files []string, jobs int, c *CommonFlags, fn func(*cobra.Command, string) (T, error)) ([]T, error) {
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	pr := newProgress(cmd.Context(), cmd.ErrOrStderr(), progressWanted(cmd.ErrOrStderr(), c.Quiet, c.NoProgress), len(files))
	out := make([]T, len(files))
	errs := make([]error, len(files))
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, path := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = fn(cmd, path)
			pr.fileDone()
		}()
	}
	wg.Wait()
	var err error
	for _, e := range errs {
		if e != nil {
			err = e
			break
		}
	}
	pr.finish(err == nil)
	return out, err
}

// startProgress shows the files of cfg being read, where a bar is wanted
// (nil, silent, otherwise).
func startProgress(cmd *cobra.Command, cfg *analysis.Config, c *CommonFlags) *progress {
	stderr := cmd.ErrOrStderr()
	if !progressWanted(stderr, c.Quiet, c.NoProgress) {
		return nil
	}
	inputs, _, err := analysis.ExpandInputs(cfg.Files, cfg.FileArms)
	if err != nil {
		return nil
	}
	pr := newProgress(cmd.Context(), stderr, true, len(inputs))
	cfg.Open = pr.opener()
	return pr
}

// checkPhasesGiven refuses a missing or empty --phases, saying what it
// wants and where the names come from.
func checkPhasesGiven(phs []string, what string) error {
	if len(phs) == 0 {
		return usageErr("--phases is required: %s (nsysphase analyze FILE lists the phases)", what)
	}
	for _, p := range phs {
		if strings.TrimSpace(p) == "" {
			return usageErr("--phases %q: an empty phase name (%s)", strings.Join(phs, ","), what)
		}
	}
	return nil
}
