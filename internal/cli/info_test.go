package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nsysphase/nsysphase/internal/fixture"
)

// golden compares got with testdata/NAME, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) == got {
		return
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; -update rewrites it):\n%s", path, diff)
	}
}

// TestInfoTableGolden: the human view of info on a bundled export.
func TestInfoTableGolden(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"eager_graph_small", "sharing_mps_1"} {
		fx := fixture.Get(t, name)
		out, errs, code := run(t, "info", fx.XZ)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		// The path differs between checkouts: name the file only.
		out = strings.ReplaceAll(out, fx.XZ, name+".sqlite.xz")
		golden(t, "info_"+name+".golden", out)
	}
}

// TestInfoJSONContract: the JSON shape later tooling relies on, with
// integers for counts and ns.
func TestInfoJSONContract(t *testing.T) {
	t.Parallel()
	fx := fixture.Get(t, "sharing_mps_1")
	out, errs, code := run(t, "info", "--format", "json", fx.XZ)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		NsysVersion         string           `json:"nsys_version"`
		ExportSchemaVersion string           `json:"export_schema_version"`
		GPUs                []map[string]any `json:"gpus"`
		Processes           []map[string]any `json:"processes"`
		Tables              map[string]int64 `json:"tables"`
		Kernels             struct {
			Count   int64            `json:"count"`
			TotalNs int64            `json:"total_ns"`
			ByName  []map[string]any `json:"by_name"`
		} `json:"kernels"`
		API struct {
			Count   int64            `json:"count"`
			TotalNs int64            `json:"total_ns"`
			ByName  []map[string]any `json:"by_name"`
		} `json:"api"`
		Memcpy []struct {
			Kind    string `json:"kind"`
			Count   int64  `json:"count"`
			Bytes   int64  `json:"bytes"`
			TotalNs int64  `json:"total_ns"`
		} `json:"memcpy"`
	}
	// An array whatever the number of inputs, so `jq '.[]'` works on one.
	var docs []json.RawMessage
	if err := json.Unmarshal([]byte(out), &docs); err != nil || len(docs) != 1 {
		t.Fatalf("want an array of one object: %v (%d)", err, len(docs))
	}
	if err := json.Unmarshal(docs[0], &doc); err != nil {
		t.Fatal(err)
	}
	if doc.NsysVersion != "2025.3.2.0" || doc.ExportSchemaVersion != "3.20.3" {
		t.Errorf("versions %q %q", doc.NsysVersion, doc.ExportSchemaVersion)
	}
	if len(doc.GPUs) != 1 || doc.GPUs[0]["name"] != "NVIDIA H200" || doc.GPUs[0]["uuid"] == "" {
		t.Errorf("gpus %v", doc.GPUs)
	}
	mps := false
	for _, p := range doc.Processes {
		if p["name"] == "nvidia-cuda-mps" {
			mps = true
		}
	}
	if !mps {
		t.Error("the MPS server is not among the processes")
	}
	if doc.Tables["CUPTI_ACTIVITY_KIND_KERNEL"] != doc.Kernels.Count || doc.Kernels.Count != 28637 || doc.API.Count != 62248 {
		t.Errorf("kernels %d (table %d), api %d", doc.Kernels.Count, doc.Tables["CUPTI_ACTIVITY_KIND_KERNEL"], doc.API.Count)
	}
	if len(doc.Kernels.ByName) == 0 || len(doc.API.ByName) == 0 || len(doc.Memcpy) == 0 {
		t.Error("empty by_name or memcpy")
	}
	for _, m := range doc.Memcpy {
		if m.Count <= 0 || m.TotalNs <= 0 || !strings.HasPrefix(m.Kind, "[CUDA mem") {
			t.Errorf("memcpy row %+v", m)
		}
	}
	// Integers stay integers in the JSON text.
	if strings.Contains(out, `"total_ns": 8.1224017e+07`) || !strings.Contains(out, `"total_ns": 81224017`) {
		t.Error("kernel total_ns is not printed as the integer 81224017")
	}
}
