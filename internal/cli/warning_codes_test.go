package cli_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// TestWarningCodesDocumented: docs/schema.md calls its warning codes a
// closed set, so every code the tool can emit (a string constant named
// Warn… in any package of the tool) must be listed there; twelve codes of
// the ranks, history and sampling views once were not.
func TestWarningCodesDocumented(t *testing.T) {
	root := fixture.Root()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	if i := strings.Index(section, "## Warning codes"); i >= 0 {
		section = section[i:]
		if j := strings.Index(section[3:], "\n## "); j >= 0 {
			section = section[:j+3]
		}
	} else {
		t.Fatal("docs/schema.md: no Warning codes section")
	}
	codes := warningCodes(t, root)
	if len(codes) < 50 {
		t.Fatalf("found %d warning codes in the code", len(codes))
	}
	for code, where := range codes {
		if !strings.Contains(section, "`"+code+"`") {
			t.Errorf("warning code %q (%s) is not in docs/schema.md's Warning codes", code, where)
		}
	}
}

// warningCodes are the values of the string constants named Warn… in the
// non-test files of the tool's packages, with where each is declared.
func warningCodes(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "scripts") && path != root {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Warn") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						rel, _ := filepath.Rel(root, path)
						out[v] = rel + ": " + id.Name
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
