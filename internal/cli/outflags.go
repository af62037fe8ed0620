package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/report"
)

// OutputFlags are the output flags of the commands that print one result
// (check, info, ranges, boundary, verdict): the common flags, as analyze
// and inventory have them.
type OutputFlags struct {
	CommonFlags
}

func addOutputFlags(cmd *cobra.Command, o *OutputFlags) { addCommonFlags(cmd, &o.CommonFlags) }

// check refuses a -o that is one of the inputs, a FIFO, device or directory.
func (o *OutputFlags) check(inputs []string) error {
	if o.Output == "" {
		return nil
	}
	if err := export.CheckOutput(o.Output, inputs); err != nil {
		return usageErr("-o: %v", err)
	}
	return nil
}

// write renders result in format to -o FILE or stdout; nothing with
// --quiet and no -o.
func (o *OutputFlags) write(cmd *cobra.Command, format string, result any, opt report.Options) error {
	if o.Output != "" {
		f, err := report.ParseFormat(format)
		if err != nil {
			return usageErr("--format: %v", err)
		}
		if err := writeFileAtomic(o.Output, func(w io.Writer) error { return report.Generate(w, f, result, opt) }); err != nil {
			return &ExitError{Code: ExitInput, Err: fmt.Errorf("write %s: %w", o.Output, err)}
		}
		return nil
	}
	if o.Quiet {
		return nil
	}
	return generate(cmd.OutOrStdout(), format, result, opt)
}
