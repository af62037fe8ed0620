package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/nsys"
)

// TestGenerateFiltersControl: text and Markdown pass through the control
// filter whatever the renderer prints, so a control character that reached
// a result unescaped (here a file name) never reaches the terminal or the
// pull-request comment raw; a C1 control split over two writes is caught
// too. (A refactor of Generate once dropped the filter without a failing
// test.)
func TestGenerateFiltersControl(t *testing.T) {
	infos := Infos{&nsys.Info{File: "run\x1b]0;owned\x07\u009b2J.sqlite"}}
	for _, f := range []Format{Text, Markdown} {
		var b bytes.Buffer
		if err := Generate(&b, f, infos, Options{}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, c := range []string{"\x1b", "\x07", "\u009b"} {
			if strings.Contains(out, c) {
				t.Errorf("%s: raw %q in the output:\n%q", f, c, out)
			}
		}
		if f == Text && !strings.Contains(out, `run\x1b]0;owned\x07\u009b2J.sqlite`) {
			t.Errorf("%s: the file name is not written escaped:\n%s", f, out)
		}
	}
}
