package cli_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

func TestInventoryCLI(t *testing.T) {
	fx := fixture.Get(t, "interleaved_graph")
	out, errs, code := run(t, "inventory", "--format", "json", fx.XZ)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := []string{"arm", "phase", "kind", "api", "blocking", "calls", "per_step", "total_ns", "mean_ns", "bytes", "cadence", "disposition", "owner"}
	if len(doc.Items) != 14 {
		t.Fatalf("%d items, want 14", len(doc.Items))
	}
	for _, it := range doc.Items {
		for _, k := range want {
			if _, ok := it[k]; !ok {
				t.Fatalf("item lacks %q: %v", k, it)
			}
		}
		if it["frame"] != "none recorded" {
			t.Errorf("frame %v without backtraces", it["frame"])
		}
	}

	out, errs, code = run(t, "inventory", fx.XZ)
	if code != 0 || !strings.Contains(out, "backtraces: none recorded") || !strings.Contains(out, "collector_step/events") || !strings.Contains(out, "interval (1/25 steps)") {
		t.Fatalf("table: exit %d\n%s\n%s", code, out, errs)
	}
	out, _, code = run(t, "inventory", "--format", "csv", fx.XZ)
	if header, _, _ := strings.Cut(out, "\n"); code != 0 || !strings.HasPrefix(header, strings.Join(want, ",")) || strings.Count(out, "\n") != 15 {
		t.Errorf("csv: exit %d, header %q, %d lines", code, header, strings.Count(out, "\n"))
	}
	for _, args := range [][]string{{"inventory"}, {"inventory", "--format", "html", fx.XZ}, {"inventory", "--depth", "0", fx.XZ}, {"inventory", "no_such.sqlite"}} {
		if _, _, code := run(t, args...); code != cli.ExitInput {
			t.Errorf("%v: exit %d, want %d", args, code, cli.ExitInput)
		}
	}
}

// TestRegionCommandExamples runs every Example of inventory, boundary and
// verdict from the repository root: each must run (exit 0, 1 no-go or 3
// inconclusive; never a usage or input error).
func TestRegionCommandExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the examples on real exports")
	}
	t.Chdir(fixture.Root())
	root := cli.NewRootCmd()
	n := 0
	for _, c := range root.Commands() {
		if !slices.Contains([]string{"inventory", "boundary", "verdict"}, c.Name()) {
			continue
		}
		for _, line := range strings.Split(c.Example, "\n") {
			args := splitExample(t, strings.TrimSpace(line))
			if len(args) == 0 {
				continue
			}
			if args[0] != "nsysphase" {
				t.Fatalf("example %q does not start with nsysphase", line)
			}
			n++
			out, errs, code := run(t, args[1:]...)
			if code != 0 && code != cli.ExitGate && code != cli.ExitInconclusive {
				t.Errorf("%q: exit %d\n%s", line, code, errs)
			}
			if out == "" {
				t.Errorf("%q printed nothing", line)
			}
		}
	}
	if n < 6 {
		t.Errorf("ran %d examples", n)
	}
}

// splitExample splits an example line into words: single quotes keep a glob
// for nsysphase to expand, as a shell would pass it.
func splitExample(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	in, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case (r == '|' || r == '>') && !quoted:
			t.Fatalf("example %q pipes or redirects: keep examples runnable as they are", line)
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
