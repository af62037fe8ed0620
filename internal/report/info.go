package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/nsys"
)

func writeInfoTable(w io.Writer, in *nsys.Info, opt Options) {
	top := opt.Top
	fmt.Fprintf(w, "%s\n", in.File)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  nsys\t%s (export schema %s)%s\n", orUnknown(in.NsysVersion), orUnknown(in.ExportSchemaVersion), versionSource(in))
	for _, g := range in.GPUs {
		fmt.Fprintf(tw, "  GPU %d\t%s, %s, %d SMs, %s memory\n", g.ID, g.Name, g.UUID, g.SMCount, humanBytes(g.TotalMemory))
	}
	fmt.Fprintf(tw, "  driver\t%s, CUDA %s\n", orDash(in.DriverVersion), orDash(in.CUDADriverVersion))
	fmt.Fprintf(tw, "  OS\t%s\n", orDash(in.OS))
	fmt.Fprintf(tw, "  CUDA graph trace\t%s\n", orDash(in.GraphTraceMode))
	fmt.Fprintf(tw, "  profiled pids\t%s\n", joinInts(in.ProfiledPids))
	if len(in.AbsentTables) > 0 {
		fmt.Fprintf(tw, "  absent activity tables\t%s (none of that activity was recorded)\n", strings.Join(in.AbsentTables, ", "))
	}
	tw.Flush()

	fmt.Fprintf(w, "\nProcesses (profiled ones marked *, plus NVIDIA/MPS daemons; %d OS %s in PROCESSES, all in JSON)\n", len(in.Processes), plural.Of(len(in.Processes), "process", "processes"))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tPID\tNAME\tTHREADS")
	for _, p := range in.Processes {
		mark := " "
		if slices.Contains(in.ProfiledPids, p.Pid) {
			mark = "*"
		}
		// Threads by name: "python3 ×21" for repeats, "pt_autograd_0 (669)" for singles.
		var order []string
		count, tid := map[string]int{}, map[string]int64{}
		for _, t := range in.Threads {
			if t.Pid != p.Pid {
				continue
			}
			if count[t.Name] == 0 {
				order = append(order, t.Name)
				tid[t.Name] = t.Tid
			}
			count[t.Name]++
		}
		names := make([]string, len(order))
		for i, n := range order {
			if count[n] > 1 {
				names[i] = fmt.Sprintf("%s ×%d", n, count[n])
			} else {
				names[i] = fmt.Sprintf("%s (%d)", n, tid[n])
			}
		}
		if mark == " " && !isNvidiaDaemon(p.Name) {
			continue // an unrelated OS process: counted above, listed in JSON
		}
		threads := strings.Join(names, ", ")
		if !opt.Wide {
			threads = clipList(names, 80)
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\n", mark, p.Pid, p.Name, threads)
	}
	tw.Flush()

	fmt.Fprintf(w, "\nTables (rows)\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	names := make([]string, 0, len(in.Tables))
	for t := range in.Tables {
		if !strings.HasPrefix(t, "ENUM_") {
			names = append(names, t)
		}
	}
	slices.Sort(names)
	for _, t := range names {
		fmt.Fprintf(tw, "  %d\t  %s\n", in.Tables[t], t)
	}
	tw.Flush()

	fmt.Fprintf(w, "\nKernels: %d, %d ns in total (share = of total kernel time)\n", in.Kernels.Count, in.Kernels.TotalNs)
	writeNamed(w, in.Kernels.ByName, in.Kernels.TotalNs, top, "INSTANCES", opt)
	fmt.Fprintf(w, "\nCUDA API calls: %d, %d ns in total (share = of total API time)\n", in.API.Count, in.API.TotalNs)
	writeNamed(w, in.API.ByName, in.API.TotalNs, top, "CALLS", opt)

	fmt.Fprintf(w, "\nMemory operations\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  COUNT\tBYTES\tTOTAL (ns)\tMEAN (ns)\tMEDIAN (ns)\t  KIND")
	for _, m := range in.Memcpy {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%.1f\t%.1f\t  %s\n", m.Count, m.Bytes, m.TotalNs, m.MeanNs, m.MedNs, m.Kind)
	}
	tw.Flush()

	fmt.Fprintf(w, "\nSynchronization records (by CUPTI syncType; classify by API name, see docs)\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  COUNT\tTOTAL (ns)\t  TYPE")
	for _, s := range in.Syncs {
		fmt.Fprintf(tw, "  %d\t%d\t  %d %s\n", s.Count, s.TotalNs, s.SyncType, s.Label)
	}
	tw.Flush()
	if len(in.SkippedRows) > 0 {
		fmt.Fprintf(w, "\nSkipped rows (NULL where a value is required):")
		for _, t := range sortedKeys(in.SkippedRows) {
			fmt.Fprintf(w, " %s %d", t, in.SkippedRows[t])
		}
		fmt.Fprintln(w)
	}
	for _, warn := range in.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// writeNamed is a per-name summary (kernels, API calls), in ns as nsys stats
// prints it. The default leaves out min, max and stddev (--wide, JSON) and
// shortens names so that a row fits the width.
func writeNamed(w io.Writer, rows []nsys.NamedDurations, total int64, top int, countHdr string, opt Options) {
	wide := opt.Wide
	head := []string{"  SHARE", "TOTAL (ns)", countHdr, "MEAN (ns)", "MEDIAN (ns)"}
	if wide {
		head = append(head, "MIN (ns)", "MAX (ns)", "STDDEV (ns)")
	}
	table := [][]string{append(head, "  NAME")}
	for i, r := range rows {
		if top > 0 && i == top {
			break
		}
		share := 0.0
		if total > 0 {
			share = 100 * float64(r.TotalNs) / float64(total)
		}
		row := []string{fmt.Sprintf("  %.1f%%", share), fmt.Sprint(r.TotalNs), fmt.Sprint(r.Count), fmt.Sprintf("%.1f", r.MeanNs), fmt.Sprintf("%.1f", r.MedNs)}
		if wide {
			row = append(row, fmt.Sprint(r.MinNs), fmt.Sprint(r.MaxNs), fmt.Sprintf("%.1f", r.StdNs))
		}
		table = append(table, append(row, "  "+r.Name))
	}
	_ = writeFitted(w, table, tabwriter.AlignRight, fitWidth(opt))
	if top > 0 && len(rows) > top {
		fmt.Fprintf(w, "  … %d more (--top 0 shows all)\n", len(rows)-top)
	}
}

// clipList joins names with ", " within n runes, ending "… N more" where
// some do not fit.
func clipList(names []string, n int) string {
	out := ""
	for i, s := range names {
		next := out
		if i > 0 {
			next += ", "
		}
		next += s
		rest := fmt.Sprintf(", … %d more", len(names)-i)
		if displayLen(next) > n || (i < len(names)-1 && displayLen(next)+len(rest) > n) {
			if i == 0 {
				return clip(s, n)
			}
			return out + rest
		}
		out = next
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func joinInts(xs []int64) string {
	if len(xs) == 0 {
		return "-"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

func humanBytes(b int64) string {
	const gib = 1 << 30
	if b >= gib {
		return fmt.Sprintf("%.1f GiB", float64(b)/gib)
	}
	return fmt.Sprintf("%d B", b)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// isNvidiaDaemon recognises the CUDA MPS control daemon and server and other
// NVIDIA helpers, which matter for provenance even though nsys did not profile them.
func isNvidiaDaemon(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "mps") || strings.HasPrefix(n, "nvidia-")
}

// orUnknown shows provenance an export does not state (exports before nsys
// 2022.1 have no metadata table).
func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// versionSource names where an inferred nsys version came from.
func versionSource(in *nsys.Info) string {
	if in.NsysVersion == "" || in.NsysVersionSource == "" || strings.HasSuffix(in.NsysVersionSource, "META_DATA_EXPORT") {
		return ""
	}
	return ", version from " + in.NsysVersionSource
}

// Its renderers (Generate finds them by the result type).
func init() {
	register(func(w io.Writer, r Infos, _ Format, opt Options) error {
		for i, in := range r {
			if i > 0 {
				fmt.Fprintln(w)
			}
			writeInfoTable(w, in, opt)
		}
		return nil
	}, Text)
	register(func(w io.Writer, r Infos, _ Format, _ Options) error { return writeInfoHTML(w, InfosTable(r)) }, HTML)
	register(tableRenderer(InfosTable, true), CSV, Markdown, Parquet, Arrow)
}
