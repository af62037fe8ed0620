package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newCmdGenDocs builds the hidden `nsysphase gendocs`, which writes the
// reference documentation generated from the command tree and the table
// definitions. The committed docs/cli and docs/schema.md are checked against
// it by tests, so they cannot drift.
func newCmdGenDocs() *cobra.Command {
	var mdDir, manDir, schema string
	cmd := &cobra.Command{
		Use:    "gendocs",
		Short:  "Write the Markdown and man-page reference of every command and the table schema",
		Hidden: true,
		Long: `gendocs writes one Markdown page per command (--markdown DIR), man pages (--man DIR) and the
schema of every output table (--schema FILE). Maintainers run it after changing a command or a
table; go test ./internal/cli fails while the committed copies are stale.`,
		Example: `  nsysphase gendocs --markdown reference --schema reference/schema.md
  nsysphase gendocs --man man1   # then: man -l man1/nsysphase-analyze.1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if mdDir == "" && manDir == "" && schema == "" {
				return usageErr("gendocs: pass --markdown DIR, --man DIR and/or --schema FILE")
			}
			root := cmd.Root()
			if mdDir != "" {
				if err := GenMarkdown(root, mdDir); err != nil {
					return err
				}
			}
			if manDir != "" {
				if err := GenMan(root, manDir); err != nil {
					return err
				}
			}
			if schema != "" {
				if err := writeFileAtomic(schema, func(w io.Writer) error { _, err := io.WriteString(w, SchemaMarkdown()); return err }); err != nil {
					return fmt.Errorf("write %s: %w", schema, err)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&mdDir, "markdown", "", "directory for the Markdown reference (one page per command)")
	cmd.Flags().StringVar(&manDir, "man", "", "directory for man pages (section 1)")
	cmd.Flags().StringVar(&schema, "schema", "", "file for the table schema (Markdown)")
	return cmd
}

// prepareDocs adds what cobra adds only when a command line runs (help and
// completion commands, --version), so generated docs are the same from a test
// and from the binary.
func prepareDocs(root *cobra.Command) {
	root.DisableAutoGenTag = true
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	for _, c := range root.Commands() {
		c.DisableAutoGenTag = true
	}
}

// GenMarkdown writes the Markdown reference of root's command tree to dir,
// replacing the previous pages (a removed command's page goes too).
func GenMarkdown(root *cobra.Command, dir string) error {
	prepareDocs(root)
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), ".gendocs-")
	if err != nil {
		return fmt.Errorf("gendocs: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := doc.GenMarkdownTree(root, tmp); err != nil {
		return fmt.Errorf("gendocs: markdown: %w", err)
	}
	if err := writeIndex(root, filepath.Join(tmp, "README.md")); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("gendocs: %w", err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	fresh, _ := filepath.Glob(filepath.Join(tmp, "*.md"))
	keep := map[string]bool{}
	for _, f := range fresh {
		keep[filepath.Base(f)] = true
		if err := os.Rename(f, filepath.Join(dir, filepath.Base(f))); err != nil {
			return fmt.Errorf("gendocs: %w", err)
		}
	}
	for _, f := range old {
		if !keep[filepath.Base(f)] {
			if err := os.Remove(f); err != nil {
				return fmt.Errorf("gendocs: %w", err)
			}
		}
	}
	return nil
}

// writeIndex writes the table of contents of the reference.
func writeIndex(root *cobra.Command, path string) error {
	var b strings.Builder
	b.WriteString("# nsysphase command reference\n\n")
	b.WriteString("Generated from the command definitions by `nsysphase gendocs --markdown docs/cli`; do not edit.\n")
	b.WriteString("Regenerate with `go test ./internal/cli -run TestGenDocs -update`.\n\n")
	b.WriteString("| command | what it does |\n|---|---|\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != root {
			return
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
		fmt.Fprintf(&b, "| [`%s`](%s) | %s |\n", c.CommandPath(), name, c.Short)
		subs := slices.Clone(c.Commands())
		slices.SortFunc(subs, func(a, b *cobra.Command) int { return strings.Compare(a.Name(), b.Name()) })
		for _, s := range subs {
			walk(s)
		}
	}
	walk(root)
	b.WriteString("\nExit status of every command:\n\n" + ExitStatusMarkdown())
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// GenMan writes man pages (section 1) of root's command tree to dir.
func GenMan(root *cobra.Command, dir string) error {
	prepareDocs(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("gendocs: %w", err)
	}
	hdr := &doc.GenManHeader{Title: "NSYSPHASE", Section: "1", Source: "nsysphase " + Version(), Manual: "nsysphase manual"}
	if err := doc.GenManTree(root, hdr, dir); err != nil {
		return fmt.Errorf("gendocs: man: %w", err)
	}
	return nil
}
