package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// hostileBase are the arguments that make each command run to completion on
// the fixture, so that a hostile value of one flag is the only thing wrong.
// A command not listed gets the fixture alone.
func hostileBase(fx string) map[string][]string {
	return map[string][]string{
		"nsysphase analyze":  {"--resamples", "1999", fx},
		"nsysphase boundary": {"--phases", "graph_replay", "--resamples", "1999", fx},
		"nsysphase verdict":  {"--phases", "graph_replay", "--min-gain", "10%", "--resamples", "1999", fx},
		"nsysphase check":    {"--phase", "collector_step", "--resamples", "1999", fx},
		"nsysphase gendocs":  {},
		"nsysphase help":     {},
	}
}

// hostileValues are the values each flag is given, by pflag type.
func hostileValues(typ, fifo, dir string) []string {
	numbers := []string{"-1", "0", "9223372036854775807", "-9223372036854775808", "18446744073709551616",
		"NaN", "Inf", "-Inf", "1e308", "", strings.Repeat("9", 400)}
	switch typ {
	case "int", "int64", "uint64", "uint", "float64", "count":
		return numbers
	case "bool":
		return []string{"maybe", "", "2", "-1"}
	}
	// Strings, string arrays and slices: paths, patterns and numbers alike.
	vals := []string{"", strings.Repeat("x", 10000), "^arm=", "(", "a\x00b", "-1", "NaN", "=", dir}
	if fifo != "" {
		vals = append(vals, fifo)
	}
	return vals
}

// allowedExits are the statuses of the exit-status table a run may end
// with (no signal is sent here).
var allowedExits = []int{cli.ExitOK, cli.ExitGate, cli.ExitInput, cli.ExitInconclusive}

// TestEveryFlagHostile gives every flag of every command (walked from the
// command tree, so a new flag is covered without editing this test) hostile
// values on a small real export: huge, negative and non-numbers, NaN, empty
// and very long strings, a regexp without capture group, a FIFO and a
// directory as paths. No run may panic; each ends with a status of the
// exit-status table; an exit 2 prints exactly one line that is not a
// warning.
//
// Each command's runs are one batch (runBatch) in a directory of its own,
// where relative paths that flags write (-o "-1") land, with its own FIFO
// and directory: the commands run beside each other and other tests.
func TestEveryFlagHostile(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	base := hostileBase(fx)

	root := cli.NewRootCmd()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var cmds []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() {
			cmds = append(cmds, c)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if len(cmds) < 8 {
		t.Fatalf("walked %d commands: the tree was not built", len(cmds))
	}
	var runs atomic.Int64
	t.Cleanup(func() { t.Logf("%d commands, %d runs", len(cmds), runs.Load()) })
	for _, c := range cmds {
		path := c.CommandPath()
		words := strings.Fields(path)[1:]
		args, ok := base[path]
		if !ok {
			args = []string{fx}
		}
		var flags []*pflag.Flag
		c.Flags().VisitAll(func(f *pflag.Flag) { flags = append(flags, f) })
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) { flags = append(flags, f) })
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			dir := filepath.Join(work, "adir")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			fifo := makeFIFO(t, filepath.Join(work, "fifo"))
			var lines []batchLine
			var names []string
			for _, f := range flags {
				if f.Name == "help" || f.Name == "version" {
					continue // they print and exit 0 whatever comes with them
				}
				for _, v := range hostileValues(f.Value.Type(), fifo, dir) {
					line := append(slices.Clone(words), "--"+f.Name+"="+v)
					lines = append(lines, batchLine{Args: append(line, args...)})
					names = append(names, path+" --"+f.Name+"="+shorten(v))
				}
			}
			for i, r := range runBatch(t, work, nil, lines) {
				checkHostile(t, names[i], r.Code, string(r.Stderr))
			}
			runs.Add(int64(len(lines)))
		})
	}
}

func checkHostile(t *testing.T, name string, code int, stderr string) {
	t.Helper()
	for _, s := range []string{"internal error", "panic", "goroutine "} {
		if strings.Contains(stderr, s) {
			t.Errorf("%s: a panic reached cli.Main:\n%.2000s", name, stderr)
			return
		}
	}
	if !slices.Contains(allowedExits, code) {
		t.Errorf("%s: exit %d is not in the exit-status table; stderr: %.500s", name, code, stderr)
	}
	if code != cli.ExitInput {
		return
	}
	_, others := splitWarnings(stderr)
	if len(others) != 1 || !strings.HasPrefix(others[0], "nsysphase: ") {
		t.Errorf("%s: exit 2 must print one line \"nsysphase: …\" besides warnings, got %d: %.500q", name, len(others), others)
	}
}

func shorten(v string) string {
	if len(v) > 20 {
		return v[:8] + "…(" + strconv.Itoa(len(v)) + " bytes)"
	}
	return strings.ReplaceAll(v, "\x00", `\0`)
}

// TestArmPatternNeedsGroup is issue 16 case 6: an arm pattern without a
// capture group, on the command line or in a rules file, panicked in analyze,
// inventory, verdict and check and was an "internal error" in boundary. It
// is a usage error now, named before any input is read.
func TestArmPatternNeedsGroup(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	rules := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(rules, []byte("arm_pattern = '^arm='\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := hostileBase(fx)
	for _, cmd := range []string{"analyze", "inventory", "verdict", "check", "boundary"} {
		for _, how := range [][]string{{"--arm-pattern", "^arm="}, {"--config", rules}} {
			args := append([]string{cmd}, how...)
			args = append(args, base["nsysphase "+cmd]...)
			if len(base["nsysphase "+cmd]) == 0 {
				args = append(args, fx)
			}
			var stdout, stderr bytes.Buffer
			code := cli.Main(args, &stdout, &stderr)
			if code != cli.ExitInput || !strings.Contains(stderr.String(), "has no capture group") || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line saying the pattern has no capture group", strings.Join(args, " "), code, stderr.String())
			}
		}
	}
}

// TestStatsFlagsBounded is issue 16 case 6: --resamples had no upper bound
// (2^62 panicked, 1e8 ran out of memory, MaxInt64 exited 0 echoing a B it did
// not use). Every value outside the documented bounds is exit 2 before any
// input is read (the input here does not exist); the bounds themselves pass.
func TestStatsFlagsBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag, value string
		ok          bool
	}{
		{"--resamples", "4611686018427387904", false}, // 2^62
		{"--resamples", "100000000", false},
		{"--resamples", "9223372036854775807", false},
		{"--resamples", "1998", false},
		{"--resamples", "1000001", false},
		{"--resamples", "1000000", true},
		{"--resamples", "1999", true},
		{"--confidence", "0.9999", false},
		{"--confidence", "NaN", false},
		{"--confidence", "0.5", false},
		{"--confidence", "0.999", true},
		{"--jobs", "-1", false},
		{"--jobs", "1025", false},
		{"--jobs", "1024", true},
		{"--depth", "101", false},
		{"--depth", "0", false},
		{"--depth", "100", true},
		{"--skip-steps", "1000001", false},
		{"--skip-steps", "-1", false},
	} {
		var got *cli.AnalyzeOptions
		cmd := cli.NewCmdAnalyze(func(o *cli.AnalyzeOptions) error { got = o; return nil })
		err := execute(t, cmd, tc.flag, tc.value, "no_such.sqlite")
		if tc.ok != (err == nil) {
			t.Errorf("analyze %s %s: error %v, want ok=%v", tc.flag, tc.value, err, tc.ok)
		}
		if !tc.ok && got != nil {
			t.Errorf("analyze %s %s: the command ran", tc.flag, tc.value)
		}
	}
	var stderr bytes.Buffer
	if code := cli.Main([]string{"info", "--top", "-1", "no_such.sqlite"}, &bytes.Buffer{}, &stderr); code != cli.ExitInput || !strings.Contains(stderr.String(), "--top -1") {
		t.Errorf("info --top -1: exit %d, %q", code, stderr.String())
	}
}
