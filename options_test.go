package nsysphase_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase"
	"github.com/nsysphase/nsysphase/internal/analysis"
)

// TestOptionsOneWayIn: the Go API checks its options with the same bounds
// as the command line (one Validate), and merges a rules file the same way:
// the file's skip_steps applies where the option is at its default, and is
// the value the document reports.
func TestOptionsOneWayIn(t *testing.T) {
	in := fixture // the bundled eager/graph export (example_test.go)
	for name, mod := range map[string]func(*nsysphase.Options){
		"confidence above 0.999": func(o *nsysphase.Options) { o.Confidence = 0.9995 },
		"depth above 100":        func(o *nsysphase.Options) { o.Depth = 101 },
		"resamples below 1999":   func(o *nsysphase.Options) { o.Resamples = 1000 },
		"arm pattern no group":   func(o *nsysphase.Options) { o.ArmPattern = "^arm" },
	} {
		o := nsysphase.DefaultOptions()
		mod(&o)
		_, err := nsysphase.Analyze(context.Background(), []string{in}, o)
		var ue *analysis.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: error %v, want a usage error", name, err)
		}
	}
	rules := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(rules, []byte("skip_steps = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := nsysphase.DefaultOptions()
	o.Rules, o.NoStats = rules, true
	a, err := nsysphase.Analyze(context.Background(), []string{in}, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Settings().SkipSteps; got != 3 {
		t.Errorf("skip steps %d with a rules file holding skip_steps = 3, want 3", got)
	}
	o.SkipSteps = 0 // given: wins over the file
	if a, err = nsysphase.Analyze(context.Background(), []string{in}, o); err != nil || a.Settings().SkipSteps != 0 || a.Excluded().SkippedSteps != 0 {
		t.Errorf("skip steps 0 given: %v, settings %d, skipped %d", err, a.Settings().SkipSteps, a.Excluded().SkippedSteps)
	}
	// The dataset paths check the options before reading anything.
	bad := nsysphase.DefaultOptions()
	bad.Confidence = 0.9995
	var ue *analysis.UsageError
	if _, err := nsysphase.AnalyzeDatasets(context.Background(), []string{t.TempDir()}, bad); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--confidence") {
		t.Errorf("AnalyzeDatasets, confidence 0.9995: error %v, want a usage error", err)
	}
	if _, err := a.CompareWithHistory(context.Background(), []string{t.TempDir()}, bad); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--confidence") {
		t.Errorf("CompareWithHistory, confidence 0.9995: error %v, want a usage error", err)
	}
}

// TestAnalyzeDatasetsWarmupGiven: AnalyzeDatasets re-cuts the warm-up only
// where SkipSteps is given, as --skip-steps with --from: a dataset written
// with skip_steps 0 keeps it under DefaultOptions, and SetSkipSteps(1)
// re-cuts to 1 although 1 is the default.
func TestAnalyzeDatasetsWarmupGiven(t *testing.T) {
	ctx := context.Background()
	o := nsysphase.DefaultOptions()
	o.SkipSteps, o.NoStats = 0, true
	a, err := nsysphase.Analyze(ctx, []string{fixture}, o)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := a.WriteDataset(dir); err != nil {
		t.Fatal(err)
	}
	skipOf := func(o nsysphase.Options) int {
		t.Helper()
		o.NoStats = true
		b, err := nsysphase.AnalyzeDatasets(ctx, []string{dir}, o)
		if err != nil {
			t.Fatal(err)
		}
		return b.Settings().SkipSteps
	}
	if got := skipOf(nsysphase.DefaultOptions()); got != 0 {
		t.Errorf("not given: skip steps %d, want the dataset's 0", got)
	}
	given := nsysphase.DefaultOptions()
	given.SetSkipSteps(1)
	if got := skipOf(given); got != 1 {
		t.Errorf("SetSkipSteps(1): skip steps %d, want 1", got)
	}
}
