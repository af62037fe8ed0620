package cli_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// commonFlags are the flags every command has (internal/cli/common.go).
var commonFlags = []string{"format", "output", "quiet", "no-progress", "wide", "warnings", "jobs"}

// TestEveryCommandFlags: every command has the same common flags, with the
// same shorthands, and a missing or bad one is answered with what is wrong
// and the valid values.
func TestEveryCommandFlags(t *testing.T) {
	t.Parallel()
	root := cli.NewRootCmd()
	short := map[string]string{"output": "o", "quiet": "q", "jobs": "j"}
	seen := 0
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		seen++
		for _, name := range commonFlags {
			fl := c.Flags().Lookup(name)
			if fl == nil {
				t.Errorf("%s has no --%s", c.Name(), name)
				continue
			}
			if fl.Shorthand != short[name] {
				t.Errorf("%s --%s: shorthand %q, want %q", c.Name(), name, fl.Shorthand, short[name])
			}
		}
		_, errs, code := run(t, c.Name(), "--format", "nope", "x.sqlite")
		if code != cli.ExitInput || !strings.Contains(errs, `--format "nope": want table, `) {
			t.Errorf("%s --format nope: exit %d %q", c.Name(), code, errs)
		}
	}
	if seen != 7 {
		t.Errorf("%d commands, want 7", seen)
	}
	for _, name := range []string{"boundary", "verdict", "check"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil || cmd.Flags().Lookup("phases") == nil {
			t.Errorf("%s has no --phases", name)
		}
		_, errs, code := run(t, name, fixture.Get(t, "interleaved_graph").XZ)
		if code != cli.ExitInput || !strings.Contains(errs, "--phases is required: ") || strings.Contains(errs, "required flag") {
			t.Errorf("%s without --phases: exit %d %q", name, code, errs)
		}
	}
}

// TestEveryCommandFits runs every command on bundled exports with its
// default text output: no line wider than 120 columns, at most 6 warning
// lines (stderr, the Warnings section and warning lines of stdout), and the
// one arm of an export without arm ranges named.
func TestEveryCommandFits(t *testing.T) {
	t.Parallel()
	ig := fixture.Get(t, "interleaved_graph").XZ
	small := fixture.Get(t, "eager_graph_small").XZ
	var prof string
	for _, f := range fixture.Extra(t) {
		if f.Name == "profiler_step" {
			prof = f.XZ
		}
	}
	if prof == "" {
		t.Skip("profiler_step not found")
	}
	region := "action_apply,physics_step,scene_read_refresh,observation,reward"
	for _, args := range [][]string{
		{"info", small},
		{"ranges", small},
		{"inventory", ig},
		{"analyze", ig},
		{"analyze", small},
		{"analyze", prof},
		{"boundary", "--phases", region, ig},
		{"boundary", "--phases", "data,forward,backward,optimizer", prof},
		{"verdict", "--phases", region, ig},
		{"verdict", "--phases", "forward,backward", prof},
		{"check", "--phase", "collector_step", "--baseline", "eager", ig},
	} {
		if args[0] != "info" && args[0] != "ranges" && args[0] != "inventory" {
			args = append(args, "--resamples", "1999") // cheaper; the text is the same
		}
		out, errs, code := run(t, args...)
		if code != 0 && code != cli.ExitInconclusive && code != cli.ExitGate {
			t.Errorf("%v: exit %d %s", args, code, errs)
			continue
		}
		for _, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > 120 {
				t.Errorf("%v: %d columns: %s", args, n, l)
			}
		}
		if n := warningLineCount(out, errs); n > 6 {
			t.Errorf("%v: %d warning lines\n%s%s", args, n, out, errs)
		}
		if strings.Contains(out, "history of ,") || strings.Contains(out, ":  (") {
			t.Errorf("%v: a blank arm name\n%s", args, out)
		}
	}
}

// warningLineCount counts the lines of stderr, the lines under a
// "Warnings" heading of stdout and stdout's "warning" lines.
func warningLineCount(out, errs string) int {
	n := len(strings.FieldsFunc(errs, func(r rune) bool { return r == '\n' }))
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Warnings"):
			in = true
		case in && strings.TrimSpace(l) == "":
			in = false
		case in, strings.HasPrefix(strings.TrimSpace(l), "warning"):
			n++
		}
	}
	return n
}

// TestAnalyzeBeforeAfter: two profiles without arm ranges compare as they
// are, each an arm named after its file, within-run and labelled so; no
// pattern, no --arm. (The pattern here only hides the bundled exports'
// own arm ranges, to make them two plain profiles.)
func TestAnalyzeBeforeAfter(t *testing.T) {
	t.Parallel()
	before, after := fixture.Get(t, "sharing_null_1").XZ, fixture.Get(t, "sharing_mps_1").XZ
	out, errs, code := run(t, "analyze", "--arm-pattern", "^none(x)(y)$", "--step", "collector_step", "--resamples", "1999", before, after)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	for _, want := range []string{
		"arms: sharing_null_1 (baseline) 1 block × 179 steps; sharing_mps_1 1 block × 179 steps",
		"Within-run: mean wall per step against sharing_null_1",
		"collector_step          sharing_mps_1             3608.7  2624.2",
		"within-run: steps of one run per arm resampled in blocks",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestHTMLStepWall: the HTML report draws each arm's step wall over the
// run, blocks and warm-up marked.
func TestHTMLStepWall(t *testing.T) {
	t.Parallel()
	out, errs, code := run(t, "analyze", "--format", "html", "--no-stats", fixture.Get(t, "interleaved_graph").XZ)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	for _, want := range []string{`id="stepwall"`, "eager: wall of collector_step, 147 steps in 3 blocks, in run order; shaded: the first 1 step of each block",
		"graph: wall of collector_step, 147 steps in 3 blocks", ">block 3</text>", "<title>warm-up (left out)</title>"} {
		if !strings.Contains(out, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	if n := strings.Count(out, "<polyline "); n != 2 {
		t.Errorf("%d step wall lines, want 2 (one an arm)", n)
	}
	// 147 points a line: every kept step drawn.
	i := strings.Index(out, "<polyline ")
	if j := strings.Index(out[i:], "/>"); i < 0 || strings.Count(out[i:i+j], ",") != 147 {
		t.Errorf("the first line does not draw 147 steps")
	}
}
