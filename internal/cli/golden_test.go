package cli_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// goldenExport is a bundled export the goldens run on, with the arguments
// each command needs on it (phases and baselines it has).
type goldenExport struct {
	name, path string
	check      []string // check's arguments besides the file
	region     string   // boundary's and verdict's --phases
}

// goldenTestdata is the bundled testdata relative to this package's
// directory (where go test runs): an absolute path would make the width of
// a table's file column depend on where the repository is checked out.
var goldenTestdata = filepath.Join("..", "..", "testdata")

// goldenExports are two bundled exports: two arms with one block each
// (interleaved_graph), and two ranks with two blocks per arm and NCCL
// collectives (dist_allreduce_2gpu), so that the rank renderers run too.
func goldenExports() []goldenExport {
	return []goldenExport{
		{
			name:   "interleaved_graph",
			path:   filepath.Join(goldenTestdata, fixture.Set, "interleaved_graph.sqlite.xz"),
			check:  []string{"--baseline", "eager", "--phase", "collector_step", "--max-regression", "5%"},
			region: "action_apply,physics_step,scene_read_refresh,observation,reward",
		},
		{
			name:   "dist_allreduce_2gpu",
			path:   filepath.Join(goldenTestdata, fixture.Set+"-extra", "dist_allreduce_2gpu.sqlite.xz"),
			check:  []string{"--baseline", "sync", "--phase", "step", "--max-regression", "5%"},
			region: "forward,allreduce,optimizer",
		},
	}
}

// goldenCommand is one command line rendered in every text format its
// command offers (Parquet and Arrow are binary: export's own goldens cover
// their writers). A variant is a flag that changes a renderer (--wide).
type goldenCommand struct {
	name    string   // golden file stem: the command, then its variant
	args    []string // after the export's path
	formats []string
}

func goldenCommands(x goldenExport) []goldenCommand {
	return []goldenCommand{
		{"info", []string{"info"}, []string{"table", "markdown", "json", "csv", "html"}},
		{"ranges", []string{"ranges"}, []string{"table", "markdown", "json", "csv"}},
		{"analyze", []string{"analyze"}, []string{"table", "markdown", "json", "csv", "html"}},
		{"analyze_wide", []string{"analyze", "--wide"}, []string{"table"}},
		{"analyze_warnings", []string{"analyze", "--warnings"}, []string{"table", "markdown"}},
		{"analyze_within_run", []string{"analyze", "--within-run"}, []string{"table", "markdown", "html"}},
		{"check", append([]string{"check"}, x.check...), []string{"table", "markdown", "json"}},
		{"inventory", []string{"inventory"}, []string{"table", "markdown", "json", "csv"}},
		{"boundary", []string{"boundary", "--phases", x.region}, []string{"table", "markdown", "json", "csv"}},
		{"verdict", []string{"verdict", "--phases", x.region, "--min-gain", "10%"}, []string{"table", "markdown", "json", "csv"}},
	}
}

// goldenExt is the file extension of a format's golden file.
var goldenExt = map[string]string{"table": "txt", "markdown": "md", "json": "json", "csv": "csv", "html": "html"}

// TestGolden runs every command in every text format on two bundled
// exports and compares what it prints with testdata/golden/EXPORT/: a
// refactor that changes a byte of any rendering fails here. After a change
// meant to alter the output, regenerate the files with `make golden` (go
// test ./internal/cli -run TestGolden -update) and review their diff.
//
// Each command line's exit status and standard error are golden too
// (COMMAND.stderr), the same for every format. Only what differs between
// checkouts and builds is normalised: the export's path (its name stays)
// and the tool's version.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, x := range goldenExports() {
		for _, c := range goldenCommands(x) {
			t.Run(x.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				outs := make([]string, len(c.formats))
				errs := make([]string, len(c.formats))
				var wg sync.WaitGroup
				for i, f := range c.formats {
					wg.Go(func() {
						args := append(append([]string{}, c.args...), "--format", f, x.path)
						out, stderr, code := run(t, args...)
						outs[i] = normaliseGolden(out, x)
						errs[i] = fmt.Sprintf("exit %d\n%s", code, normaliseGolden(stderr, x))
					})
				}
				wg.Wait()
				dir := filepath.Join("golden", x.name)
				for i, f := range c.formats {
					golden(t, filepath.Join(dir, c.name+"."+goldenExt[f]), outs[i])
					if errs[i] != errs[0] {
						t.Errorf("%s --format %s: exit status and stderr differ from --format %s's:\n%s\nagainst\n%s", c.name, f, c.formats[0], errs[i], errs[0])
					}
				}
				golden(t, filepath.Join(dir, c.name+".stderr"), errs[0])
			})
		}
	}
}

// normaliseGolden replaces what differs between checkouts and builds: the
// export's absolute path becomes its file name, and the tool's version
// (in reports and in the JSON document's tool) VERSION.
func normaliseGolden(s string, x goldenExport) string {
	s = strings.ReplaceAll(s, x.path, filepath.Base(x.path))
	s = strings.ReplaceAll(s, `"version": "`+cli.Version()+`"`, `"version": "VERSION"`)
	return strings.ReplaceAll(s, "nsysphase "+cli.Version(), "nsysphase VERSION")
}
