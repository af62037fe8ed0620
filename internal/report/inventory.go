package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
)

func writeInventoryText(w io.Writer, inv *analysis.Inventory, f Format, opt Options) error {
	md := f == Markdown
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
		if md {
			l = export.EscapeMarkdown(l) + "\n"
		}
		fmt.Fprintln(w, l)
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
	if !opt.Wide && f == Text {
		t = narrowInventory(inv)
		fmt.Fprintln(w, "(--wide adds blocking, calls, mean µs, bytes, cadence, % of wait: own/other/no GPU, frame)")
	}
	return writeTable(w, t, f)
}

// narrowInventory is the inventory in the columns that fit textWidth,
// owner and api shortened keeping their distinguishing tails.
func narrowInventory(inv *analysis.Inventory) *export.Table {
	t := export.NewTable("inventory", "",
		export.Column{Name: "arm", Type: export.TypeString},
		export.Column{Name: "owner", Type: export.TypeString},
		export.Column{Name: "kind", Type: export.TypeString},
		export.Column{Name: "api", Type: export.TypeString},
		export.Column{Name: "per_step", Type: export.TypeFloat64},
		export.Column{Name: "µs/step", Type: export.TypeFloat64},
		export.Column{Name: "disposition", Type: export.TypeString})
	var owners, apis []string
	for _, it := range inv.Items {
		owners, apis = append(owners, it.Owner), append(apis, it.API)
	}
	owner, api := fittedNames(owners, 26), fittedNames(apis, 24)
	for _, it := range inv.Items {
		_ = t.AppendRow(export.Str(armLabel(inv.Arms, it.Arm, 12)), export.Str(owner[it.Owner]), export.Str(it.Kind), export.Str(api[it.API]),
			export.Float(round3(it.PerStep)), export.Float(round1(it.NsPerStep/1e3)), export.Str(it.Disposition))
	}
	return t
}

// fittedNames shortens names to n runes, distinct where a head and tail
// can keep them so (distinctNames), never longer than n.
func fittedNames(names []string, n int) map[string]string {
	m := distinctNames(names, n)
	for k, v := range m {
		if displayLen(v) > n {
			m[k] = shortName(k, n)
		}
		// A name already cut to its byte budget keeps its length and hash
		// ("…[9007 bytes, sha256 …]") whole, even past the width: the head
		// gives way, not the marker that identifies the name.
		if i := strings.LastIndex(k, "…["); i > 0 && strings.HasSuffix(k, "]") && strings.Contains(k[i:], " bytes, sha256 ") && displayLen(m[k]) < displayLen(k) {
			m[k] = clip(k[:i], max(n-displayLen(k[i:]), 8)) + k[i:]
		}
	}
	return m
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

// Its renderers (Generate finds them by the result type).
func init() {
	register(func(w io.Writer, inv *analysis.Inventory, f Format, opt Options) error {
		return writeInventoryText(w, inv, f, opt)
	}, Text, Markdown)
	register(tableRenderer(func(inv *analysis.Inventory) *export.Table { return inv.Table() }, true), CSV, Parquet, Arrow)
}
