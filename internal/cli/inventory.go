package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
)

// InventoryOptions are the inputs of `nsysphase inventory`.
type InventoryOptions struct {
	AnalyzeOptions // segmentation flags and --format
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
			o.Stdout, o.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if err := o.validateInventory(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runInventory(cmd, o)
		},
	}
	addSegmentFlags(cmd, &o.AnalyzeOptions)
	if fl := cmd.Flags().Lookup("skip-steps"); fl != nil {
		_ = fl.Value.Set("0")
		fl.DefValue = "0"
		fl.Usage = "steps at the start of each block left out of the inventory (default: none; warm-up ranges are always left out)"
	}
	addTableOutputFlags(cmd, &o.TableOutput, "items")
	return cmd
}

func (o *InventoryOptions) validateInventory() error {
	if len(o.Files) == 0 && len(o.Arms) == 0 {
		return usageErr("no input: pass export files (or --arm NAME=GLOB)")
	}
	if err := o.TableOutput.validate(); err != nil {
		return err
	}
	if o.Depth < 1 {
		return usageErr("--depth %d: want ≥ 1", o.Depth)
	}
	if o.SkipSteps < 0 {
		return usageErr("--skip-steps %d: want ≥ 0", o.SkipSteps)
	}
	return nil
}

func runInventory(cmd *cobra.Command, o *InventoryOptions) error {
	cfg, err := o.config()
	if err != nil {
		return err
	}
	tuneMemory(cfg)
	files, frames, err := analysis.ReadCalls(cmd.Context(), cfg)
	if err != nil {
		return asExit(err)
	}
	inv := analysis.BuildInventory(files, frames, o.SkipSteps)
	warnMismatches(o.Stderr, inv.Mismatches)
	tables := []*export.Table{inv.Table()}
	switch o.Format {
	case "csv", "parquet", "arrow":
		return writeTables(o.Stdout, &o.TableOutput, tables, "items", nil)
	}
	if err := o.writeDataset(tables, nil); err != nil {
		return err
	}
	if !o.printsReport() {
		return nil
	}
	f, _ := tableFormat(o.Format)
	return o.emit(o.Stdout, f, func(w io.Writer) error {
		switch o.Format {
		case "json": // the contract: {"items": [...]}
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(inv)
		case "markdown":
			return writeInventoryText(w, inv, export.FormatMarkdown)
		}
		return writeInventoryText(w, inv, export.FormatText)
	})
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
func writeInventoryText(w io.Writer, inv *analysis.Inventory, f export.Format) error {
	md := f == export.FormatMarkdown
	if md {
		fmt.Fprintf(w, "## nsysphase inventory\n\n")
	}
	steps := make([]string, 0, len(inv.Arms))
	for _, a := range inv.Arms {
		label := a
		if label == "" {
			label = "(no arm)"
		}
		steps = append(steps, fmt.Sprintf("%s %d", label, inv.StepsByArm[a]))
	}
	bt := "none recorded"
	if inv.Backtraces {
		bt = "top user frame per row"
	}
	lines := []string{
		"inputs: " + strings.Join(inv.Inputs, ", "),
		fmt.Sprintf("step %q; steps per arm: %s (--skip-steps %d); backtraces: %s", inv.Step, strings.Join(steps, ", "), inv.SkipSteps, bt),
		"ranked by host time per step of the arm; a copy and the sync completing it count as one call",
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
		if md {
			fmt.Fprintln(w)
		}
	}
	if len(inv.Items) == 0 {
		fmt.Fprintln(w, "\nno blocking host interaction or allocation inside the steps")
		return nil
	}
	cols := []export.Column{
		{Name: "arm", Type: export.TypeString},
		{Name: "owner", Type: export.TypeString},
		{Name: "kind", Type: export.TypeString},
		{Name: "api", Type: export.TypeString},
		{Name: "blocking", Type: export.TypeBool},
		{Name: "calls", Type: export.TypeInt64},
		{Name: "per_step", Type: export.TypeFloat64},
		{Name: "µs/step", Type: export.TypeFloat64},
		{Name: "mean µs", Type: export.TypeFloat64},
		{Name: "bytes", Type: export.TypeInt64, Nullable: true},
		{Name: "cadence", Type: export.TypeString},
		{Name: "disposition", Type: export.TypeString},
		{Name: "% of wait: own/other/no GPU", Type: export.TypeString},
	}
	if inv.Backtraces {
		cols = append(cols, export.Column{Name: "frame", Type: export.TypeString})
	}
	t := export.NewTable("inventory", "", cols...)
	for _, it := range inv.Items {
		b := export.Null()
		if it.Bytes != nil {
			b = export.Int(*it.Bytes)
		}
		cadence := it.Cadence
		if it.Period != nil {
			cadence = fmt.Sprintf("%s (1/%.0f steps)", cadence, *it.Period)
		}
		row := []export.Value{export.Str(it.Arm), export.Str(it.Owner), export.Str(it.Kind), export.Str(it.API), export.Bool(it.Blocking),
			export.Int(it.Calls), export.Float(round3(it.PerStep)), export.Float(round1(it.NsPerStep / 1e3)), export.Float(round1(it.MeanNs / 1e3)), b,
			export.Str(cadence), export.Str(it.Disposition), export.Str(waitSplit(it))}
		if inv.Backtraces {
			row = append(row, export.Str(it.Frame))
		}
		if err := t.AppendRow(row...); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	return export.Write(w, t, f, export.Options{FloatDigits: 8})
}

func round3(v float64) float64 { return float64(int64(v*1000+copysignHalf(v))) / 1000 }

// waitSplit renders the waiting time of an item as shares of it: its own
// GPU work / only other processes' work / no recorded work; "—" when the
// host did not wait.
func waitSplit(it analysis.InventoryItem) string {
	w := it.WaitOwnGPUNs + it.WaitOtherGPUNs + it.WaitNoGPUNs
	if w <= 0 {
		return "—"
	}
	pct := func(v int64) float64 { return 100 * float64(v) / float64(w) }
	return fmt.Sprintf("%.0f/%.0f/%.0f%%", pct(it.WaitOwnGPUNs), pct(it.WaitOtherGPUNs), pct(it.WaitNoGPUNs))
}
