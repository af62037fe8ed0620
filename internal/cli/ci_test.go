package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// ciWorkflow is the part of a GitHub Actions workflow the runner below reads.
type ciWorkflow struct {
	Jobs map[string]struct {
		Env   map[string]string `yaml:"env"`
		Steps []ciStep          `yaml:"steps"`
	} `yaml:"jobs"`
}

type ciStep struct {
	Name string            `yaml:"name"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
}

// ciWorkflowFromDoc is the first ```yaml block of docs/ci.md.
func ciWorkflowFromDoc(t *testing.T) ciWorkflow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixture.Root(), "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```yaml\n")
	block, _, ok2 := strings.Cut(rest, "```\n")
	if !ok || !ok2 {
		t.Fatal("docs/ci.md: no ```yaml block")
	}
	var wf ciWorkflow
	if err := yaml.Unmarshal([]byte(block), &wf); err != nil {
		t.Fatalf("docs/ci.md: %v", err)
	}
	if len(wf.Jobs) != 1 {
		t.Fatalf("docs/ci.md: want one job, got %d", len(wf.Jobs))
	}
	return wf
}

// Stand-ins for the tools of the runner that the test machine lacks.
const (
	ciFakeNsys = `#!/bin/sh
# nsys stand-in: profile records nothing; export writes $CI_EXPORT (and its manifest) to the -o file.
cmd=$1; shift
out=
while [ $# -gt 0 ]; do case "$1" in -o) out=$2; shift;; esac; shift; done
case "$cmd" in
profile) : > "$out.nsys-rep" ;;
export) cp "$CI_EXPORT" "$out"; cp "$CI_MANIFEST" "${out%.sqlite}.manifest.json" ;;
*) echo "nsys stand-in: $cmd" >&2; exit 2 ;;
esac
`
	ciFakeGh = `#!/bin/sh
# gh stand-in over the artifact store $CI_ARTIFACTS/RUN_ID/NAME and comments in $CI_COMMENTS.
case "$1 $2" in
"run list") ls -1 "$CI_ARTIFACTS" | sort -rn ;;
"run download")
  id=$3; shift 3; dir=; name=
  while [ $# -gt 0 ]; do case "$1" in --dir) dir=$2; shift;; --name) name=$2; shift;; esac; shift; done
  mkdir -p "$dir" && cp -R "$CI_ARTIFACTS/$id/$name/." "$dir/" ;;
"pr comment")
  num=$3; shift 3; body=
  while [ $# -gt 0 ]; do case "$1" in --body-file) body=$2; shift;; esac; shift; done
  cp "$body" "$CI_COMMENTS/$num.md" ;;
*) echo "gh stand-in: $*" >&2; exit 2 ;;
esac
`
	ciFakeGo = "#!/bin/sh\n# go stand-in: nsysphase is already on PATH\nexit 0\n"
)

// ciRun is one workflow run: its event and context.
type ciRun struct {
	id     string
	event  string // push or pull_request
	ref    string
	pr     string // pull request number
	export string // fixture the profile step "records"
}

var ciExpr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// TestCIWorkflow runs the workflow of docs/ci.md step by step with bash:
// a first pull request meets an empty history (inconclusive, passes, its
// comment posted), three pushes to main keep their datasets as artifacts,
// then a pull request restores them and is gated with check --history
// (docs/ci.md, "The workflow runs as a test").
func TestCIWorkflow(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	wf := ciWorkflowFromDoc(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, artifacts, comments := t.TempDir(), t.TempDir(), t.TempDir()
	for name, body := range map[string]string{
		"nsys": ciFakeNsys, "gh": ciFakeGh, "go": ciFakeGo,
		"nsysphase": "#!/bin/sh\n" + runMainEnv + "=1 exec '" + exe + "' \"$@\"\n",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runs := []ciRun{
		// The workflow's first pull request: no run of main kept yet, an
		// empty history, which passes as inconclusive with its comment.
		{id: "100", event: "pull_request", ref: "refs/pull/6/merge", pr: "6", export: "sharing_mps_2"},
		{id: "101", event: "push", ref: "refs/heads/main", export: "sharing_null_1"},
		{id: "102", event: "push", ref: "refs/heads/main", export: "sharing_null_2"},
		{id: "103", event: "push", ref: "refs/heads/main", export: "sharing_mps_1"},
		{id: "104", event: "pull_request", ref: "refs/pull/7/merge", pr: "7", export: "sharing_mps_2"},
	}
	for _, r := range runs {
		fx := fixture.Get(t, r.export)
		ctx := map[string]string{"github.event_name": r.event, "github.ref": r.ref, "github.token": "token", "github.event.pull_request.number": r.pr}
		env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "CI=true",
			"CI_EXPORT="+fx.SQLite(t), "CI_MANIFEST="+fx.Manifest, "CI_ARTIFACTS="+artifacts, "CI_COMMENTS="+comments)
		work := t.TempDir()
		for _, job := range wf.Jobs {
			for k, v := range job.Env {
				env = append(env, k+"="+ciSubst(t, v, ctx))
			}
			failed := false
			for _, st := range job.Steps {
				if !ciIf(t, st.If, ctx, failed) {
					continue
				}
				switch {
				case strings.HasPrefix(st.Uses, "actions/checkout@"), strings.HasPrefix(st.Uses, "actions/setup-go@"):
				case strings.HasPrefix(st.Uses, "actions/upload-artifact@"):
					dst := filepath.Join(artifacts, r.id, st.With["name"])
					if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
						t.Fatal(err)
					}
					if out, err := exec.Command("cp", "-R", filepath.Join(work, st.With["path"]), dst).CombinedOutput(); err != nil {
						t.Fatalf("run %s, %s: %v %s", r.id, st.Name, err, out)
					}
				case st.Uses != "":
					t.Fatalf("step %q uses %s, which the test does not emulate", st.Name, st.Uses)
				default:
					cmd := exec.Command(bash, "--noprofile", "--norc", "-eo", "pipefail", "-c", ciSubst(t, st.Run, ctx))
					cmd.Dir, cmd.Env = work, env
					out, err := cmd.CombinedOutput()
					if err != nil {
						t.Errorf("run %s (%s), step %q: %v\n%s", r.id, r.event, st.Name, err, out)
						failed = true
					}
				}
			}
		}
		if r.pr == "7" {
			hist, _ := filepath.Glob(filepath.Join(work, "history", "*", "phase_instances*"))
			if len(hist) != 3 {
				t.Errorf("pull request: %d history datasets restored, want 3", len(hist))
			}
		}
	}
	first, err := os.ReadFile(filepath.Join(comments, "6.md"))
	if err != nil {
		t.Fatalf("no comment on the first pull request (empty history): %v", err)
	}
	if c := string(first); !strings.Contains(c, "**nsysphase check — PASS: median wall_ns of collector_step vs the history of eager") ||
		!strings.Contains(c, "| eager |") || !strings.Contains(c, "inconclusive") || !strings.Contains(c, "no history run yet (history/* found no dataset)") {
		t.Errorf("first pull request's comment:\n%s", c)
	}
	comment, err := os.ReadFile(filepath.Join(comments, "7.md"))
	if err != nil {
		t.Fatalf("no comment on the pull request: %v", err)
	}
	c := string(comment)
	if !strings.Contains(c, "**nsysphase check — PASS: median wall_ns of collector_step vs the history of eager") ||
		!strings.Contains(c, "| eager |") || !strings.Contains(c, "3 history runs") {
		t.Errorf("comment:\n%s", c)
	}
}

// ciSubst replaces ${{ expr }} with its value in ctx.
func ciSubst(t *testing.T, s string, ctx map[string]string) string {
	return ciExpr.ReplaceAllStringFunc(s, func(m string) string {
		k := ciExpr.FindStringSubmatch(m)[1]
		v, ok := ctx[k]
		if !ok {
			t.Fatalf("unknown expression %s", m)
		}
		return v
	})
}

// ciIf evaluates a step's if: terms joined by &&, each always(),
// success() or NAME == 'value'. Without always(), a step after a failed
// one is skipped, as on the runner.
func ciIf(t *testing.T, cond string, ctx map[string]string, failed bool) bool {
	always := false
	ok := true
	for _, term := range strings.Split(cond, "&&") {
		term = strings.TrimSpace(term)
		switch {
		case term == "":
		case term == "always()":
			always = true
		case term == "success()":
			ok = ok && !failed
		case strings.Contains(term, "=="):
			k, v, _ := strings.Cut(term, "==")
			k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), "'")
			val, known := ctx[k]
			if !known {
				t.Fatalf("if: unknown %s", k)
			}
			ok = ok && val == v
		default:
			t.Fatalf("if: cannot evaluate %q", term)
		}
	}
	return ok && (always || !failed)
}
