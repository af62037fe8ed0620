package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
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

func writeBoundaryText(w io.Writer, b *analysis.Boundary, f Format) error {
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
			export.Str(fmt.Sprintf("%.1f%%", 100*ba.SavingShare.Value)), regionCI(ba.SavingShare.CI, 100, "%.1f%%"), export.Str(ba.SavingNs.Method),
			export.Int(int64(ba.Steps)), export.Int(int64(ba.Units)))
	}
	if err := writeTable(w, t, f); err != nil {
		return err
	}
	if len(b.ArmsWithout) > 0 {
		line("arms without any of these phases (not judged): %s", strings.Join(b.ArmsWithout, ", "))
	}
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
		for _, x := range b.Blockers {
			_ = bt.AppendRow(export.Str(x.Arm), export.Str(x.Phase), export.Str(x.Kind), export.Str(x.API), export.Float(round3(x.PerStep)),
				export.Float(round1(float64(x.TotalNs)/1e3)), export.Str(x.Cadence), export.Str(x.Disposition))
		}
		if err := writeTable(w, bt, f); err != nil {
			return err
		}
	}
	var not []string
	for _, a := range b.ArmOrder {
		if !b.Arms[a].Capturable {
			not = append(not, fmt.Sprintf("%s (%d blockers)", a, b.Arms[a].Blockers))
		}
	}
	h("Verdict")
	if b.Capturable {
		line("capturable: no blocker inside the region in any arm that has its phases")
	} else {
		line("not capturable as it stands: %s", strings.Join(not, ", "))
	}
	writeWarnings(w, b.Warnings, md)
	return nil
}

// writeWarnings prints statistics warnings, at most 10.
func writeWarnings(w io.Writer, ws []analysis.Warning, md bool) {
	if len(ws) == 0 {
		return
	}
	fmt.Fprintf(w, "\nWarnings (%d; all in --format json)\n", len(ws))
	for i, wr := range ws {
		if i == 10 {
			fmt.Fprintf(w, "  … %d more\n", len(ws)-10)
			break
		}
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
