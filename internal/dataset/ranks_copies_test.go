package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

// rankCopy writes a copy of the single-rank export src into dir as
// name.sqlite whose recorded environment holds RANK=rank (any other value
// names no rank), with its session start moved by shiftNs.
func rankCopy(t testing.TB, src, dir, name string, rank int, shiftNs int64) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, name+".sqlite")
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	conn, err := sqlite.OpenConn(dst, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	script := fmt.Sprintf(`INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', 'RANK="%d"');
UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + %d;`, rank, shiftNs)
	if err := sqlitex.ExecuteScript(conn, script, nil); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestRanksPerRankCopies: per-rank copies of a single-rank export without
// traced communication (eager_graph_small, no NCCL, no MPI) are ranks of
// one job through the environment's RANK: a rank view with `rank` set on
// every instance and step ends on the common timeline. Rank 2's session
// starts 5 ms later, so it ends every step exactly 5 ms after the others.
// Copies that claim one rank, or whose timelines do not overlap (the
// second an hour later), are not one job: no rank view, a warning.
func TestRanksPerRankCopies(t *testing.T) {
	src := fixture.Get(t, "eager_graph_small").SQLite(t)
	dir := t.TempDir()
	const late = 5_000_000
	files := []string{rankCopy(t, src, dir, "r0", 0, 0), rankCopy(t, src, dir, "r1", 1, 0), rankCopy(t, src, dir, "r2", 2, late)}
	d := analyseRanks(t, files, nil, 1)
	s := d.Ranks
	if s == nil || len(s.Ranks) != 3 || s.Source != "environment RANK" || !strings.HasPrefix(s.Collectives, "none traced") {
		t.Fatalf("ranks %+v", s)
	}
	for _, x := range d.Instances() {
		if !x.HasRank || fmt.Sprintf("r%d.sqlite", x.Rank) != filepath.Base(x.File) {
			t.Fatalf("instance of %s: rank %d (set %v)", x.File, x.Rank, x.HasRank)
		}
	}
	checkRankRows(t, s, d.Instances())
	// Ranks are not replicates: each arm has the 2 blocks of the run, not
	// 2 per rank.
	for _, r := range d.Summary {
		if r.Blocks != 2 {
			t.Errorf("%s %s: %d blocks, want the run's 2", r.Arm, r.Phase, r.Blocks)
		}
	}
	e := s.StepEnds
	if e == nil || e.Steps == 0 || e.Straggler == nil || *e.Straggler != 2 || e.StragglerLast != e.Steps ||
		e.MarginMedianNs == nil || *e.MarginMedianNs != late || e.SkewMedianNs != late || e.SkewMaxNs != late {
		t.Fatalf("step ends: %d steps, straggler %v last in %d, margin %v, skew median %v max %d", e.Steps, e.Straggler, e.StragglerLast, e.MarginMedianNs, e.SkewMedianNs, e.SkewMaxNs)
	}
	if !strings.HasPrefix(e.Sentence, fmt.Sprintf("rank 2 finishes last in %d of %d steps, a median 5000.0 µs after the next rank", e.Steps, e.Steps)) {
		t.Errorf("sentence %q", e.Sentence)
	}
	// identical ranks: every score 1
	for _, r := range s.Phases {
		if r.RelativeScore == nil || *r.RelativeScore != 1 {
			t.Errorf("%s rank %d: score %v", r.Phase, r.Rank, r.RelativeScore)
		}
	}
	// Map and reduce: each rank's export analysed alone to a dataset, then
	// --from over the datasets: the same rank view, byte for byte.
	var dirs []string
	for _, f := range files {
		one := analyseRanks(t, []string{f}, nil, 1)
		if one.Ranks != nil {
			t.Fatalf("%s alone: a rank view", f)
		}
		dirs = append(dirs, writeDataset(t, one, true, false))
	}
	from, err := Build(context.Background(), dirs, statsOptions(1), "test")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(from.Ranks)
	b, _ := json.Marshal(d.Ranks)
	if string(a) != string(b) {
		t.Errorf("--from over the per-rank datasets: rank view differs:\n got %.600s\nwant %.600s", a, b)
	}
	// without a shift, no straggler: the plain sentence
	same := analyseRanks(t, files[:2], nil, 1)
	if e := same.Ranks.StepEnds; e == nil || e.Straggler != nil || !strings.HasPrefix(e.Sentence, "no straggler") || e.SkewMaxNs != 0 {
		t.Errorf("two identical ranks: straggler %v, max skew %d, %q", e.Straggler, e.SkewMaxNs, e.Sentence)
	}
	notOne := func(files []string, want string) {
		t.Helper()
		d := analyseRanks(t, files, nil, 1)
		if d.Ranks != nil {
			t.Errorf("%v: a rank view of %d ranks", files, len(d.Ranks.Ranks))
		}
		for _, w := range d.Warnings {
			if w.Code == analysis.WarnRanksNotOneJob {
				if !strings.Contains(w.Message, want) {
					t.Errorf("warning %q lacks %q", w.Message, want)
				}
				return
			}
		}
		t.Errorf("%v: no %s warning", files, analysis.WarnRanksNotOneJob)
	}
	notOne([]string{files[0], rankCopy(t, src, dir, "again0", 0, 3_600_000_000_000)}, "both record rank 0 (RANK)")
	notOne([]string{files[0], rankCopy(t, src, dir, "hour1", 1, 3_600_000_000_000)}, "timelines do not overlap")
}
