package cli_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/internal/cli"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// docCommand is one `$ nsysphase …` line of the documentation.
type docCommand struct {
	file string // relative to the repository root
	line int
	text string // after "$ "
	want int    // expected exit status (# exit N), default 0
}

var exitComment = regexp.MustCompile(`#\s*exit\s+(\d+)\s*$`)

// docCommands collects the `$ nsysphase …` lines of README.md and docs/**/*.md
// (generated reference pages under docs/cli show examples without "$ " and
// are not run). A line ending in a backslash continues on the next.
func docCommands(t *testing.T, root string) []docCommand {
	t.Helper()
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var out []docCommand
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		rel, _ := filepath.Rel(root, path)
		sc := bufio.NewScanner(bytes.NewReader(data))
		n := 0
		var cont *docCommand
		for sc.Scan() {
			n++
			line := strings.TrimSpace(sc.Text())
			if cont != nil {
				cont.text += " " + strings.TrimSuffix(line, `\`)
				if !strings.HasSuffix(line, `\`) {
					out = append(out, *cont)
					cont = nil
				}
				continue
			}
			if !strings.HasPrefix(line, "$ nsysphase ") && line != "$ nsysphase" {
				continue
			}
			c := docCommand{file: rel, line: n, text: strings.TrimPrefix(line, "$ ")}
			if strings.HasSuffix(line, `\`) {
				c.text = strings.TrimSuffix(c.text, `\`)
				cont = &c
				continue
			}
			out = append(out, c)
		}
		if cont != nil {
			out = append(out, *cont)
		}
	}
	for i := range out {
		if m := exitComment.FindStringSubmatch(out[i].text); m != nil {
			out[i].want, _ = strconv.Atoi(m[1])
		}
	}
	return out
}

// shellWords splits a command line as a POSIX shell would for the simple
// commands the docs show: quotes, backslashes, globs (unquoted, expanded
// against the working directory, kept literally when nothing matches),
// "# comment" and one "> FILE" redirection of stdout. A pipe ends the
// command: what follows it is another program.
func shellWords(line string) (args []string, stdout string, err error) {
	var words []string
	var cur strings.Builder
	inWord, glob := false, false
	var globs []bool
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			globs = append(globs, glob)
		}
		cur.Reset()
		inWord, glob = false, false
	}
	rs := []rune(line)
loop:
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			break loop
		case c == '|':
			break loop
		case c == '\'':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				cur.WriteRune(rs[j])
				j++
			}
			if j == len(rs) {
				return nil, "", fmt.Errorf("unterminated ' in %q", line)
			}
			i = j
		case c == '"':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '"' {
				if rs[j] == '\\' && j+1 < len(rs) {
					j++
				}
				cur.WriteRune(rs[j])
				j++
			}
			if j == len(rs) {
				return nil, "", fmt.Errorf("unterminated \" in %q", line)
			}
			i = j
		case c == '\\' && i+1 < len(rs):
			inWord = true
			i++
			cur.WriteRune(rs[i])
		default:
			if c == '*' || c == '?' || c == '[' {
				glob = true
			}
			inWord = true
			cur.WriteRune(c)
		}
	}
	flush()
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == ">" || w == "1>" {
			if i+1 >= len(words) {
				return nil, "", fmt.Errorf("> without a file in %q", line)
			}
			stdout = words[i+1]
			i++
			continue
		}
		if strings.HasPrefix(w, ">") && !globs[i] {
			stdout = strings.TrimPrefix(w, ">")
			continue
		}
		if globs[i] {
			if m, err := filepath.Glob(w); err == nil && len(m) > 0 {
				slices.Sort(m)
				args = append(args, m...)
				continue
			}
		}
		args = append(args, w)
	}
	return args, stdout, nil
}

func TestShellWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, out string
		args    []string
	}{
		{in: `nsysphase analyze a.sqlite`, args: []string{"nsysphase", "analyze", "a.sqlite"}},
		{in: `nsysphase analyze --arm mps='runs/mps_*.sqlite' x   # exit 1`, args: []string{"nsysphase", "analyze", "--arm", "mps=runs/mps_*.sqlite", "x"}},
		{in: `nsysphase analyze --format json a > out.json`, out: "out.json", args: []string{"nsysphase", "analyze", "--format", "json", "a"}},
		{in: `nsysphase info "a b" | jq .x`, args: []string{"nsysphase", "info", "a b"}},
		{in: `nsysphase x no_such_*.glob`, args: []string{"nsysphase", "x", "no_such_*.glob"}},
	} {
		args, out, err := shellWords(tc.in)
		if err != nil || !slices.Equal(args, tc.args) || out != tc.out {
			t.Errorf("%q: %q > %q, %v; want %q > %q", tc.in, args, out, err, tc.args, tc.out)
		}
	}
}

// TestDocCommands runs every `$ nsysphase …` line of the documentation
// through cli.Main and checks its exit status: 0, or the one a trailing
// "# exit N" states. Each document's lines run in order in one scratch
// directory that links the repository's testdata, docs and scripts, so
// relative paths work as from the repository root, later lines can read what
// earlier ones wrote, and nothing is written into the repository.
func TestDocCommands(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the documentation's commands on real exports")
	}
	root := fixture.Root()
	cmds := docCommands(t, root)
	if len(cmds) == 0 {
		t.Fatal("no `$ nsysphase` line in README.md or docs/")
	}
	byFile := map[string][]docCommand{}
	var files []string
	for _, c := range cmds {
		if _, ok := byFile[c.file]; !ok {
			files = append(files, c.file)
		}
		byFile[c.file] = append(byFile[c.file], c)
	}
	for _, file := range files {
		t.Run(strings.ReplaceAll(file, "/", "_"), func(t *testing.T) {
			t.Parallel()
			runDocCommands(t, root, byFile[file])
		})
	}
}

// runDocCommands runs cmds in order in one scratch directory that links the
// repository's testdata, docs and scripts, so relative paths work as from
// the repository root, later lines can read what earlier ones wrote, and
// nothing is written into the repository. They run as one batch
// (runBatch), with CI=true as in CI (no progress bar), so that each
// document's scratch directory is its own working directory.
func runDocCommands(t *testing.T, root string, cmds []docCommand) {
	dir := t.TempDir()
	for _, name := range []string{"testdata", "docs", "scripts", "README.md"} {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			if err := os.Symlink(filepath.Join(root, name), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var lines []batchLine
	var run []docCommand
	for _, c := range cmds {
		if _, _, err := shellWords(c.text); err != nil {
			t.Errorf("%s:%d: %v", c.file, c.line, err)
			continue
		}
		// The child splits the line when it comes to it: globs expand in
		// the scratch directory, after the lines before have written it.
		lines = append(lines, batchLine{Shell: c.text})
		run = append(run, c)
	}
	for i, r := range runBatch(t, dir, []string{"CI=true"}, lines) {
		c := run[i]
		if r.Code != c.want {
			msg := string(r.Stderr)
			if len(msg) > 2000 {
				msg = msg[:2000] + "…"
			}
			t.Errorf("%s:%d: `%s` exited %d, the doc says %d\nstderr: %s", c.file, c.line, c.text, r.Code, c.want, msg)
			continue
		}
		if r.Err != "" {
			t.Errorf("%s:%d: %s", c.file, c.line, r.Err)
		}
	}
}

// TestHelpExamples runs every example of every command's --help, as
// TestDocCommands runs the documentation's: the paths exist, the flags
// parse, the exit status is 0 or the "# exit N" the example states.
func TestHelpExamples(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the --help examples on real exports")
	}
	root := fixture.Root()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var cmds []docCommand
		for i, line := range strings.Split(c.Example, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "nsysphase ") {
				continue
			}
			d := docCommand{file: c.CommandPath() + " --help", line: i + 1, text: line}
			if m := exitComment.FindStringSubmatch(line); m != nil {
				d.want, _ = strconv.Atoi(m[1])
			}
			cmds = append(cmds, d)
		}
		if len(cmds) > 0 {
			t.Run(strings.ReplaceAll(c.CommandPath(), " ", "_"), func(t *testing.T) {
				t.Parallel()
				runDocCommands(t, root, cmds)
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cli.NewRootCmd())
}
