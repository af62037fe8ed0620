package cli_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/base/budget"
)

// TestArmsFolded is issue 37: arms were not capped as phases are (2,000
// tiny arm= ranges, 0.8 MB of rows, gave 415 MB of JSON and 1.74 GB of
// memory). Beyond budget.Arms the arms that start first are kept, the
// baseline among them, and the rest are one arm "(other arms)", with an
// arms_folded warning.
func TestArmsFolded(t *testing.T) {
	// One arm range around each of the 90 steps: 90 arms of one step.
	p := derive(t, "many_arms", `
DELETE FROM NVTX_EVENTS WHERE text LIKE 'arm=%';
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
  SELECT start - 1, end + 1, eventType, 'arm=a' || printf('%03d', (SELECT count(*) FROM NVTX_EVENTS s WHERE s.text = 'collector_step' AND s.start <= NVTX_EVENTS.start)) || ' block=0', globalTid, domainId
  FROM NVTX_EVENTS WHERE text = 'collector_step';`)
	code, stdout, stderr := runMain(t, "analyze", "--no-stats", "--format", "json", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Arms     []string `json:"arms"`
		Warnings []struct {
			Code, Message string
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Arms) != budget.Arms+1 || doc.Arms[len(doc.Arms)-1] != "(other arms)" {
		t.Errorf("%d arms (last %q), want the first %d and (other arms)", len(doc.Arms), doc.Arms[len(doc.Arms)-1], budget.Arms)
	}
	found := false // 80: the 10 warm-up steps' arms hold no kept step
	for _, w := range doc.Warnings {
		if w.Code == "arms_folded" && strings.Contains(w.Message, "80 arms: the first 64") {
			found = true
		}
	}
	if !found {
		t.Errorf("no arms_folded warning naming the 80 arms: %+v", doc.Warnings)
	}
	// The baseline stays an arm of its own even when it starts late.
	late := "a090"
	code, stdout, stderr = runMain(t, "analyze", "--no-stats", "--format", "json", "--baseline", late, p)
	if code != 0 {
		t.Fatalf("--baseline %s: exit %d: %s", late, code, stderr)
	}
	doc.Arms = nil
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Arms) != budget.Arms+1 || !slices.Contains(doc.Arms, late) {
		t.Errorf("--baseline %s: arms %q, want it kept among %d", late, doc.Arms, budget.Arms)
	}
}
