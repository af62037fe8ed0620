package cli_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

const modulePath = "github.com/nsysphase/nsysphase"

// TestArchitectureImportTable checks the import table of
// docs/architecture.md against the code: every package of the tool (those
// cmd/nsysphase and the root package reach) has a row, and each row lists
// exactly the project packages its non-test files import. A new import
// that breaks the drawn layering, or a table left behind by a move, fails
// here.
func TestArchitectureImportTable(t *testing.T) {
	root := fixture.Root()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := importTableRows(t, string(doc))
	tool := reach(t, root, []string{"cmd/nsysphase", "."})
	for _, pkg := range tool {
		want, ok := rows[pkg]
		if !ok {
			t.Errorf("docs/architecture.md: no row for package %s", pkg)
			continue
		}
		if got := projectImports(t, root, pkg); !slices.Equal(got, want) {
			t.Errorf("docs/architecture.md: %s imports %v, the table says %v", pkg, got, want)
		}
	}
	for pkg := range rows {
		if !slices.Contains(tool, pkg) && !strings.HasSuffix(pkg, "/*") {
			t.Errorf("docs/architecture.md: row %s is not a package of the tool", pkg)
		}
	}
}

var (
	tableRow  = regexp.MustCompile(`^\| (.+?) \| (.+?) \|$`)
	codeSpan  = regexp.MustCompile("`([^`]+)`")
	braceList = regexp.MustCompile(`^(.*)/\{([^}]*)\}$`)
)

// importTableRows reads the table's rows: package → sorted imports
// (directories relative to the module, "." the root). A brace list
// (internal/base/{a,b}) names each package in it; a row of several
// packages gives each the same imports.
func importTableRows(t *testing.T, doc string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	in := false
	for line := range strings.SplitSeq(doc, "\n") {
		if strings.HasPrefix(line, "| package | imports") {
			in = true
			continue
		}
		if !in || strings.HasPrefix(line, "| ---") {
			continue
		}
		m := tableRow.FindStringSubmatch(line)
		if m == nil {
			break
		}
		imports := []string{}
		if !strings.Contains(m[2], "nothing of the project") {
			for _, c := range codeSpan.FindAllStringSubmatch(m[2], -1) {
				imports = append(imports, expandBraces(c[1])...)
			}
		}
		slices.Sort(imports)
		for _, c := range codeSpan.FindAllStringSubmatch(m[1], -1) {
			pkg := c[1]
			if pkg == "nsysphase" {
				pkg = "."
			}
			out[pkg] = imports
		}
	}
	if len(out) < 10 {
		t.Fatalf("docs/architecture.md: found %d rows of the import table", len(out))
	}
	return out
}

func expandBraces(s string) []string {
	m := braceList.FindStringSubmatch(s)
	if m == nil {
		return []string{s}
	}
	var out []string
	for p := range strings.SplitSeq(m[2], ",") {
		out = append(out, m[1]+"/"+strings.TrimSpace(p))
	}
	return out
}

// projectImports are the project packages the non-test files of the
// package in dir import, relative to the module, sorted.
func projectImports(t *testing.T, root, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p := strings.Trim(im.Path.Value, `"`)
			if rel, ok := strings.CutPrefix(p, modulePath+"/"); ok {
				seen[rel] = true
			}
		}
	}
	out := []string{}
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// reach is every project package the packages in dirs import, directly or
// not, with themselves, sorted; the leaves (internal/base/*) count under
// their row "internal/base/*".
func reach(t *testing.T, root string, dirs []string) []string {
	t.Helper()
	seen := map[string]bool{}
	var visit func(string)
	visit = func(d string) {
		if seen[d] {
			return
		}
		seen[d] = true
		for _, p := range projectImports(t, root, d) {
			visit(p)
		}
	}
	for _, d := range dirs {
		visit(d)
	}
	var out []string
	for d := range seen {
		if strings.HasPrefix(d, "internal/base/") {
			d = "internal/base/*"
			if slices.Contains(out, d) {
				continue
			}
		}
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}
