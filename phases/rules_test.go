package phases_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/phases"
)

const rulesTOML = `
step = "collector_step"
phases = ["physics", "reward"]
skip_steps = 2

[[rename]]
pattern = '^physics_step$'
replace = 'physics'
`

const rulesYAML = `
step: collector_step
phases: [physics, reward]
skip_steps: 2
rename:
  - pattern: '^physics_step$'
    replace: physics
`

// TestRulesFile: a rules file names the step, renames a range and selects
// phases; TOML and YAML mean the same.
func TestRulesFile(t *testing.T) {
	for _, c := range []struct{ ext, text string }{{".toml", rulesTOML}, {".yaml", rulesYAML}} {
		r, err := phases.ParseRules([]byte(c.text), c.ext)
		if err != nil {
			t.Fatalf("%s: %v", c.ext, err)
		}
		res := segment(t, "interleaved_graph", phases.Options{Rules: r})
		got := map[string]bool{}
		skipped := 0
		for _, x := range res.Instances {
			if x.Phase == phases.Unannotated {
				continue
			}
			if !x.IsStep {
				got[x.Phase] = true
			} else if x.Warmup {
				skipped++
			}
		}
		names := make([]string, 0, len(got))
		for n := range got {
			names = append(names, n)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"physics", "reward"}) {
			t.Errorf("%s: phases %v, want [physics reward]", c.ext, names)
		}
		if skipped != 12 { // 2 per block, 6 blocks
			t.Errorf("%s: %d skipped steps, want 12", c.ext, skipped)
		}
	}
}

func TestRulesFileErrors(t *testing.T) {
	for _, c := range []struct{ ext, text, want string }{
		{".toml", "stepp = 'x'", "stepp"},
		{".yaml", "stepp: x", "stepp"},
		{".toml", "[[rename]]\npattern = '('", "rename[0]"},
		{".toml", "depth = -1", "depth"},
		{".json", "{}", "unknown format"},
	} {
		_, err := phases.ParseRules([]byte(c.text), c.ext)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: error %v, want one naming %q", c.ext, c.text, err, c.want)
		}
	}
}

// FuzzParseRules: any bytes give rules or an error, never a panic; rules
// that parse can rename any name.
func FuzzParseRules(f *testing.F) {
	f.Add([]byte(rulesTOML), true)
	f.Add([]byte(rulesYAML), false)
	f.Add([]byte("[[rename]]\npattern = 'a(b)'\nreplace = '$1$2'\ndrop = false"), true)
	f.Fuzz(func(t *testing.T, data []byte, toml bool) {
		ext := ".yaml"
		if toml {
			ext = ".toml"
		}
		r, err := phases.ParseRules(data, ext)
		if err != nil {
			return
		}
		_ = r.Step
	})
}
