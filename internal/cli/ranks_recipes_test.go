package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// docFiles are docs/ranks.md's code blocks that follow a
// `<!-- file: NAME -->` line, by NAME.
func docFiles(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixture.Root(), "docs", "ranks.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- file: ([^ ]+) -->\n```[a-z]*\n(.*?)```\n")
	out := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = m[2]
	}
	for _, name := range []string{"map.sbatch", "reduce.sbatch", "submit.sh", "map-job.yaml", "reduce-job.yaml"} {
		if out[name] == "" {
			t.Fatalf("docs/ranks.md: no block for %s", name)
		}
	}
	return out
}

// rankExports writes n per-rank copies of a bundled single-rank export
// (no traced communication) into dir as rank<i>.sqlite, each recording
// RANK=i; the last rank's session starts 2 ms later (a straggler).
func rankExports(t *testing.T, dir string, n int) []string {
	t.Helper()
	data, err := os.ReadFile(fixture.Get(t, "eager_graph_small").SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := range n {
		dst := filepath.Join(dir, fmt.Sprintf("rank%d.sqlite", i))
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
		conn, err := sqlite.OpenConn(dst, sqlite.OpenReadWrite)
		if err != nil {
			t.Fatal(err)
		}
		shift := 0
		if i == n-1 {
			shift = 2_000_000
		}
		err = sqlitex.ExecuteScript(conn, fmt.Sprintf(`INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', 'RANK="%d"');
UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + %d;`, i, shift), nil)
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, dst)
	}
	return out
}

// ranksMember is the `ranks` member of an analyze JSON document, as bytes.
func ranksMember(t *testing.T, doc []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("%v: %.300s", err, doc)
	}
	if len(m["ranks"]) == 0 || string(m["ranks"]) == "null" {
		t.Fatalf("no rank view: %.300s", doc)
	}
	return string(m["ranks"])
}

// directRanks is the rank view of the exports analysed together.
func directRanks(t *testing.T, exports []string) string {
	t.Helper()
	out, stderr, code := run(t, append([]string{"analyze", "--format", "json"}, exports...)...)
	if code != 0 {
		t.Fatalf("analyze the exports: exit %d: %s", code, stderr)
	}
	return ranksMember(t, []byte(out))
}

// sbatchStandIn runs a batch script at once, an array's tasks in turn with
// SLURM_ARRAY_TASK_ID set (the command line's --array over the script's),
// logs its arguments to $SBATCH_LOG and prints the job id (--parsable).
const sbatchStandIn = `#!/bin/bash
set -euo pipefail
array=; script=
for a in "$@"; do
  case "$a" in
    --array=*) array=${a#--array=} ;;
    --parsable|--export=ALL|--dependency=afterok:*) ;;
    -*) echo "sbatch stand-in: unknown option $a" >&2; exit 2 ;;
    *) script=$a ;;
  esac
done
[ -n "$array" ] || array=$(sed -n 's/^#SBATCH --array=//p' "$script")
array=${array%%\%*}
echo "$*" >> "$SBATCH_LOG"
id=$((1000 + $(wc -l < "$SBATCH_LOG")))
if [ -n "$array" ]; then
  for i in $(seq "${array%-*}" "${array#*-}"); do SLURM_JOB_ID=$id SLURM_ARRAY_TASK_ID=$i bash "$script" >&2; done
else
  SLURM_JOB_ID=$id bash "$script" >&2
fi
echo "$id"
`

// TestRanksSlurmRecipe runs docs/ranks.md's submit.sh with a stand-in for
// sbatch over 4 per-rank exports: the array maps each to a dataset, the
// reduce (submitted after the array) builds the rank view from them, equal
// byte for byte to the exports analysed together.
func TestRanksSlurmRecipe(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	files := docFiles(t)
	work, bin, root := t.TempDir(), t.TempDir(), t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"sbatch": sbatchStandIn, "nsysphase": "#!/bin/sh\n" + runMainEnv + "=1 exec '" + exe + "' \"$@\"\n"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"map.sbatch", "reduce.sbatch", "submit.sh"} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(files[name]), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exportsDir := filepath.Join(root, "exports")
	if err := os.Mkdir(exportsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	exports := rankExports(t, exportsDir, 4)
	log := filepath.Join(root, "sbatch.log")
	cmd := exec.Command(bash, "submit.sh")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NRANKS=4", "SBATCH_LOG="+log,
		"EXPORTS="+exportsDir, "DATASETS="+filepath.Join(root, "datasets"), "REPORTS="+filepath.Join(root, "reports"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("submit.sh: %v\n%s", err, out)
	}
	calls, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "--array=0-3%64 map.sbatch") || !strings.Contains(lines[1], "--dependency=afterok:1001 reduce.sbatch") {
		t.Errorf("sbatch calls:\n%s", calls)
	}
	got, err := os.ReadFile(filepath.Join(root, "reports", "ranks.json"))
	if err != nil {
		t.Fatal(err)
	}
	if g, w := ranksMember(t, got), directRanks(t, exports); g != w {
		t.Errorf("reduce over the datasets:\n%.600s\nexports together:\n%.600s", g, w)
	}
	if html, err := os.ReadFile(filepath.Join(root, "reports", "ranks.html")); err != nil || !bytes.Contains(html, []byte("step wall by rank and step")) {
		t.Errorf("ranks.html: %v, heat map %v", err, bytes.Contains(html, []byte("step wall by rank and step")))
	}
}

// k8sJob is the part of a Job manifest the kubectl stand-in reads.
type k8sJob struct {
	Kind string `yaml:"kind"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Template       struct {
			Spec struct {
				Containers []struct {
					Command      []string `yaml:"command"`
					Args         []string `yaml:"args"`
					VolumeMounts []struct {
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// kubectlApply stands in for `kubectl apply -f` of a Job and waiting for
// it: each completion's pod runs in turn (the Indexed Job's pods with
// JOB_COMPLETION_INDEX set), the volume mounted on root. completions, when
// not 0, replaces the manifest's.
func kubectlApply(t *testing.T, manifest, root string, env []string, completions int) {
	t.Helper()
	var job k8sJob
	if err := yaml.Unmarshal([]byte(manifest), &job); err != nil {
		t.Fatal(err)
	}
	cs := job.Spec.Template.Spec.Containers
	if job.Kind != "Job" || len(cs) != 1 || len(cs[0].Command) != 2 || cs[0].Command[0] != "sh" || len(cs[0].Args) != 1 || len(cs[0].VolumeMounts) != 1 {
		t.Fatalf("manifest: %+v", job)
	}
	n := job.Spec.Completions
	if completions > 0 {
		n = completions
	}
	script := strings.ReplaceAll(cs[0].Args[0], cs[0].VolumeMounts[0].MountPath+"/", root+"/")
	for i := range n {
		cmd := exec.Command("sh", "-c", script)
		cmd.Env = env
		if job.Spec.CompletionMode == "Indexed" {
			cmd.Env = append(cmd.Env, "JOB_COMPLETION_INDEX="+strconv.Itoa(i))
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pod %d: %v\n%s", i, err, out)
		}
	}
}

// TestRanksKubernetesRecipe applies docs/ranks.md's Indexed Job (4
// completions) and reduce Job with a stand-in for kubectl: the reduce's
// rank view equals the exports analysed together, byte for byte.
func TestRanksKubernetesRecipe(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	files := docFiles(t)
	bin, root := t.TempDir(), t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "nsysphase"), []byte("#!/bin/sh\n"+runMainEnv+"=1 exec '"+exe+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"exports", "datasets"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exports := rankExports(t, filepath.Join(root, "exports"), 4)
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	kubectlApply(t, files["map-job.yaml"], root, env, 4)
	kubectlApply(t, files["reduce-job.yaml"], root, env, 0)
	got, err := os.ReadFile(filepath.Join(root, "reports", "ranks.json"))
	if err != nil {
		t.Fatal(err)
	}
	if g, w := ranksMember(t, got), directRanks(t, exports); g != w {
		t.Errorf("reduce over the datasets:\n%.600s\nexports together:\n%.600s", g, w)
	}
}
