package badgen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Case is one entry of testdata/bad/cases.json: an input and what every
// command must do with it.
type Case struct {
	Name string `json:"name"`
	// Input is "file:NAME" (committed under testdata/bad) or "gen:NAME"
	// (a Generator of this package).
	Input string `json:"input"`
	Doc   string `json:"doc"`
	// Expect holds for every command unless Commands overrides it.
	Expect Expect `json:"expect"`
	// Commands overrides Expect for a subcommand, by name ("analyze").
	Commands map[string]Expect `json:"commands,omitempty"`
}

// Expect is the outcome of one command on one input.
type Expect struct {
	// Exit is the exit status: 2 for unusable input, 0 for usable input.
	Exit int `json:"exit"`
	// Stderr lists substrings of the one stderr line of a failure (the
	// harness also checks that the line names the input's path).
	Stderr []string `json:"stderr,omitempty"`
	// Stdout lists substrings that a successful run prints.
	Stdout []string `json:"stdout,omitempty"`
	// Warnings lists substrings of warnings a successful run must report.
	Warnings []string `json:"warnings,omitempty"`
	// Clean says a successful run reports no warning at all.
	Clean bool `json:"clean,omitempty"`
}

// For returns the expectation for subcommand cmd.
func (c Case) For(cmd string) Expect {
	if e, ok := c.Commands[cmd]; ok {
		return e
	}
	return c.Expect
}

// Slow reports whether the case's input is a slow generator.
func (c Case) Slow() bool {
	name, ok := strings.CutPrefix(c.Input, "gen:")
	if !ok {
		return false
	}
	g, _ := Lookup(name)
	return g.Slow
}

// Corpus is the parsed cases.json.
type Corpus struct {
	Doc   string `json:"doc"`
	Cases []Case `json:"cases"`
}

// CorpusDir is testdata/bad under the repository root.
func CorpusDir(root string) string { return filepath.Join(root, "testdata", "bad") }

// LoadCases reads and checks cases.json in dir: names unique, every input
// resolvable, every failure explained.
func LoadCases(dir string) ([]Case, error) {
	data, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		return nil, fmt.Errorf("read corpus: %w", err)
	}
	var c Corpus
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("parse %s: %w", filepath.Join(dir, "cases.json"), err)
	}
	seen := map[string]bool{}
	for _, k := range c.Cases {
		if k.Name == "" || seen[k.Name] {
			return nil, fmt.Errorf("corpus: case name %q empty or repeated", k.Name)
		}
		seen[k.Name] = true
		kind, name, _ := strings.Cut(k.Input, ":")
		switch kind {
		case "file":
			if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("corpus case %s: %w", k.Name, err)
			}
		case "gen":
			if _, ok := Lookup(name); !ok {
				return nil, fmt.Errorf("corpus case %s: no generator %q", k.Name, name)
			}
		default:
			return nil, fmt.Errorf("corpus case %s: input %q is neither file:NAME nor gen:NAME", k.Name, k.Input)
		}
		for cmd, e := range mergeExpect(k) {
			if e.Exit != 0 && len(e.Stderr) == 0 {
				return nil, fmt.Errorf("corpus case %s (%s): a failure must list stderr substrings", k.Name, cmd)
			}
			if e.Exit == 0 && len(e.Stderr) > 0 {
				return nil, fmt.Errorf("corpus case %s (%s): a success prints nothing to stderr to match", k.Name, cmd)
			}
		}
	}
	return c.Cases, nil
}

func mergeExpect(k Case) map[string]Expect {
	out := map[string]Expect{"*": k.Expect}
	for cmd, e := range k.Commands {
		out[cmd] = e
	}
	return out
}

// Materialize puts the case's input into dir (its own, empty directory) and
// returns the path to pass to a command. Committed files are copied, so
// that nothing a command might write can land in testdata.
func Materialize(k Case, corpusDir, dir, base string) (string, error) {
	kind, name, _ := strings.Cut(k.Input, ":")
	if kind == "file" {
		p := filepath.Join(dir, filepath.Base(name))
		return p, copyFile(filepath.Join(corpusDir, name), p)
	}
	return Build(name, dir, base)
}
