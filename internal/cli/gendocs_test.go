package cli_test

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

var update = flag.Bool("update", false, "rewrite the generated docs (docs/cli, docs/schema.md) and the golden files in testdata")

// TestGenDocs fails while docs/cli or docs/schema.md differ from what the
// command tree and the table definitions generate; -update rewrites them.
func TestGenDocs(t *testing.T) {
	t.Parallel()
	root := fixture.Root()
	cliDir, schema := filepath.Join(root, "docs", "cli"), filepath.Join(root, "docs", "schema.md")
	if *update {
		if err := cli.GenMarkdown(cli.NewRootCmd(), cliDir); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(schema, []byte(cli.SchemaMarkdown()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(t.TempDir(), "cli")
	if err := cli.GenMarkdown(cli.NewRootCmd(), tmp); err != nil {
		t.Fatal(err)
	}
	const hint = "; regenerate with: go test ./internal/cli -run TestGenDocs -update"
	want, _ := filepath.Glob(filepath.Join(tmp, "*.md"))
	have, _ := filepath.Glob(filepath.Join(cliDir, "*.md"))
	base := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = filepath.Base(p)
		}
		return out
	}
	if !slices.Equal(base(want), base(have)) {
		t.Errorf("docs/cli holds %v, the commands generate %v%s", base(have), base(want), hint)
	}
	for _, w := range want {
		got, err := os.ReadFile(filepath.Join(cliDir, filepath.Base(w)))
		exp, _ := os.ReadFile(w)
		if err == nil && string(got) != string(exp) {
			t.Errorf("docs/cli/%s is stale%s", filepath.Base(w), hint)
		}
	}
	got, err := os.ReadFile(schema)
	if err != nil || string(got) != cli.SchemaMarkdown() {
		t.Errorf("docs/schema.md is stale (%v)%s", err, hint)
	}
}

// TestSchemaDocumentsEveryColumn: every column has a meaning, and every
// nullable one says what its null means.
func TestSchemaDocumentsEveryColumn(t *testing.T) {
	t.Parallel()
	md := cli.SchemaMarkdown()
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, " | ")
		if len(cells) != 5 {
			if strings.Count(line, "|") >= 6 { // a column row
				t.Errorf("malformed schema row %q", line)
			}
			continue
		}
		if strings.TrimSpace(cells[3]) == "" {
			t.Errorf("column %s has no meaning: give it a Doc in its table definition or a note in gendocs_schema.go", cells[0])
		}
		if strings.TrimSpace(strings.TrimSuffix(cells[4], " |")) == "" {
			t.Errorf("nullable column %s does not say what null means", cells[0])
		}
	}
	for _, k := range cli.SchemaNoteKeys() {
		table, col, _ := strings.Cut(k, ".")
		if !strings.Contains(md, "\n## "+table+"\n") || !strings.Contains(md, "| `"+col+"` |") {
			t.Errorf("gendocs_schema.go has a note for %s, which no table has: remove it", k)
		}
	}
}

// TestEveryCommandHasExample: every command a user sees shows examples in
// its --help (cobra's own completion commands aside).
func TestEveryCommandHasExample(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			if !s.IsAvailableCommand() || s.Name() == "completion" || s.Name() == "help" {
				continue
			}
			if strings.TrimSpace(s.Example) == "" {
				t.Errorf("%s has no Example", s.CommandPath())
			}
			walk(s)
		}
	}
	walk(cli.NewRootCmd())
}

func TestCompletionVersionAndManPages(t *testing.T) {
	t.Parallel()
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		out, errs, code := run(t, "completion", sh)
		if code != 0 || !strings.Contains(out, "nsysphase") {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", sh, code, len(out), errs)
		}
	}
	out, _, code := run(t, "--version")
	if code != 0 || !strings.Contains(out, cli.Version()) {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	dir := t.TempDir()
	if _, errs, code := run(t, "gendocs", "--man", dir); code != 0 {
		t.Fatalf("gendocs --man: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "nsysphase-analyze.1")); err != nil {
		t.Error(err)
	}
	out, _, _ = run(t, "--help")
	if strings.Contains(out, "gendocs") {
		t.Error("gendocs is not hidden")
	}
	if !strings.Contains(out, "Exit status") {
		t.Error("--help does not document the exit status")
	}
}

// TestExitStatusTable: README.md, the guide and the generated reference
// show the one exit-status table root --help prints.
func TestExitStatusTable(t *testing.T) {
	t.Parallel()
	root := fixture.Root()
	for _, f := range []string{"README.md", "docs/guide.md", "docs/cli/README.md"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), cli.ExitStatusMarkdown()) {
			t.Errorf("%s lacks the exit-status table:\n%s", f, cli.ExitStatusMarkdown())
		}
	}
	var out bytes.Buffer
	if code := cli.Main([]string{"--help"}, &out, io.Discard); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	for _, want := range []string{"Exit status (every command):", "  0  success", "  1  a gate failed", "  2  unusable input", "  3  verdict only: inconclusive", "  130  stopped by SIGINT", "  143  stopped by SIGTERM"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("root --help lacks %q", want)
		}
	}
}
