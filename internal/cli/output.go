package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/dataset"
	"github.com/nsysphase/nsysphase/internal/report"
)

// Every command that writes tables shares one output mechanism:
//
//   - --format table|markdown|json prints every table on stdout (or -o FILE);
//   - --format csv|parquet|arrow print one table, the command's primary one
//     (these formats hold one table per file); binary formats refuse a terminal;
//   - --out DIR writes every table as a dataset, Parquet by default or Arrow
//     IPC with --format arrow (then nothing is printed), flat or, with
//     --partition, Hive-partitioned by arm and file;
//   - -o FILE writes what stdout would get to FILE instead, atomically.
//
// Everything written to a file goes through a temporary file or directory
// and a rename, so readers never see half an output.

// TableOutput is the output half of a table-writing command's options.
type TableOutput struct {
	Format    string
	Out       string // dataset directory (--out)
	Partition bool   // Hive-partitioned dataset (--partition)
	Overwrite bool   // replace a non-empty --out directory
	CommonFlags
}

// tableFormats are the --format values of every table-writing command.
var tableFormats = []string{"table", "json", "csv", "markdown", "parquet", "arrow"}

// addTableOutputFlags registers --format, --out, --partition, -o, --quiet and
// --no-progress. extra lists command-specific formats (analyze: html).
func addTableOutputFlags(cmd *cobra.Command, o *TableOutput, primary string, extra ...string) {
	f := cmd.Flags()
	formats := append(slices.Clone(tableFormats), extra...)
	addFormatFlag(cmd, &o.Format, formats, fmt.Sprintf("csv, parquet and arrow print %s; with --out, arrow writes the dataset as Arrow IPC", primary))
	f.StringVar(&o.Out, "out", "", "directory for the tables as a Parquet dataset (written atomically)")
	f.BoolVar(&o.Partition, "partition", false, "with --out: Hive-partitioned dataset (table/arm=…/file=…/part.parquet)")
	f.BoolVar(&o.Overwrite, "overwrite", false, "with --out: replace a directory that holds an nsysphase dataset and nothing else (refused otherwise)")
	addCommonFlags(cmd, &o.CommonFlags)
}

// validate checks the output flags; extra are the command's own formats.
func (o *TableOutput) validate(extra ...string) error {
	f, err := checkFormat(o.Format, append(slices.Clone(tableFormats), extra...))
	if err != nil {
		return err
	}
	o.Format = f
	if o.Partition && o.Out == "" {
		return usageErr("--partition needs --out DIR")
	}
	if o.Output != "" && o.Out != "" && filepath.Clean(o.Output) == filepath.Clean(o.Out) {
		return usageErr("-o %s and --out %s name the same path", o.Output, o.Out)
	}
	if o.Output != "" && o.Out != "" && outputInside(o.Output, o.Out) {
		// The dataset is swapped in whole: the file would be lost, or left
		// in a dataset whose manifest does not list it (--from refuses it).
		return usageErr("-o %s lies inside --out %s: write it outside the dataset directory", o.Output, o.Out)
	}
	if o.Overwrite && o.Out == "" {
		return usageErr("--overwrite needs --out DIR")
	}
	if o.Out != "" {
		// Checked again at commit; here so that a refused --out costs no work
		// (a second analysis into the same --out once replaced the first
		// without a word).
		if err := export.CheckDatasetDir(o.Out, o.Overwrite); err != nil {
			return usageErr("--out %s: %v", o.Out, err)
		}
	}
	return nil
}

// outputInside reports whether the file path lies in directory dir, which
// may not exist yet: by identity (symlinks, other spellings) where dir
// exists, else by the cleaned absolute paths.
func outputInside(path, dir string) bool {
	if _, ok := export.OutputDescriptor(path); ok {
		return false
	}
	if resolved, err := export.ResolveOutput(path); err == nil {
		path = resolved // a symlink's target is what gets written
	}
	if export.Within(path, dir) {
		return true
	}
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	return err1 == nil && err2 == nil && strings.HasPrefix(p, d+string(filepath.Separator))
}

func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// tableFormat maps a --format value to an export format; ok is false for
// formats that are not table renderings (html).
func tableFormat(name string) (export.Format, bool) {
	f, err := export.ParseFormat(name)
	return f, err == nil && f != export.FormatHTML
}

// datasetFormat is the format of --out: Arrow IPC when asked, else Parquet.
func (o *TableOutput) datasetFormat() export.Format {
	if o.Format == "arrow" {
		return export.FormatArrow
	}
	return export.FormatParquet
}

// printsReport reports whether anything goes to stdout or -o: not with
// --quiet, and not for a binary format already written as the --out dataset.
func (o *TableOutput) printsReport() bool {
	if o.Quiet {
		return false
	}
	if f, ok := tableFormat(o.Format); ok && f.Binary() && o.Out != "" && o.Output == "" {
		return false
	}
	return true
}

// writeDataset writes tables to o.Out (a no-op without --out).
func (o *TableOutput) writeDataset(tables []*export.Table, md map[string]string) error {
	if o.Out == "" {
		return nil
	}
	if err := export.WriteDataset(o.Out, tables, o.datasetFormat(), o.datasetOptions(md)); err != nil {
		return o.datasetError(err)
	}
	return nil
}

func (o *TableOutput) datasetOptions(md map[string]string) export.Options {
	opt := export.Options{Metadata: md, Replace: o.Overwrite}
	if o.Partition {
		opt.PartitionBy = []string{"arm", "file"}
	}
	return opt
}

func (o *TableOutput) datasetError(err error) error {
	return &ExitError{Code: ExitInput, Err: fmt.Errorf("write %s: %w", o.Out, err)}
}

// datasetWriter starts the --out dataset table by table (nil without --out).
func (o *TableOutput) datasetWriter(md map[string]string) (*export.DatasetWriter, error) {
	if o.Out == "" {
		return nil, nil
	}
	w, err := export.NewDatasetWriter(o.Out, o.datasetFormat(), o.datasetOptions(md))
	if err != nil {
		return nil, o.datasetError(err)
	}
	return w, nil
}

// emit sends one rendering to -o FILE (atomically) or stdout. Binary output
// never goes to a terminal.
func (o *TableOutput) emit(stdout io.Writer, binary bool, render func(io.Writer) error) error {
	if fd, ok := export.OutputDescriptor(o.Output); ok && binary && term.IsTerminal(fd) {
		return usageErr("--format %s is binary and -o %s is a terminal: redirect it to a file, or pass -o FILE or --out DIR", o.Format, o.Output)
	}
	if o.Output != "" {
		if err := writeFileAtomic(o.Output, render); err != nil {
			return &ExitError{Code: ExitInput, Err: fmt.Errorf("write %s: %w", o.Output, err)}
		}
		return nil
	}
	if binary && isTerminal(stdout) {
		return usageErr("--format %s is binary: redirect stdout to a file, or pass -o FILE or --out DIR", o.Format)
	}
	if binary {
		return render(rawWriter(stdout))
	}
	return render(stdout)
}

func isTerminal(w io.Writer) bool {
	f, ok := rawWriter(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeFileAtomic is export.WriteFileAtomic, creating path's directory
// first (-o may name a new one).
func writeFileAtomic(path string, render func(io.Writer) error) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o777); err != nil { // less the umask, as mkdir -p
			return err
		}
	}
	return export.WriteFileAtomic(path, render)
}

// segmentFlags are the flags that choose how exports are segmented; a
// dataset (--from) was segmented when it was written, so they do not apply.
var segmentFlags = []string{"step", "depth", "arm-pattern", "config", "arm", "arm-key", "manifest"}

// validateFrom rejects segmentation flags with --from.
func (o *AnalyzeOptions) validateFrom(cmd *cobra.Command) error {
	if !o.From {
		return nil
	}
	for _, name := range segmentFlags {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return usageErr("--%s does not apply with --from: the datasets were segmented when they were written (re-run analyze on the exports to change it)", name)
		}
	}
	return nil
}

// buildDocFrom analyses datasets written by --out (analyze --from DIR...).
// Globs are expanded (sorted) so that CI scripts may quote them.
func buildDocFrom(cmd *cobra.Command, o *AnalyzeOptions) (*analysis.Doc, error) {
	dirs := expandDirs(o.Files)
	var pr *progress
	if stderr := cmd.ErrOrStderr(); progressWanted(stderr, o.Quiet, o.NoProgress) {
		pr = newProgress(cmd.Context(), stderr, true, 1)
		pr.statsStarted()
	}
	// Each dataset's own warm-up, unless --skip-steps is given.
	doc, err := dataset.Build(cmd.Context(), dirs, o.Options, Version())
	pr.finish(err == nil)
	if err != nil {
		return nil, asExit(err)
	}
	return doc, nil
}

// generate renders a command's result in the --format named format on
// stdout; binary formats refuse a terminal.
func generate(stdout io.Writer, format string, result any, opt report.Options) error {
	f, err := report.ParseFormat(format)
	if err != nil {
		return usageErr("--format: %v", err)
	}
	if f.Binary() && isTerminal(stdout) {
		return usageErr("--format %s is binary: redirect stdout to a file", format)
	}
	if f.Binary() {
		stdout = rawWriter(stdout)
	}
	return report.Generate(stdout, f, result, opt)
}

// inputPaths is every file a segmenting command reads: its arguments with
// their globs expanded, the files of --arm globs, the run manifests (given
// or beside each export) and the rules file. -o and --out must be none of
// them.
func (o *AnalysisFlags) inputPaths() []string {
	var out []string
	addGlob := func(pattern string) {
		out = append(out, pattern)
		if matches, err := filepath.Glob(pattern); err == nil {
			out = append(out, matches...)
		}
	}
	for _, f := range o.Files {
		addGlob(f)
	}
	for _, a := range o.FileArms {
		addGlob(a.Glob)
	}
	for _, f := range slices.Clone(out) {
		out = append(out, analysis.ManifestPath(f))
	}
	for _, f := range []string{o.Manifest, o.RulesFile} {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// checkPaths refuses, before any work, a -o or --out that is one of the
// inputs (`-o X.sqlite X.sqlite` would replace the export) or a -o that is
// a FIFO, device or directory.
func (o *TableOutput) checkPaths(inputs []string) error {
	if o.Output != "" {
		if err := export.CheckOutput(o.Output, inputs); err != nil {
			return usageErr("-o: %v", err)
		}
	}
	if o.Out != "" {
		outSt, outErr := os.Stat(o.Out)
		for _, in := range inputs {
			same := filepath.Clean(in) == filepath.Clean(o.Out)
			if st, err := os.Stat(in); err == nil && outErr == nil && os.SameFile(st, outSt) {
				same = true
			}
			if same {
				return usageErr("--out %s is an input: choose another directory", o.Out)
			}
			// --overwrite swaps the whole directory: an input inside it
			// would be deleted with the old dataset.
			if export.Within(in, o.Out) {
				return usageErr("--out %s holds the input %s: choose another directory", o.Out, in)
			}
			// An input directory (a dataset read by --from) is read whole.
			if st, err := os.Stat(in); err == nil && st.IsDir() && export.Within(o.Out, in) {
				return usageErr("--out %s lies inside the input directory %s: choose a directory outside it", o.Out, in)
			}
		}
	}
	return nil
}
