package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestOutputAndQuietFlags: every command (analyze, check, info, inventory,
// ranges, verdict, boundary) takes -o FILE (the output goes there, stdout
// stays empty) and --quiet (nothing on stdout, the exit status unchanged).
func TestOutputAndQuietFlags(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small")
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"analyze", "--no-stats"}, 0},
		{[]string{"check", "--phase", "collector_step", "--resamples", "1999"}, 0},
		{[]string{"info"}, 0},
		{[]string{"inventory"}, 0},
		{[]string{"ranges"}, 0},
		{[]string{"verdict", "--phases", "physics_step", "--min-gain", "1%", "--resamples", "1999"}, 3}, // two blocks: no CI
		{[]string{"boundary", "--phases", "physics_step", "--resamples", "1999"}, 0},
	} {
		args := tc.args
		file := filepath.Join(dir, args[0]+".out")
		out, errs, code := run(t, append(append(args, "-o", file), fx.XZ)...)
		data, err := os.ReadFile(file)
		if code != tc.code || out != "" || err != nil || len(data) == 0 {
			t.Errorf("%s -o: exit %d, stdout %q, file %d bytes, %v %s", args[0], code, out, len(data), err, errs)
		}
		out, _, code = run(t, append(append(args, "--quiet"), fx.XZ)...)
		if code != tc.code || out != "" {
			t.Errorf("%s --quiet: exit %d, stdout %q", args[0], code, out)
		}
	}
	// -o naming the input is refused before any work.
	if _, errs, code := run(t, "info", "-o", fx.XZ, fx.XZ); code != 2 || !strings.Contains(errs, "-o") {
		t.Errorf("info -o INPUT: exit %d %s", code, errs)
	}
}

// TestInfoFormats: info has analyze's formats; the table formats give one
// row per export.
func TestInfoFormats(t *testing.T) {
	t.Parallel()
	a, b := fixture.Get(t, "eager_graph_small"), fixture.Get(t, "graph_whole")
	out, errs, code := run(t, "info", "--format", "csv", a.XZ, b.XZ)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "file,nsys_version,export_schema_version,gpu,") ||
		!strings.Contains(lines[1], "eager_graph_small") || !strings.Contains(lines[2], "NVIDIA H200") {
		t.Fatalf("csv: exit %d %s\n%s", code, errs, out)
	}
	for _, f := range []string{"markdown", "html"} {
		out, errs, code := run(t, "info", "--format", f, a.XZ)
		if code != 0 || !strings.Contains(out, "2025.3.2.0") {
			t.Errorf("%s: exit %d %s\n%s", f, code, errs, out)
		}
	}
	file := filepath.Join(t.TempDir(), "info.parquet")
	if _, errs, code := run(t, "info", "--format", "parquet", "-o", file, a.XZ); code != 0 {
		t.Errorf("parquet: exit %d %s", code, errs)
	}
	if data, err := os.ReadFile(file); err != nil || !strings.HasPrefix(string(data), "PAR1") {
		t.Errorf("parquet file: %v", err)
	}
}

// TestCheckPhasesAlias: --phases names the phases to gate, --phase is the
// same flag; each phase gets its rows.
func TestCheckPhasesAlias(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "interleaved_graph")
	a, _, codeA := run(t, "check", fx.XZ, "--baseline", "graph", "--phase", "collector_step", "--resamples", "1999", "--format", "json")
	b, _, codeB := run(t, "check", fx.XZ, "--baseline", "graph", "--phases", "collector_step", "--resamples", "1999", "--format", "json")
	if a != b || codeA != 1 || codeB != 1 {
		t.Fatalf("--phase and --phases differ: %d %d\n%s\n%s", codeA, codeB, a, b)
	}
	out, _, code := run(t, "check", fx.XZ, "--baseline", "graph", "--phases", "collector_step,metrics", "--resamples", "1999")
	if code != 1 || !strings.Contains(out, "collector_step / eager: ratio 2.103") || !strings.Contains(out, "metrics / eager:") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestRegionPhaseAlias: verdict and boundary take --phase as --phases.
func TestRegionPhaseAlias(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "eager_graph_small")
	a, _, ca := run(t, "boundary", "--phase", "physics_step", "--resamples", "1999", "--format", "json", fx.XZ)
	b, _, cb := run(t, "boundary", "--phases", "physics_step", "--resamples", "1999", "--format", "json", fx.XZ)
	if a != b || ca != 0 || cb != 0 {
		t.Fatalf("boundary --phase and --phases differ: exit %d %d", ca, cb)
	}
}

// TestVerdictUnnamedArm: an export without arm ranges has one arm, all;
// verdict's sentence calls it "the run", never an empty name.
func TestVerdictUnnamedArm(t *testing.T) {
	t.Parallel()
	fx := fixture.ExtraNamed(t, "profiler_step")
	out, errs, code := run(t, "verdict", "--phases", "forward", "--min-gain", "10%", "--resamples", "1999", fx.XZ)
	if code != 3 || !strings.Contains(out, "of the run's step wall") || !strings.Contains(out, "(no arm ranges: arm all, 39 steps") ||
		strings.Contains(out, " 's ") || strings.Contains(out, "(arm ,") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}
