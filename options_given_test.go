package nsysphase_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nsysphase/nsysphase"
)

// TestExplicitDepthBeatsRules: a depth set with SetDepth is given, as
// --depth on the command line, so it wins over the rules file's depth even
// where it equals the default (1); left alone, the file's depth applies.
func TestExplicitDepthBeatsRules(t *testing.T) {
	ctx := context.Background()
	rules := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(rules, []byte("depth = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	phasesOf := func(o nsysphase.Options) []string {
		t.Helper()
		o.NoStats = true
		a, err := nsysphase.Analyze(ctx, []string{fixture}, o)
		if err != nil {
			t.Fatal(err)
		}
		return a.Phases()
	}
	plain := nsysphase.DefaultOptions()
	depth1 := phasesOf(plain)
	plain.Rules = rules
	fromFile := phasesOf(plain)
	if slices.Equal(fromFile, depth1) {
		t.Fatalf("the rules file's depth = 2 changed nothing: phases %q", fromFile)
	}
	explicit := nsysphase.DefaultOptions()
	explicit.Rules = rules
	explicit.SetDepth(1)
	if got := phasesOf(explicit); !slices.Equal(got, depth1) {
		t.Errorf("SetDepth(1) with a rules file holding depth = 2: phases %q, want the depth-1 phases %q", got, depth1)
	}
}
