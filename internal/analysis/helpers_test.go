package analysis

import (
	"context"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// statsOptions are the default options with 1999 resamples (the fewest
// Validate accepts: quick tests) and skip warm-up steps.
func statsOptions(skip int) Options {
	o := DefaultOptions()
	o.Resamples, o.SkipSteps = MinResamples, skip
	return o
}

// pointOptions are the default options without statistics, skip warm-up
// steps.
func pointOptions(skip int) Options {
	o := DefaultOptions()
	o.NoStats, o.SkipSteps = true, skip
	return o
}

// analyseFixture analyses the bundled export name with the options o.
func analyseFixture(t *testing.T, name string, o Options) *Doc {
	t.Helper()
	o.Files = []string{fixture.Get(t, name).XZ}
	return analyseFiles(t, o)
}

// analyseFiles analyses o.Files with the options o.
func analyseFiles(t *testing.T, o Options) *Doc {
	t.Helper()
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	files, err := ReadFiles(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(context.Background(), files, o, "test")
	if err != nil {
		t.Fatal(err)
	}
	return d
}
