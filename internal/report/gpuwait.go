package report

import (
	"fmt"
	"strings"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/phases"
)

// Why a phase waits: plain sentences from the sync_ns split (own GPU work,
// other processes' work, nothing recorded) and the GPU context metrics, for
// the text, markdown and HTML reports. Every percentage names its
// denominator.

// waitMatters is the share of wall a phase's mean sync must reach for a
// sentence: below it the wait is not what the phase is about.
const waitMatters = 0.10

// gpuWaitNotes says, per phase and arm whose mean sync_ns is at least 10% of
// its mean wall_ns, what the process's GPUs ran while the host waited, and,
// per compared arm, how much of the sync difference was a GPU that ran
// nothing and how much other processes' work, with CIs. Phases in step
// order, arms in the document's order.
func gpuWaitNotes(d *analysis.Doc) []string {
	name := func(m phases.Metric) string { return m.Name() }
	rows := map[[2]string]analysis.SummaryRow{}
	for _, r := range d.Summary {
		rows[[2]string{r.Phase, r.Arm}] = r
	}
	type key struct{ phase, arm string }
	dec := map[key]map[string]analysis.DecompositionRow{}
	for _, r := range d.Decomposition {
		k := key{r.Phase, r.Arm}
		if dec[k] == nil {
			dec[k] = map[string]analysis.DecompositionRow{}
		}
		dec[k][r.Component] = r
	}
	var out []string
	for _, ph := range d.Phases {
		for _, arm := range d.Arms {
			r, ok := rows[[2]string{ph, arm}]
			if !ok {
				continue
			}
			mean := func(m phases.Metric) float64 { return r.Metrics[name(m)].Mean }
			wall, sync := mean(phases.Wall), mean(phases.SyncAPI)
			if wall <= 0 || sync < waitMatters*wall {
				continue
			}
			if ph == phases.Unannotated {
				continue // its GPU context does not split into parts (null)
			}
			if r.Metrics[name(phases.SyncNoGPU)].Absent {
				// GPU activity was not recorded: what the GPU ran while the
				// host waited is unknown, not "nothing".
				out = append(out, fmt.Sprintf("%s%s: sync %s of %s wall (%s of wall); what the GPU ran meanwhile is unknown: the export has no GPU activity tables",
					ph, armClause(arm), usText(sync), usText(wall), pctOf(sync, wall)))
				continue
			}
			own, other, none := mean(phases.SyncOwnGPU), mean(phases.SyncOtherGPU), mean(phases.SyncNoGPU)
			s := fmt.Sprintf("%s%s: sync %s of %s wall (%s of wall); of the sync, %s no GPU work recorded, %s other processes' work, %s own GPU work",
				ph, armClause(arm), usText(sync), usText(wall), pctOf(sync, wall), pctOf(none, sync), pctOf(other, sync), pctOf(own, sync))
			// Without MPS two processes' work never overlaps on a GPU:
			// the trace's one sign of MPS is overlap_other_process_ns.
			switch {
			case none >= sync/2 && mean(phases.OtherProcessGPU) > 0 && mean(phases.OverlapOtherProcess) == 0:
				s += " — typical of time-slicing between processes without MPS"
			case none >= sync/2:
				s += " — the GPU ran nothing recorded for most of the wait (launch latency, or work the trace does not record)"
			case other >= sync/2:
				s += " — other processes' work held the GPU"
			case own >= sync/2:
				s += " — waiting for its own GPU work"
			}
			out = append(out, s)
		}
		for _, arm := range d.Arms {
			parts := dec[key{ph, arm}]
			sd, ok := parts[name(phases.SyncAPI)]
			if !ok {
				continue
			}
			base, ok := rows[[2]string{ph, sd.Baseline}]
			if !ok || base.Metrics[name(phases.Wall)].Mean <= 0 {
				continue
			}
			significant := sd.DiffCI != nil && (sd.DiffCI[0] > 0 || sd.DiffCI[1] < 0)
			if !significant && !(sd.DiffCI == nil && abs(sd.DiffNs) >= waitMatters*base.Metrics[name(phases.Wall)].Mean) {
				continue
			}
			part := func(m phases.Metric, what string) string {
				p, ok := parts[name(m)]
				if !ok {
					return ""
				}
				return fmt.Sprintf("%s %s%s", what, signedUs(p.DiffNs), ciUs(p.DiffCI))
			}
			s := fmt.Sprintf("%s, %s − %s: sync %s%s per instance; of it %s (%s of the sync difference), %s, %s; over the whole phase, %s, %s",
				ph, arm, sd.Baseline, signedUs(sd.DiffNs), ciUs(sd.DiffCI),
				part(phases.SyncNoGPU, "no GPU work recorded"), pctOf(parts[name(phases.SyncNoGPU)].DiffNs, sd.DiffNs),
				part(phases.SyncOtherGPU, "other processes' work"), part(phases.SyncOwnGPU, "own GPU work"),
				part(phases.GPUIdle, "GPU idle"), part(phases.OtherProcessGPU, "other processes' GPU time"))
			out = append(out, s)
		}
	}
	return out
}

// armClause names an arm in a sentence: ", arm A"; nothing without one.
func armClause(arm string) string {
	if arm == "" {
		return ""
	}
	return ", arm " + arm
}

// usText renders ns as µs with three significant digits at least.
func usText(ns float64) string {
	v := ns / 1e3
	switch {
	case abs(ns) >= 10e9:
		return fmt.Sprintf("%.1f s", ns/1e9)
	case abs(ns) >= 10e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	case abs(v) >= 100:
		return fmt.Sprintf("%.0f µs", v)
	case abs(v) >= 10:
		return fmt.Sprintf("%.1f µs", v)
	}
	return fmt.Sprintf("%.2f µs", v)
}

func signedUs(ns float64) string {
	if ns >= 0 {
		return "+" + usText(ns)
	}
	return "−" + usText(-ns)
}

func ciUs(ci *[2]float64) string {
	if ci == nil {
		return " (no CI)"
	}
	return " [" + strings.TrimSuffix(signedUs(ci[0]), " µs") + ", " + signedUs(ci[1]) + "]"
}

// pctOf is part/whole as a whole percentage; "—" without a whole.
func pctOf(part, whole float64) string {
	if whole == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100*part/whole)
}
