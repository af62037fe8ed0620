package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

func TestInventoryCLI(t *testing.T) {
	t.Parallel()
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

	out, errs, code = run(t, "inventory", "--wide", fx.XZ)
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
