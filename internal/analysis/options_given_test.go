package analysis

import (
	"testing"

	"github.com/nsysphase/nsysphase/phases"
)

// TestMergeRulesGiven: an option given explicitly wins over the rules file
// even at its default value; one not given takes the file's. The given set
// is not shared between copies of the options.
func TestMergeRulesGiven(t *testing.T) {
	skip := 3
	rules := &phases.Rules{Depth: 2, SkipSteps: &skip, ArmPattern: `^run_(\w+)$`}
	def := DefaultOptions()

	o := DefaultOptions()
	o.MergeRules(rules, "rules.toml")
	if o.Depth != 2 || o.SkipSteps != 3 || o.ArmPattern != rules.ArmPattern {
		t.Errorf("nothing given: depth %d, skip %d, pattern %q; want the file's 2, 3, %q", o.Depth, o.SkipSteps, o.ArmPattern, rules.ArmPattern)
	}

	g := DefaultOptions()
	g.SetGiven("depth", "skip-steps", "arm-pattern")
	copied := g
	copied.SetGiven("step")
	if g.Given("step") {
		t.Error("SetGiven on a copy marked the original")
	}
	g.MergeRules(rules, "rules.toml")
	if g.Depth != def.Depth || g.SkipSteps != def.SkipSteps || g.ArmPattern != def.ArmPattern {
		t.Errorf("all given at their defaults: depth %d, skip %d, pattern %q; want %d, %d, %q", g.Depth, g.SkipSteps, g.ArmPattern, def.Depth, def.SkipSteps, def.ArmPattern)
	}
	if g.RulesFile != "rules.toml" || g.Rules == nil {
		t.Errorf("rules not kept: %q %v", g.RulesFile, g.Rules)
	}
}
