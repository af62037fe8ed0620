package cli

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/report"
)

// InventoryOptions are the inputs of `nsysphase inventory`.
type InventoryOptions struct {
	AnalysisFlags
	TableOutput
}

// NewCmdInventory builds `nsysphase inventory`; runF replaces the action in tests.
func NewCmdInventory(runF func(*InventoryOptions) error) *cobra.Command {
	o := &InventoryOptions{}
	cmd := &cobra.Command{
		Use:   "inventory FILE...",
		Short: "Every blocking host interaction and allocation, per arm and phase, ranked by cost per step",
		Long: `inventory lists every blocking host interaction (a host sync, a copy the host waits for) and every
allocation inside the steps, grouped by arm × phase × kind × API and ranked by host time per step.

Kinds: scalar_read (a small D2H copy the host waits for: .item(), bool(t.any())), dynamic_shape (the
same, followed by GPU work it sizes: nonzero, masked_select), pageable_h2d, sync_copy, d2h (a D2H copy
the host does not wait for), stream_sync, device_sync, event_sync, alloc and free. A copy and the
synchronize that completes it count as one call. Cadence: hot (in at least half of the arm's steps),
interval (evenly spaced, e.g. every 25 steps) or cold. Each row suggests a disposition: device-resident
counter, fixed-shape pack, interval publication, move outside capture, preallocate or keep eager.
docs/inventory.md states every rule.

The owner is the NVTX path of the phase; with CUDA backtraces in the export (nsys profile
--cudabacktrace) the frame column names the top user frame, else "none recorded".

Unlike analyze, every step inside the arm blocks counts (--skip-steps 0): a census, not a timing.`,
		Example: `  nsysphase inventory testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz
  nsysphase inventory --format json testdata/nsys-2025.3-h200/eager_graph_small.sqlite.xz
  nsysphase inventory --format csv --arm-key training.cuda_process_sharing 'testdata/nsys-2025.3-h200/sharing_*.sqlite.xz'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			if err := o.validateInventory(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runInventory(cmd, o)
		},
	}
	addSegmentFlags(cmd, &o.AnalysisFlags)
	if fl := cmd.Flags().Lookup("skip-steps"); fl != nil {
		fl.DefValue = strconv.Itoa(analysis.CensusSkipSteps)
		_ = fl.Value.Set(fl.DefValue)
		fl.Usage = "steps at the start of each block left out of the inventory (default: none; warm-up ranges are always left out)"
	}
	addTableOutputFlags(cmd, &o.TableOutput, "items")
	return cmd
}

func (o *InventoryOptions) validateInventory() error {
	if err := o.AnalysisFlags.validate(); err != nil {
		return err
	}
	if err := o.checkPaths(o.inputPaths()); err != nil {
		return err
	}
	return o.TableOutput.validate()
}

func runInventory(cmd *cobra.Command, o *InventoryOptions) error {
	files, frames, err := readRegion(cmd, &o.AnalysisFlags, &o.CommonFlags)
	if err != nil {
		return err
	}
	inv := analysis.BuildInventory(files, frames, o.Options)
	warnMismatches(cmd.ErrOrStderr(), inv.Mismatches)
	if err := o.writeDataset([]*export.Table{inv.Table()}, nil); err != nil {
		return err
	}
	if !o.printsReport() {
		return nil
	}
	f, err := report.ParseFormat(o.Format)
	if err != nil {
		return usageErr("--format: %v", err)
	}
	return o.emit(cmd.OutOrStdout(), f.Binary(), func(w io.Writer) error { return report.Generate(w, f, inv, o.reportOptions()) })
}

// warnMismatches prints each manifest claim the trace contradicts as one
// warning line on stderr: they change what the numbers mean.
func warnMismatches(w io.Writer, ms []string) {
	for _, m := range ms {
		fmt.Fprintf(w, "nsysphase: warning: manifest mismatch: %s\n", m)
	}
}

// writeInventoryText is the human view: a header with the steps behind
// per_step, then the items in µs.
