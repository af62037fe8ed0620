package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestExplicitDepthBeatsRules: --depth 1 given on the command line wins
// over a rules file's depth = 2 although 1 is the default (the flag is
// given, whatever its value); without the flag the file's depth applies.
func TestExplicitDepthBeatsRules(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small").SQLite(t)
	rules := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(rules, []byte("depth = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	phasesOf := func(extra ...string) []string {
		t.Helper()
		args := append(append([]string{"analyze", "--no-stats", "--format", "json"}, extra...), fx)
		code, stdout, stderr := runMain(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		var doc struct {
			Phases []string `json:"phases"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Phases
	}
	depth1 := phasesOf()
	if fromFile := phasesOf("--config", rules); slices.Equal(fromFile, depth1) || len(fromFile) == 0 {
		t.Fatalf("the rules file's depth = 2 changed nothing: phases %q", fromFile)
	}
	if got := phasesOf("--config", rules, "--depth", "1"); !slices.Equal(got, depth1) {
		t.Errorf("--depth 1 with a rules file holding depth = 2: phases %q, want the depth-1 phases %q", got, depth1)
	}
}
