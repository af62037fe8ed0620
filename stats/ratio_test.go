package stats

import (
	"encoding/json"
	"testing"
)

// TestRatioEstimate: the ratio every comparison row embeds says what its
// interval says (a verdict only with one; a regression only when the whole
// interval lies above the bound), its copy shares no memory, and a row that
// embeds it keeps "ratio" and "ratio_ci" where it lists them.
func TestRatioEstimate(t *testing.T) {
	r := 1.2
	cases := []struct {
		ci       *[2]float64
		verdict  Verdict
		above105 bool
		above1   bool // Above(1)
	}{
		{nil, VerdictNone, false, false},
		{&[2]float64{1.1, 1.3}, VerdictChanged, true, true},
		{&[2]float64{1.03, 1.3}, VerdictChanged, false, true},
		{&[2]float64{0.9, 1.3}, VerdictUnchanged, false, false},
		{&[2]float64{0.7, 0.9}, VerdictChanged, false, false},
		{&[2]float64{1, 1.3}, VerdictUnchanged, false, false}, // 1 itself is inside
	}
	for _, c := range cases {
		e := RatioEstimate{Ratio: &r, RatioCI: c.ci}
		if got := e.IntervalVerdict(); got != c.verdict {
			t.Errorf("CI %v: verdict %q, want %q", c.ci, got, c.verdict)
		}
		if got := e.Above(1.05); got != c.above105 {
			t.Errorf("CI %v: Above(1.05) = %v, want %v", c.ci, got, c.above105)
		}
		if got := e.Above(1); got != c.above1 {
			t.Errorf("CI %v: Above(1) = %v, want %v", c.ci, got, c.above1)
		}
		if c.ci != nil && VerdictOf(*c.ci) != c.verdict {
			t.Errorf("CI %v: VerdictOf and IntervalVerdict differ", c.ci)
		}
	}

	orig := RatioEstimate{Ratio: &r, RatioCI: &[2]float64{1.1, 1.3}}
	cp := orig.Clone()
	*cp.Ratio, cp.RatioCI[0] = 9, 9
	if *orig.Ratio != 1.2 || orig.RatioCI[0] != 1.1 {
		t.Errorf("Clone shares memory: the original became %v %v", *orig.Ratio, *orig.RatioCI)
	}
	if z := (RatioEstimate{}).Clone(); z.Ratio != nil || z.RatioCI != nil {
		t.Errorf("Clone of no ratio: %+v, want nils", z)
	}

	b, err := json.Marshal(gateLike{Arm: "a", RatioEstimate: orig, Method: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"arm":"a","ratio":1.2,"ratio_ci":[1.1,1.3],"method":"m"}`; string(b) != want {
		t.Errorf("embedded JSON %s, want %s", b, want)
	}
	b, err = json.Marshal(gateLike{Arm: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"arm":"a","ratio":null,"ratio_ci":null,"method":""}`; string(b) != want {
		t.Errorf("embedded JSON without a ratio %s, want %s", b, want)
	}
}

// gateLike is a row that embeds the ratio between its own fields.
type gateLike struct {
	Arm string `json:"arm"`
	RatioEstimate
	Method string `json:"method"`
}
