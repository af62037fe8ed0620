package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/plural"
)

func BlockersTable(bs []analysis.Blocker) *export.Table {
	t := export.NewTable("blockers", "what a CUDA graph of the region could not capture, per arm",
		export.Column{Name: "arm", Type: export.TypeString, Doc: "arm label, as in phase_instances.arm"},
		export.Column{Name: "phase", Type: export.TypeString, Doc: "phase of the region the blocker sits in"},
		export.Column{Name: "kind", Type: export.TypeString, Doc: "blocker: an inventory kind (scalar_read, dynamic_shape, pageable_h2d, sync_copy, d2h, *_sync, alloc, free), data_dependent_branch or region_gap (docs/inventory.md)"},
		export.Column{Name: "api", Type: export.TypeString, Doc: "CUDA API base name(s) of the blocking calls; empty for branches and gaps"},
		export.Column{Name: "blocking", Type: export.TypeBool, Doc: "the host waited for the device"},
		export.Column{Name: "calls", Type: export.TypeInt64, Unit: export.UnitCount, Doc: "calls (or varying instances) over the arm's kept steps"},
		export.Column{Name: "per_step", Type: export.TypeFloat64, Unit: export.UnitCount, Doc: "calls per step instance of the arm"},
		export.Column{Name: "total_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Doc: "host time in those calls"},
		export.Column{Name: "cadence", Type: export.TypeString, Doc: "hot (at least half the steps), interval (evenly spaced) or cold"},
		export.Column{Name: "disposition", Type: export.TypeString, Doc: "suggested fix (docs/inventory.md)"},
	)
	for _, b := range bs {
		_ = t.AppendRow(export.Str(b.Arm), export.Str(b.Phase), export.Str(b.Kind), export.Str(b.API), export.Bool(b.Blocking),
			export.Int(b.Calls), export.Float(b.PerStep), export.Int(b.TotalNs), export.Str(b.Cadence), export.Str(b.Disposition))
	}
	return t
}

func regionCI(ci *[2]float64, scale float64, format string) export.Value {
	if ci == nil {
		return export.Null()
	}
	return export.Str(fmt.Sprintf("["+format+", "+format+"]", ci[0]*scale, ci[1]*scale))
}

func writeBoundaryText(w io.Writer, b *analysis.Boundary, f Format, opt Options) error {
	md := f == Markdown
	line := func(format string, args ...any) {
		l := fmt.Sprintf(format, args...)
		if md { // names from the export render as text (escaped once formatted: %q would undo it)
			l = export.EscapeMarkdown(l)
		}
		fmt.Fprintln(w, l)
		if md {
			fmt.Fprintln(w)
		}
	}
	h := func(s string) {
		if md {
			fmt.Fprintf(w, "### %s\n\n", s)
		} else {
			fmt.Fprintf(w, "\n%s\n", s)
		}
	}
	if md {
		fmt.Fprintf(w, "## nsysphase boundary\n\n")
	}
	line("inputs: %s", strings.Join(b.Inputs, ", "))
	line("capture region of step %q: %s", b.Step, strings.Join(b.Phases, ", "))
	line("inside:  %s", strings.Join(b.Inside, ", "))
	line("outside: %s", strings.Join(b.Outside, ", "))
	line("%s", b.Saving)
	line("statistics: unit = block or profile (never the step); %g%% CIs; B = %d resamples; seed %d; --skip-steps %d (blockers: every step)",
		100*b.Settings.Confidence, b.Settings.Resamples, b.Settings.Seed, b.Settings.SkipSteps)
	h("Per arm (µs per step)")
	t := boundaryArms(b, f, opt.Wide)
	if err := writeTable(w, t, f); err != nil {
		return err
	}
	for _, a := range b.ArmOrder {
		if b.Arms[a].SavingShare.Value > 1 {
			line("share of step > 100%%: the saving counts another thread's host time, which runs beside the step, outside its wall; the bounded share below is the one to read")
			break
		}
	}
	if len(b.ArmsWithout) > 0 {
		line("arms without any of these phases (not judged): %s", strings.Join(b.ArmsWithout, ", "))
	}
	h("What capture removes, bounded (µs per step; CIs in --format json for every part)")
	if opt.Wide || md {
		line("%s", analysis.BoundDefinition)
	} else {
		line("%s", boundSummary)
	}
	bounds := map[string]*analysis.CaptureBound{}
	for _, a := range b.ArmOrder {
		bounds[a] = b.Arms[a].Bound
	}
	if err := writeBound(w, f, b.ArmOrder, bounds); err != nil {
		return err
	}
	return writeBoundaryEnd(w, b, f, opt, line, h)
}

// boundSummary is the bound's definition in one sentence; --wide and the
// Markdown print it whole (analysis.BoundDefinition).
const boundSummary = "removable = the host time of the region's phases that launch GPU work and hold no blocker, at most step wall − " +
	"the process's GPU time, less the replay's cudaGraphLaunch (--wide: the whole definition)"

// boundaryArms is the per-arm table; the default leaves out the saving's
// CI, its launch and cpu_other parts, the method and the units (--wide).
func boundaryArms(b *analysis.Boundary, f Format, wide bool) *export.Table {
	t := export.NewTable("arms", "",
		export.Column{Name: "arm", Type: export.TypeString},
		export.Column{Name: "capturable", Type: export.TypeString},
		export.Column{Name: "blockers", Type: export.TypeInt64},
		export.Column{Name: "saving µs", Type: export.TypeFloat64},
		export.Column{Name: "saving CI", Type: export.TypeString, Nullable: true},
		export.Column{Name: "launch µs", Type: export.TypeFloat64},
		export.Column{Name: "cpu_other µs", Type: export.TypeFloat64},
		export.Column{Name: "step wall µs", Type: export.TypeFloat64},
		export.Column{Name: "share of step", Type: export.TypeString},
		export.Column{Name: "share CI", Type: export.TypeString, Nullable: true},
		export.Column{Name: "method", Type: export.TypeString},
		export.Column{Name: "steps", Type: export.TypeInt64},
		export.Column{Name: "units", Type: export.TypeInt64},
	)
	shareText := func(v float64) string {
		if v > 1 { // the region's host time includes another thread's, outside the step wall
			return "> 100%"
		}
		return fmt.Sprintf("%.1f%%", 100*v)
	}
	for _, a := range b.ArmOrder {
		ba := b.Arms[a]
		capt := "yes"
		if !ba.Capturable {
			capt = "no"
		}
		if len(ba.PhasesMissing) > 0 {
			capt += " (lacks " + strings.Join(ba.PhasesMissing, ", ") + ")"
		}
		_ = t.AppendRow(export.Str(a), export.Str(capt), export.Int(int64(ba.Blockers)), export.Float(round1(ba.SavingNs.Mean/1e3)), regionCI(ba.SavingNs.MeanCI, 1e-3, "%.1f"),
			export.Float(round1(ba.LaunchNs.Mean/1e3)), export.Float(round1(ba.CPUOtherNs.Mean/1e3)), export.Float(round1(ba.StepWallNs.Mean/1e3)),
			export.Str(shareText(ba.SavingShare.Value)), regionCI(ba.SavingShare.CI, 100, "%.1f%%"), export.Str(ba.SavingNs.Method),
			export.Int(int64(ba.Steps)), export.Int(int64(ba.Units)))
	}
	if wide || f == Markdown {
		return t
	}
	return selectColumns(t, "arm", "capturable", "blockers", "saving µs", "step wall µs", "share of step", "share CI", "steps")
}

// writeBoundaryEnd writes the blockers, the verdict and the warnings.
func writeBoundaryEnd(w io.Writer, b *analysis.Boundary, f Format, opt Options, line func(string, ...any), h func(string)) error {
	md := f == Markdown
	if len(b.Blockers) == 0 {
		h("Blockers inside the region: none")
	} else {
		h(fmt.Sprintf("Blockers inside the region (%d)", len(b.Blockers)))
		bt := export.NewTable("blockers", "",
			export.Column{Name: "arm", Type: export.TypeString},
			export.Column{Name: "phase", Type: export.TypeString},
			export.Column{Name: "kind", Type: export.TypeString},
			export.Column{Name: "api", Type: export.TypeString},
			export.Column{Name: "per_step", Type: export.TypeFloat64},
			export.Column{Name: "total µs", Type: export.TypeFloat64},
			export.Column{Name: "cadence", Type: export.TypeString},
			export.Column{Name: "disposition", Type: export.TypeString},
		)
		var phs, apis []string
		for _, x := range b.Blockers {
			phs, apis = append(phs, x.Phase), append(apis, x.API)
		}
		fit := !opt.Wide && !md
		ph, api := fittedNames(phs, 22), fittedNames(apis, 28)
		for _, x := range b.Blockers {
			p, a := x.Phase, x.API
			if fit {
				p, a = ph[p], api[a]
			}
			_ = bt.AppendRow(export.Str(x.Arm), export.Str(p), export.Str(x.Kind), export.Str(a), export.Float(round3(x.PerStep)),
				export.Float(round1(float64(x.TotalNs)/1e3)), export.Str(x.Cadence), export.Str(x.Disposition))
		}
		if fit { // total µs and cadence in --wide
			bt = selectColumns(bt, "arm", "phase", "kind", "api", "per_step", "disposition")
		}
		if err := writeTable(w, bt, f); err != nil {
			return err
		}
	}
	var not []string
	for _, a := range b.ArmOrder {
		if !b.Arms[a].Capturable {
			n := b.Arms[a].Blockers
			not = append(not, fmt.Sprintf("%s (%d %s)", a, n, plural.Of(n, "blocker", "blockers")))
		}
	}
	h("Verdict")
	if b.Capturable {
		line("capturable: no blocker inside the region in any arm that has its phases")
	} else {
		line("not capturable as it stands: %s", strings.Join(not, ", "))
	}
	writeWarnings(w, b.Warnings, md, opt.AllWarnings)
	return nil
}

// maxWarningLines bounds the warnings a default text output prints: one
// line a kind, the rest counted (--warnings and JSON list each).
const maxWarningLines = 6

// writeWarnings prints statistics warnings: by default one line a kind
// (warningLines), at most maxWarningLines; all lists each in full.
func writeWarnings(w io.Writer, ws []analysis.Warning, md, all bool) {
	if len(ws) == 0 {
		return
	}
	if !all {
		lines := warningLines(ws, false)
		fmt.Fprintf(w, "\nWarnings (%d, by kind; --warnings or --format json lists each)\n", len(ws))
		for i, l := range lines {
			if i == maxWarningLines-1 && len(lines) > maxWarningLines {
				fmt.Fprintf(w, "  … %d more kinds (--warnings)\n", len(lines)-i)
				break
			}
			if md {
				l = export.EscapeMarkdown(l)
			}
			fmt.Fprintln(w, clip("  "+l, textWidth))
		}
		return
	}
	fmt.Fprintf(w, "\nWarnings (%d)\n", len(ws))
	for _, wr := range ws {
		scope := strings.TrimSpace(wr.Arm + " " + wr.Metric)
		if scope != "" {
			scope = " [" + scope + "]"
		}
		msg := wr.Message
		if md {
			scope, msg = export.EscapeMarkdown(scope), export.EscapeMarkdown(msg)
		}
		fmt.Fprintf(w, "  %s%s: %s\n", wr.Code, scope, msg)
	}
}

// us is a value in µs with one decimal.
func us(v float64) export.Value { return export.Float(round1(v / 1e3)) }

// replayLine says where the replay cost comes from.
func replayLine(r analysis.ReplayCost) string {
	if r.Source == analysis.ReplayConstant {
		return fmt.Sprintf("replay: %.1f µs per cudaGraphLaunch, a constant (the inputs launch no graph to measure)", float64(r.PerLaunchNs)/1e3)
	}
	return fmt.Sprintf("replay: %.1f µs per cudaGraphLaunch, the mean of the inputs' %d %s (median %.1f, range %.1f–%.1f µs)",
		float64(r.PerLaunchNs)/1e3, r.Calls, plural.Of(r.Calls, "call", "calls"), float64(*r.MedianNs)/1e3, float64(*r.MinNs)/1e3, float64(*r.MaxNs)/1e3)
}

// ciText is " [lo, hi]" in µs, or "" without a CI.
func ciText(ci *[2]float64) string {
	if ci == nil {
		return ""
	}
	return fmt.Sprintf(" [%.1f, %.1f]", ci[0]/1e3, ci[1]/1e3)
}

// writeBound renders the bounded saving of the arms in order (those with a
// bound): a few lines of its parts per arm, then a table of the region's
// phases. md makes the lines a list.
func writeBound(w io.Writer, f Format, arms []string, bounds map[string]*analysis.CaptureBound) error {
	bullet, sub := "", "  "
	if f == Markdown {
		bullet, sub = "- ", "  - "
	}
	p := export.NewTable("phases", "",
		export.Column{Name: "arm", Type: export.TypeString},
		export.Column{Name: "phase", Type: export.TypeString},
		export.Column{Name: "capture", Type: export.TypeString},
		export.Column{Name: "launches/step", Type: export.TypeFloat64},
		export.Column{Name: "host µs", Type: export.TypeFloat64},
		export.Column{Name: "host CI", Type: export.TypeString, Nullable: true},
		export.Column{Name: "blockers", Type: export.TypeString},
	)
	shown := false
	for _, a := range arms {
		cb := bounds[a]
		if cb == nil {
			continue
		}
		if !shown {
			fmt.Fprintf(w, "%s%s\n", bullet, replayLine(cb.Replay))
			shown = true
		}
		share := fmt.Sprintf("%.1f%%", 100*cb.RemovableShare.Value)
		if ci := cb.RemovableShare.CI; ci != nil {
			share += fmt.Sprintf(" [%.1f%%, %.1f%%]", 100*ci[0], 100*ci[1])
		}
		name := a
		if name == "" {
			name = "(one arm)"
		} else if f == Markdown {
			name = export.EscapeMarkdown(name) // an arm name comes from the export
		}
		fmt.Fprintf(w, "%s%s: removable %.1f µs/step%s = %s of step wall %.1f µs (%s; %d %s in %d %s)\n", bullet, name,
			cb.RemovableNs.Mean/1e3, ciText(cb.RemovableNs.MeanCI), share, cb.StepWallNs.Mean/1e3, cb.RemovableNs.Method,
			cb.Steps, plural.Of(cb.Steps, "step", "steps"), cb.Units, plural.Of(cb.Units, "block or profile", "blocks or profiles"))
		fmt.Fprintf(w, "%shost of the removable phases %.1f%s = launch %.1f + cpu_other %.1f + memcpy_api %.1f + other_api %.1f\n", sub,
			cb.HostNs.Mean/1e3, ciText(cb.HostNs.MeanCI), cb.LaunchNs.Mean/1e3, cb.CPUOtherNs.Mean/1e3, cb.MemcpyAPINs.Mean/1e3, cb.OtherAPINs.Mean/1e3)
		fmt.Fprintf(w, "%sGPU floor %.1f%s; replay %d %s × %.1f = %.1f; ceiling (step wall − floor − replay) %.1f%s, which set the removable time in %d of %d %s\n", sub,
			cb.GPUFloorNs.Mean/1e3, ciText(cb.GPUFloorNs.MeanCI), cb.Replay.LaunchesPerStep, plural.Of(cb.Replay.LaunchesPerStep, "graph", "graphs"), float64(cb.Replay.PerLaunchNs)/1e3, float64(cb.Replay.PerStepNs)/1e3,
			cb.CeilingNs.Mean/1e3, ciText(cb.CeilingNs.MeanCI), cb.CeilingSteps, cb.Steps, plural.Of(cb.Steps, "step", "steps"))
		fmt.Fprintf(w, "%snot removable: %.1f%s in phases that launch nothing, %.1f%s in blocked phases; removable once the blockers are fixed: %.1f%s\n", sub,
			cb.NoLaunchHostNs.Mean/1e3, ciText(cb.NoLaunchHostNs.MeanCI), cb.BlockedHostNs.Mean/1e3, ciText(cb.BlockedHostNs.MeanCI),
			cb.RemovableIfFixedNs.Mean/1e3, ciText(cb.RemovableIfFixedNs.MeanCI))
		for _, ph := range cb.Phases {
			bl := strings.Join(ph.Blockers, ", ")
			if bl == "" {
				bl = "—"
			}
			_ = p.AppendRow(export.Str(a), export.Str(ph.Phase), export.Str(ph.Status), export.Float(round3(ph.LaunchesPerStep)),
				us(ph.HostNs.Mean), regionCI(ph.HostNs.MeanCI, 1e-3, "%.1f"), export.Str(bl))
		}
	}
	if p.Len() == 0 {
		return nil
	}
	// A phase whose work another thread launches (PyTorch's backward on
	// its autograd thread) counts those operations too: the column would
	// otherwise read as the phase's own launch calls.
	fmt.Fprintf(w, "%slaunches/step below: the phase's kernel and graph launches, device-to-device copies and memsets on its thread (what capture records; host copies stay outside), and the GPU operations other threads launched during it\n", bullet)
	fmt.Fprintln(w)
	return writeTable(w, p, f)
}

// Its renderers (Generate finds them by the result type).
func init() {
	register(func(w io.Writer, b *analysis.Boundary, f Format, opt Options) error {
		return writeBoundaryText(w, b, f, opt)
	}, Markdown)
	register(func(w io.Writer, b *analysis.Boundary, f Format, opt Options) error {
		return writeWrapped(w, func(w io.Writer) error { return writeBoundaryText(w, b, f, opt) })
	}, Text)
	register(tableRenderer(func(b *analysis.Boundary) *export.Table { return BlockersTable(b.Blockers) }, false), CSV, Parquet, Arrow)
}
