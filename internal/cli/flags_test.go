package cli_test

import (
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// execute runs cmd on args without its pipeline (runF stands in).
func execute(t *testing.T, cmd *cobra.Command, args ...string) error {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.Execute()
}

// TestFlagsLandInOptions checks that each command's flags reach its options,
// parsed, without reading any input.
func TestFlagsLandInOptions(t *testing.T) {
	t.Parallel()
	var a *cli.AnalyzeOptions
	if err := execute(t, cli.NewCmdAnalyze(func(o *cli.AnalyzeOptions) error { a = o; return nil }),
		"--step", "train", "--depth", "2", "--skip-steps", "3", "--arm", "x=a*.sqlite", "--baseline", "x", "--seed", "7",
		"--wide", "--warnings", "--format", "md", "r1.sqlite", "r2.sqlite"); err != nil {
		t.Fatal(err)
	}
	if a.Step != "train" || a.Depth != 2 || a.SkipSteps != 3 || !slices.Equal(a.FileArms, []analysis.FileArm{{Name: "x", Glob: "a*.sqlite"}}) || a.Baseline != "x" ||
		a.Seed != 7 || !a.Wide || !a.AllWarnings || a.Format != "markdown" || !slices.Equal(a.Files, []string{"r1.sqlite", "r2.sqlite"}) {
		t.Errorf("analyze options: %+v", a)
	}

	var c *cli.CheckOptions
	if err := execute(t, cli.NewCmdCheck(func(o *cli.CheckOptions) error { c = o; return nil }),
		"--phase", "step", "--max-regression", "5%", "--stat", "median", "r.sqlite"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Phases, []string{"step"}) || c.Limit != 0.05 || c.Stat != "median" || c.Metric != "wall_ns" || c.Format != "table" {
		t.Errorf("check options: %+v", c)
	}
	for _, lim := range []string{"0.05", "5%", " 5 % "} {
		c = nil
		if err := execute(t, cli.NewCmdCheck(func(o *cli.CheckOptions) error { c = o; return nil }), "--phase", "s", "--max-regression", lim, "r.sqlite"); err != nil {
			t.Errorf("--max-regression %q: %v", lim, err)
		} else if c.Limit < 0.0499999 || c.Limit > 0.0500001 {
			t.Errorf("--max-regression %q: limit %v, want 0.05", lim, c.Limit)
		}
	}

	var v *cli.VerdictOptions
	if err := execute(t, cli.NewCmdVerdict(func(o *cli.VerdictOptions) error { v = o; return nil }),
		"--phases", "a,b", "--min-gain", "10%", "--format", "json", "r.sqlite"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.Phases, []string{"a", "b"}) || v.MinGain != 0.1 || v.Format != "json" {
		t.Errorf("verdict options: %+v", v)
	}

	var b *cli.BoundaryOptions
	if err := execute(t, cli.NewCmdBoundary(func(o *cli.BoundaryOptions) error { b = o; return nil }),
		"--phases", "x", "--confidence", "0.9", "r.sqlite"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Phases, []string{"x"}) || b.Confidence != 0.9 || b.Resamples != 9999 {
		t.Errorf("boundary options: %+v", b)
	}

	var inv *cli.InventoryOptions
	if err := execute(t, cli.NewCmdInventory(func(o *cli.InventoryOptions) error { inv = o; return nil }), "--format", "csv", "r.sqlite"); err != nil {
		t.Fatal(err)
	}
	if inv.SkipSteps != 0 || inv.Format != "csv" {
		t.Errorf("inventory options: %+v (want --skip-steps 0 by default)", inv)
	}

	var in *cli.InfoOptions
	if err := execute(t, cli.NewCmdInfo(func(o *cli.InfoOptions) error { in = o; return nil }), "--top", "3", "r.sqlite"); err != nil {
		t.Fatal(err)
	}
	if in.Top != 3 || in.Format != "table" {
		t.Errorf("info options: %+v", in)
	}
}

// TestFlagsAreTheOptions: the flags are the analysis options' own fields,
// with analysis.DefaultOptions' values where not given, and an option is
// given exactly when its flag is (flag.Changed), whatever the value:
// --depth 1 is given although 1 is the default.
func TestFlagsAreTheOptions(t *testing.T) {
	t.Parallel()
	var a *cli.AnalyzeOptions
	if err := execute(t, cli.NewCmdAnalyze(func(o *cli.AnalyzeOptions) error { a = o; return nil }), "--depth", "1", "--no-stats", "r.sqlite"); err != nil {
		t.Fatal(err)
	}
	want := analysis.DefaultOptions()
	want.Files, want.NoStats = []string{"r.sqlite"}, true
	want.SetGiven("depth", "no-stats")
	if !reflect.DeepEqual(a.Options, want) {
		t.Errorf("analyze --depth 1 --no-stats: options %+v, want %+v", a.Options, want)
	}
	if !a.Given("depth") || a.Given("skip-steps") || a.Given("confidence") {
		t.Errorf("given: depth %v, skip-steps %v, confidence %v; want only depth", a.Given("depth"), a.Given("skip-steps"), a.Given("confidence"))
	}
	var inv *cli.InventoryOptions
	if err := execute(t, cli.NewCmdInventory(func(o *cli.InventoryOptions) error { inv = o; return nil }), "r.sqlite"); err != nil {
		t.Fatal(err)
	}
	if inv.SkipSteps != 0 || inv.Given("skip-steps") {
		t.Errorf("inventory: skip steps %d given %v, want its census default 0, not given", inv.SkipSteps, inv.Given("skip-steps"))
	}
}

// TestFlagsNotRegistered checks that commands refuse flags they do not use
// (they once listed analyze's flags through an embedded options struct).
func TestFlagsNotRegistered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd  *cobra.Command
		args []string
	}{
		{cli.NewCmdCheck(func(*cli.CheckOptions) error { return nil }), []string{"--phase", "s", "--out", "d", "r.sqlite"}},
		{cli.NewCmdVerdict(func(*cli.VerdictOptions) error { return nil }), []string{"--phases", "s", "--min-gain", "5%", "--quantiles", "r.sqlite"}},
		{cli.NewCmdBoundary(func(*cli.BoundaryOptions) error { return nil }), []string{"--phases", "s", "--no-stats", "r.sqlite"}},
		{cli.NewCmdInventory(func(*cli.InventoryOptions) error { return nil }), []string{"--baseline", "x", "r.sqlite"}},
	} {
		if err := execute(t, tc.cmd, tc.args...); err == nil {
			t.Errorf("%s %v: accepted a flag it does not register", tc.cmd.Name(), tc.args)
		}
	}
}

// TestLimitsParsedOneWay: a bare number of 1 or more is a usage error (exit
// 2) for --max-regression and --min-gain; "5" once meant 500%.
func TestLimitsParsedOneWay(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"check", "--phase", "s", "--max-regression", "5", "r.sqlite"},
		{"check", "--phase", "s", "--max-regression", "1", "r.sqlite"},
		{"check", "--phase", "s", "--max-regression", "-1%", "r.sqlite"},
		{"check", "--phase", "s", "--max-regression", "five", "r.sqlite"},
		{"verdict", "--phases", "s", "--min-gain", "10", "r.sqlite"},
		{"verdict", "--phases", "s", "--min-gain", "100%", "r.sqlite"},
	} {
		if code := cli.Main(args, io.Discard, io.Discard); code != cli.ExitInput {
			t.Errorf("%v: exit %d, want %d", args, code, cli.ExitInput)
		}
	}
}

// TestOutRefusesNonEmpty: a second analysis into the same --out once
// replaced the first silently; it now needs --overwrite.
func TestOutRefusesNonEmpty(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small")
	dir := filepath.Join(t.TempDir(), "out")
	if _, errs, code := run(t, "analyze", "--quiet", "--no-stats", "--out", dir, fx.XZ); code != 0 {
		t.Fatalf("first write: exit %d: %s", code, errs)
	}
	_, errs, code := run(t, "analyze", "--quiet", "--no-stats", "--out", dir, fx.XZ)
	if code != cli.ExitInput || !strings.Contains(errs, "--overwrite") {
		t.Fatalf("second write without --overwrite: exit %d: %s", code, errs)
	}
	if _, errs, code := run(t, "analyze", "--quiet", "--no-stats", "--overwrite", "--out", dir, fx.XZ); code != 0 {
		t.Fatalf("--overwrite: exit %d: %s", code, errs)
	}
	if _, _, code := run(t, "inventory", "--overwrite", fx.XZ); code != cli.ExitInput {
		t.Errorf("--overwrite without --out: exit %d, want 2", code)
	}
}

// TestAnalyzeNoArmRanges: without arm ranges the context says so, instead
// of the old "arms  (baseline )".
func TestAnalyzeNoArmRanges(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "sharing_mps_1")
	out, errs, code := run(t, "analyze", "--step", "collector_step", "--arm-pattern", "^none(x)(y)$", "--resamples", "1999", fx.XZ)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.SplitN(out, "\n", 3)
	if !strings.HasPrefix(lines[0], "step collector_step (named by --step or --config)") ||
		!strings.HasPrefix(lines[1], "no arm ranges (one arm, all): 1 block, 179 steps") || strings.Contains(out, "(baseline )") {
		t.Errorf("context lines:\n%s", out)
	}
}
