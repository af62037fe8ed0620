package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// hostileText is a terminal attack: set the window title, ring the bell,
// clear the screen, a C1 CSI, a DEL.
const hostileText = "x\x1b]0;pwned\x07\x1b[2J\u009b31m\x7fy"

// TestTerminalGuard is issue 37's dead-guard regression: strings that do
// not come from an export's tables (a file name, a manifest value, a
// dataset's footer) reached the terminal raw once the control filter was
// no longer called. Every command's stdout and stderr now pass one guard
// (Main), whatever the format and whether the command succeeds or fails.
func TestTerminalGuard(t *testing.T) {
	dir := t.TempDir()
	src := fixture.Get(t, "eager_graph_small").SQLite(t)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(dir, "run"+hostileText+".sqlite")
	if err := os.WriteFile(named, data, 0o644); err != nil {
		t.Fatal(err)
	}
	armed := filepath.Join(dir, "armed.sqlite")
	if err := os.WriteFile(armed, data, 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := `{"schema": "collector-run-manifest/1", "variant": "` + jsonEscape(hostileText) + `"}`
	if err := os.WriteFile(filepath.Join(dir, "armed.manifest.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	dataset := filepath.Join(dir, "ds")
	if code, _, stderr := runMain(t, "analyze", "--no-stats", "--quiet", "--out", dataset, "--arm-key", "variant", armed); code != 0 {
		t.Fatalf("analyze --out: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"info", named},
		{"info", "--format", "json", named},
		{"ranges", named},
		{"ranges", "--format", "csv", named},
		{"inventory", named},
		{"info", filepath.Join(dir, "missing"+hostileText+".sqlite")},
		{"analyze", "--no-stats", "--arm-key", "variant", armed},
		{"analyze", "--no-stats", "--arm-key", "variant", "--format", "json", armed},
		{"check", "--phase", "collector_step", "--arm-key", "variant", armed},
		{"inventory", "--arm-key", "variant", armed},
		{"analyze", "--no-stats", "--from", dataset},
		{"analyze", "--no-stats", "--from", "--format", "markdown", dataset},
	} {
		_, stdout, stderr := runMain(t, args...)
		checkHostileOutput(t, "stdout of "+args[0]+" "+args[1], formatOf(args), []byte(stdout))
		checkHostileOutput(t, "stderr of "+args[0]+" "+args[1], "table", []byte(stderr))
	}
}

func jsonEscape(s string) string {
	var out []byte
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			out = append(out, []byte(`\u00`+string("0123456789abcdef"[r>>4])+string("0123456789abcdef"[r&15]))...)
			continue
		}
		out = append(out, string(r)...)
	}
	return string(out)
}

// TestMarkdownBaselineEscaped: analyze --format md wrote the baseline arm's
// name raw in the headline's sentence and in a <details> summary, so an
// arm named by a manifest could inject HTML or a link into a CI comment.
func TestMarkdownBaselineEscaped(t *testing.T) {
	dir := t.TempDir()
	const evil = "<img src=x onerror=alert(1)>[a](javascript:x)"
	var paths []string
	for name, arm := range map[string]string{"sharing_null_1": evil, "sharing_mps_1": "b"} {
		data, err := os.ReadFile(fixture.Get(t, name).SQLite(t))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".sqlite")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".manifest.json"), []byte(`{"variant": "`+arm+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	code, stdout, stderr := runMain(t, append([]string{"analyze", "--arm-key", "variant", "--baseline", evil, "--format", "md"}, paths...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "&lt;img") {
		t.Fatalf("the baseline arm is not in the report:\n%s", stdout)
	}
	checkHostileOutput(t, "analyze --format md", "markdown", []byte(stdout))
	for _, bad := range []string{"<img", "[a](javascript"} {
		if i := strings.Index(stdout, bad); i >= 0 {
			t.Errorf("raw %q in the Markdown report: %q", bad, stdout[max(i-80, 0):min(i+80, len(stdout))])
		}
	}
}
