package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/plural"
)

// compactGPUMetrics are the GPU metrics of the compact hardware table, in
// column order, where recorded (--wide shows every metric).
var compactGPUMetrics = []string{"SMs Active", "SM Issue", "Tensor Active", "DRAM Read Bandwidth", "DRAM Write Bandwidth", "PCIe RX Throughput", "PCIe TX Throughput"}

// hardwareTable is the "hardware" table: per arm and phase, the mean of
// each GPU metric ("—": not measured); compact unless wide.
func hardwareTable(doc *analysis.Doc, wide bool) *export.Table {
	h := doc.Hardware
	if h == nil || len(h.GPUMetricRows) == 0 {
		return nil
	}
	var metrics []string
	for _, m := range h.GPUMetrics {
		if (wide || slices.Contains(compactGPUMetrics, m.Name)) && !slices.Contains(metrics, m.Name) {
			metrics = append(metrics, m.Name)
		}
	}
	if len(metrics) == 0 {
		return nil
	}
	unit := map[string]string{}
	for _, m := range h.GPUMetrics {
		unit[m.Name] = m.Unit
	}
	if wide {
		t := export.NewTable("hardware", "GPU metrics per phase (time-weighted mean over the GPU windows of each step's instances, then mean over steps; — not measured)",
			export.Column{Name: "arm", Type: export.TypeString}, export.Column{Name: "phase", Type: export.TypeString},
			export.Column{Name: "metric", Type: export.TypeString}, export.Column{Name: "unit", Type: export.TypeString},
			export.Column{Name: "n", Type: export.TypeInt64}, export.Column{Name: "mean", Type: export.TypeString}, export.Column{Name: "95% CI", Type: export.TypeString})
		for _, r := range h.GPUMetricRows {
			mean, ci := "—", "—"
			if r.Mean != nil {
				mean = fmt.Sprintf("%.3g", *r.Mean)
			}
			if r.MeanCI != nil {
				ci = fmt.Sprintf("[%.3g, %.3g]", r.MeanCI[0], r.MeanCI[1])
			}
			_ = t.AppendRow(export.Str(r.Arm), export.Str(r.Phase), export.Str(r.Metric), export.Str(unit[r.Metric]), export.Int(int64(r.N)), export.Str(mean), export.Str(ci))
		}
		return t
	}
	cols := []export.Column{{Name: "arm", Type: export.TypeString}, {Name: "phase", Type: export.TypeString}}
	for _, m := range metrics {
		// Short headers keep the table within 120 columns; --wide names
		// each metric in full.
		name := strings.NewReplacer(" Bandwidth", "", " Throughput", "", "Tensor Active", "Tensor").Replace(m)
		if u := unit[m]; u == "Throughput %" {
			name += " %"
		} else if u != "" {
			name += " " + u
		}
		cols = append(cols, export.Column{Name: name, Type: export.TypeString})
	}
	t := export.NewTable("hardware", "GPU metrics per phase over its GPU work (mean; — not measured; --wide: every metric with CIs)", cols...)
	type ap struct{ arm, phase string }
	var order []ap
	val := map[ap]map[string]*float64{}
	for _, r := range h.GPUMetricRows {
		k := ap{r.Arm, r.Phase}
		if val[k] == nil {
			val[k] = map[string]*float64{}
			order = append(order, k)
		}
		val[k][r.Metric] = r.Mean
	}
	for _, k := range order {
		// A row with no metric measured (the (unannotated) row, a phase
		// without GPU work) says nothing; --wide keeps it.
		if !slices.ContainsFunc(metrics, func(m string) bool { return val[k][m] != nil }) {
			continue
		}
		row := []export.Value{export.Str(k.arm), export.Str(shortName(k.phase, 26))}
		for _, m := range metrics {
			s := "—"
			if v := val[k][m]; v != nil {
				s = fmt.Sprintf("%.3g", *v)
			}
			row = append(row, export.Str(s))
		}
		_ = t.AppendRow(row...)
	}
	return t
}

// hotspotLines are the top five functions of each phase by self samples,
// with the sampling's own limits.
func hotspotLines(doc *analysis.Doc) []string {
	h := doc.Hardware
	if h == nil || h.CPUSamples == 0 {
		return nil
	}
	if len(h.Hotspots) == 0 {
		return []string{fmt.Sprintf("%d CPU %s, none on a step's or phase's thread while it ran (one every %.2f ms per thread; shorter ranges fall between samples)",
			h.CPUSamples, plural.Of(h.CPUSamples, "sample", "samples"), float64(h.CPUPeriodNs)/1e6)}
	}
	lines := []string{fmt.Sprintf("%d CPU %s, one every %.2f ms per thread (median; an estimate); shares are of the phase's samples",
		h.CPUSamples, plural.Of(h.CPUSamples, "sample", "samples"), float64(h.CPUPeriodNs)/1e6)}
	for _, p := range h.Hotspots {
		var fns []string
		top := p.Functions[:min(5, len(p.Functions))]
		names := functionNames(top)
		for i, f := range top {
			share := fmt.Sprintf("%.0f%%", 100*f.SelfShare)
			py := ""
			if f.Python {
				py = " (Python)"
			}
			fns = append(fns, fmt.Sprintf("%s%s %d self/%d incl (%s)", names[i], py, f.Self, f.Inclusive, share))
		}
		lines = append(lines, fmt.Sprintf("%s (%d %s): %s", p.Phase, p.Samples, plural.Of(p.Samples, "sample", "samples"), strings.Join(fns, "; ")))
	}
	return lines
}

// writeHardware writes the hardware table and, with hotspots, the top
// functions per phase.
func writeHardware(w io.Writer, doc *analysis.Doc, f Format, opt Options, section func(string, func() error) error, list func(string, []string) error) error {
	if t := hardwareTable(doc, opt.Wide); t != nil {
		if err := section("Hardware: "+t.Doc, func() error { return writeTable(w, t, f) }); err != nil {
			return err
		}
	}
	if opt.Hotspots {
		return list("Host hotspots: top functions per phase by self CPU samples", hotspotLines(doc))
	}
	return nil
}

// functionNames are the listed functions' names, short and distinct: a
// demangled C++ name without its argument lists, unless that makes two
// of them one (overloads), then clipped to 40 runes keeping them apart.
func functionNames(fs []analysis.HotspotFunction) []string {
	names := make([]string, len(fs))
	seen := map[string]int{}
	for i, f := range fs {
		names[i] = withoutArguments(f.Function)
		seen[names[i]]++
	}
	for i, f := range fs {
		if seen[names[i]] > 1 {
			names[i] = f.Function
		}
	}
	short := distinctNames(names, 40)
	for i := range names {
		names[i] = short[names[i]]
	}
	return names
}

// withoutArguments drops the argument lists of a demangled C++ name, which
// make it long and rarely tell two functions apart:
// "graupel(unsigned long&, …)::{lambda(unsigned long)#3}::operator()(unsigned long) const"
// becomes "graupel(…)::{lambda(…)#3}::operator()(…) const". Empty lists and
// unbalanced parentheses stay as they are.
func withoutArguments(s string) string {
	if strings.Count(s, "(") != strings.Count(s, ")") {
		return s
	}
	var b strings.Builder
	depth := 0
	for i, r := range s {
		switch {
		case r == '(':
			if depth == 0 {
				b.WriteRune(r)
				if i+1 < len(s) && s[i+1] != ')' {
					b.WriteString("…")
				}
			}
			depth++
		case r == ')':
			depth--
			if depth == 0 {
				b.WriteRune(r)
			}
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
