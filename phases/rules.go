package phases

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// Rules is a rules file (--config, TOML or YAML): it names the step and the
// phases, renames or groups ranges by regex, and selects processes or threads.
//
//	step = "collector_step"
//	phases = ["physics_step", "reward"]   # only these (default: every child)
//	depth = 1
//	arm_pattern = '^arm=(\S+)(?:\s+block=(\d+))?'
//	skip_steps = 1
//	processes = ["python3"]               # process names or pids
//	threads = ["python3"]                 # thread names
//	[[rename]]
//	pattern = 'seq = \d+, op_id = \d+'    # e.g. PyTorch emit_nvtx ids
//	replace = ''
//	[[rename]]
//	pattern = '^aten::'
//	drop = true                           # leave these ranges out entirely
type Rules struct {
	Step       string       `toml:"step" yaml:"step"`
	Phases     []string     `toml:"phases" yaml:"phases"`
	Depth      int          `toml:"depth" yaml:"depth"`
	ArmPattern string       `toml:"arm_pattern" yaml:"arm_pattern"`
	SkipSteps  *int         `toml:"skip_steps" yaml:"skip_steps"`
	Processes  []string     `toml:"processes" yaml:"processes"`
	Threads    []string     `toml:"threads" yaml:"threads"`
	Rename     []RenameRule `toml:"rename" yaml:"rename"`

	armRe *regexp.Regexp
}

// RenameRule rewrites range names matching Pattern (Go regexp syntax) with
// Replace ($1 expands groups), or drops them.
type RenameRule struct {
	Pattern string `toml:"pattern" yaml:"pattern"`
	Replace string `toml:"replace" yaml:"replace"`
	Drop    bool   `toml:"drop" yaml:"drop"`

	re *regexp.Regexp
}

// LoadRules reads a rules file; the format follows the extension (.toml,
// .yaml, .yml). Unknown keys are errors: a typo must not silently change
// the analysis.
func LoadRules(path string) (*Rules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read rules file: %w", err)
	}
	return ParseRules(data, filepath.Ext(path))
}

// ParseRules parses rules in the format named by ext (".toml", ".yaml", ".yml").
func ParseRules(data []byte, ext string) (*Rules, error) {
	r := &Rules{}
	switch strings.ToLower(ext) {
	case ".toml":
		dec := toml.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(r); err != nil {
			// Name the unknown keys and their lines: a typo must be obvious.
			var strict *toml.StrictMissingError
			if errors.As(err, &strict) {
				var keys []string
				for _, e := range strict.Errors {
					row, _ := e.Position()
					keys = append(keys, fmt.Sprintf("%s (line %d)", strings.Join(e.Key(), "."), row))
				}
				return nil, fmt.Errorf("rules file: unknown key %s", strings.Join(keys, ", "))
			}
			var de *toml.DecodeError
			if errors.As(err, &de) {
				row, col := de.Position()
				return nil, fmt.Errorf("rules file: line %d column %d: %w", row, col, err)
			}
			return nil, fmt.Errorf("rules file: %w", err)
		}
	case ".yaml", ".yml":
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(r); err != nil && err.Error() != "EOF" {
			return nil, fmt.Errorf("rules file: %w", err)
		}
	default:
		return nil, fmt.Errorf("rules file: unknown format %q (want .toml, .yaml or .yml)", ext)
	}
	if err := r.compile(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Rules) compile() error {
	for i := range r.Rename {
		re, err := regexp.Compile(r.Rename[i].Pattern)
		if err != nil {
			return fmt.Errorf("rules file: rename[%d] pattern: %w", i, err)
		}
		r.Rename[i].re = re
	}
	if r.ArmPattern != "" {
		re, err := regexp.Compile(r.ArmPattern)
		if err != nil {
			return fmt.Errorf("rules file: arm_pattern: %w", err)
		}
		r.armRe = re
	}
	if r.Depth < 0 {
		return fmt.Errorf("rules file: depth %d: want ≥ 1", r.Depth)
	}
	if r.SkipSteps != nil && *r.SkipSteps < 0 {
		return fmt.Errorf("rules file: skip_steps %d: want ≥ 0", *r.SkipSteps)
	}
	return nil
}

// WithoutOptions returns a copy of r without the values that are options
// too (depth, arm_pattern, skip_steps), for a caller that merged them into
// its Options itself: the command line merges flags and rules once, so the
// value it prints is the value used.
func (r *Rules) WithoutOptions() *Rules {
	c := *r
	c.Depth, c.ArmPattern, c.armRe, c.SkipSteps = 0, "", nil, nil
	return &c
}

// apply lets the rules fill options the command line left at their defaults.
func (r *Rules) apply(opt Options) Options {
	if opt.Step == "" {
		opt.Step = r.Step
	}
	if r.Depth > 0 && opt.Depth <= 1 {
		opt.Depth = r.Depth
	}
	if r.armRe != nil {
		opt.ArmPattern = r.armRe
	}
	if r.SkipSteps != nil && opt.SkipSteps == 0 {
		opt.SkipSteps = *r.SkipSteps
	}
	return opt
}

// rename applies the rename rules in order; keep is false for dropped ranges.
func (r *Rules) rename(name string) (string, bool) {
	for _, rr := range r.Rename {
		if rr.re == nil || !rr.re.MatchString(name) {
			continue
		}
		if rr.Drop {
			return "", false
		}
		name = strings.TrimSpace(rr.re.ReplaceAllString(name, rr.Replace))
	}
	return name, true
}

// isPhase reports whether a phase name is selected.
func (r *Rules) isPhase(name string) bool {
	return len(r.Phases) == 0 || slices.Contains(r.Phases, name)
}

// selectThread reports whether a range of this process/thread is analysed.
func (r *Rules) selectThread(pid int64, thread, process string) bool {
	if len(r.Processes) > 0 && !slices.Contains(r.Processes, process) && !slices.Contains(r.Processes, fmt.Sprint(pid)) {
		return false
	}
	if len(r.Threads) > 0 && !slices.Contains(r.Threads, thread) {
		return false
	}
	return true
}
