package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/base/budget"
)

// cutlassName is a real-looking cuDNN/CUTLASS kernel name of n bytes: PyTorch
// training exports hold such names of 5-9 KB (nsys stats prints them whole).
func cutlassName(n int) string {
	head := "void cutlass__5x_cudnn::Kernel<cutlass__5x_cudnn::conv::kernel::ImplicitGemmConvolution<"
	var b strings.Builder
	b.WriteString(head)
	for b.Len() < n-1 {
		b.WriteString("cutlass__5x_cudnn::gemm::GemmShape<(int)64, (int)128, (int)16>, ")
	}
	return b.String()[:n-1] + ">"
}

// TestRealLongNamesExact is issue 37's first regression: round 2 cut every
// name at 4 KiB, and info no longer equalled nsys stats on PyTorch exports
// whose cuDNN kernel names are 5-9 KB. Names are exact in every machine
// format up to budget.NameBytes (1 MiB), shortened with their length and
// hash beyond it, and shortened on screen only.
func TestRealLongNamesExact(t *testing.T) {
	kernel := cutlassName(5805)
	rng := "range_" + strings.Repeat("r", 9000)
	huge := "huge_" + strings.Repeat("h", 2<<20)
	p := derive(t, "long_names", `
UPDATE StringIds SET value = `+sqlText(kernel)+` WHERE id = (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1);
UPDATE StringIds SET value = `+sqlText(huge)+` WHERE id = (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start DESC LIMIT 1);
UPDATE NVTX_EVENTS SET text = `+sqlText(rng)+` WHERE text = 'events';`)

	code, stdout, stderr := runMain(t, "info", "--format", "json", p)
	if code != 0 {
		t.Fatalf("info: exit %d: %s", code, stderr)
	}
	var doc any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("info --format json: %v", err)
	}
	strs := jsonStrings(doc, nil)
	if !strs[kernel] {
		t.Errorf("info --format json: the %d-byte kernel name is not there whole", len(kernel))
	}
	// The 2 MiB name: its first MiB, its length and hash.
	cut := huge[:budget.NameBytes] + "…[2097157 bytes, sha256 "
	found := false
	for s := range strs {
		found = found || strings.HasPrefix(s, cut)
	}
	if !found {
		t.Errorf("info --format json: the 2 MiB kernel name is not its first MiB with its length and hash")
	}

	_, stdout, _ = runMain(t, "ranges", "--format", "csv", p)
	if !strings.Contains(stdout, ":"+rng+",") {
		t.Errorf("ranges --format csv: the %d-byte range name is not there whole", len(rng))
	}
	for _, args := range [][]string{{"ranges"}, {"info"}} {
		_, stdout, _ = runMain(t, append(args, p)...)
		for _, l := range strings.Split(stdout, "\n") {
			if len(l) > budget.DisplayNameBytes+1024 {
				t.Errorf("%s: a %d-byte line on screen (%.60q…)", args[0], len(l), l)
				break
			}
		}
	}
	_, stdout, _ = runMain(t, "ranges", p)
	if !strings.Contains(stdout, "…[9007 bytes, sha256 ") { // ":" + the text, as the vendor names it
		t.Errorf("ranges: the long range name is not shortened with its length and hash on screen")
	}
}

// jsonStrings adds every string value of a decoded JSON document to set.
func jsonStrings(v any, set map[string]bool) map[string]bool {
	if set == nil {
		set = map[string]bool{}
	}
	switch x := v.(type) {
	case string:
		set[x] = true
	case []any:
		for _, e := range x {
			jsonStrings(e, set)
		}
	case map[string]any:
		for _, e := range x {
			jsonStrings(e, set)
		}
	}
	return set
}
