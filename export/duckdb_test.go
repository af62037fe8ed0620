package export

import (
	"context"
	"encoding/json"
	"maps"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// duckDBReport is what interop/read.mjs prints.
type duckDBReport struct {
	Count   int `json:"count"`
	Columns []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Nulls    int    `json:"nulls"`
		Distinct int    `json:"distinct"`
		Sum      string `json:"sum"`
		Min      string `json:"min"`
		Max      string `json:"max"`
	} `json:"columns"`
	KV     map[string]string `json:"kv"`
	Chunks map[string]struct {
		Encodings   []string `json:"encodings"`
		Compression []string `json:"compression"`
	} `json:"chunks"`
}

// duckDBReader returns a function running the independent DuckDB reader
// (interop/read.mjs) on a path. It skips the test when node or the npm
// packages are missing; CI installs them with `npm ci --prefix interop`.
func duckDBReader(t *testing.T) func(t *testing.T, path string) duckDBReport {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found; the DuckDB interop test needs Node.js")
	}
	script, err := filepath.Abs(filepath.Join("..", "interop", "read.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "@duckdb", "node-api")); err != nil {
		t.Skip("interop/node_modules missing; run: npm ci --prefix interop")
	}
	return func(t *testing.T, path string) duckDBReport {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, script, path)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node read.mjs %s: %v\n%s", path, err, stderr.String())
		}
		var rep duckDBReport
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("read.mjs output %q: %v", out, err)
		}
		return rep
	}
}

// exactSum sums a nullable int64 column without overflow.
func exactSum(t *Table, col int) string {
	sum := new(big.Int)
	for r := range t.Len() {
		if v, ok := t.Int64(r, col); ok {
			sum.Add(sum, big.NewInt(v))
		}
	}
	return sum.String()
}

var duckDBType = map[Type]string{TypeInt64: "BIGINT", TypeFloat64: "DOUBLE", TypeString: "VARCHAR", TypeBool: "BOOLEAN"}

func TestDuckDBReadsParquet(t *testing.T) {
	readWithDuckDB := duckDBReader(t)
	for _, tab := range []*Table{sampleTable(t), randomTable(200_000, 7)} {
		t.Run(tab.Name, func(t *testing.T) {
			meta := map[string]string{MetaSchemaVersion: "1", MetaVersion: "test", MetaGPU: "NVIDIA H200"}
			// Several row groups, so DuckDB meets the shared dictionary more than once.
			path := writeTemp(t, tab, FormatParquet, Options{Metadata: meta, RowGroupRows: 64 << 10})
			rep := readWithDuckDB(t, path)
			if rep.Count != tab.Len() {
				t.Errorf("count %d, want %d", rep.Count, tab.Len())
			}
			if len(rep.Columns) != tab.NumColumns() {
				t.Fatalf("DuckDB sees %d columns, want %d", len(rep.Columns), tab.NumColumns())
			}
			for i, c := range rep.Columns {
				col := tab.Column(i)
				if c.Name != col.Name || c.Type != duckDBType[col.Type] {
					t.Errorf("column %d: DuckDB %s %s, want %s %s", i, c.Name, c.Type, col.Name, duckDBType[col.Type])
				}
				if c.Nulls != tab.NullCount(i) {
					t.Errorf("column %s: DuckDB counts %d nulls, want %d", col.Name, c.Nulls, tab.NullCount(i))
				}
				if col.Type == TypeInt64 && c.Sum != exactSum(tab, i) {
					t.Errorf("column %s: DuckDB sum %s, want %s", col.Name, c.Sum, exactSum(tab, i))
				}
				chunk := rep.Chunks[col.Name]
				if !slices.Equal(chunk.Compression, []string{"ZSTD"}) {
					t.Errorf("column %s: compression %v", col.Name, chunk.Compression)
				}
				if dict := slices.Contains(chunk.Encodings, "RLE_DICTIONARY"); dict != (col.Type == TypeString) {
					t.Errorf("column %s (%v): encodings %v", col.Name, col.Type, chunk.Encodings)
				}
			}
			for k, v := range meta {
				if rep.KV[k] != v {
					t.Errorf("DuckDB kv %s = %q, want %q", k, rep.KV[k], v)
				}
			}
			if rep.KV[MetaTable] != tab.Name {
				t.Errorf("DuckDB kv %s = %q", MetaTable, rep.KV[MetaTable])
			}
		})
	}
	t.Run("big int64 value", func(t *testing.T) {
		rep := readWithDuckDB(t, writeTemp(t, sampleTable(t), FormatParquet, Options{}))
		if c := rep.Columns[3]; c.Name != "median_ns" || c.Max != "9007199254740993" || c.Min != "-9223372036854775808" {
			t.Errorf("median_ns min/max %s/%s", c.Min, c.Max)
		}
	})
}

// TestDuckDBReadsPartitionedDataset: DuckDB reads a Hive-partitioned table
// as one table, each key column exactly once, with nulls and escaped
// values restored.
func TestDuckDBReadsPartitionedDataset(t *testing.T) {
	readWithDuckDB := duckDBReader(t)
	dir := filepath.Join(t.TempDir(), "ds")
	inst := instancesTable(t)
	if err := WriteDataset(dir, []*Table{inst}, FormatParquet, Options{PartitionBy: []string{"arm", "file"}}); err != nil {
		t.Fatal(err)
	}
	rep := readWithDuckDB(t, filepath.Join(dir, "phase_instances"))
	if rep.Count != inst.Len() {
		t.Errorf("count %d, want %d", rep.Count, inst.Len())
	}
	got := map[string]int{}
	for _, c := range rep.Columns {
		got[c.Name]++
		switch c.Name {
		case "arm":
			if c.Nulls != 1 || c.Distinct != 2 || c.Type != "VARCHAR" {
				t.Errorf("arm: %+v", c)
			}
		case "file":
			if c.Distinct != 4 || c.Min != "dir/run 2=é.nsys-rep" {
				t.Errorf("file: %+v", c)
			}
		case "dur_ns":
			if c.Sum != exactSum(inst, 3) || c.Nulls != 1 || c.Type != "BIGINT" {
				t.Errorf("dur_ns: %+v, want sum %s", c, exactSum(inst, 3))
			}
		}
	}
	if want := map[string]int{"arm": 1, "file": 1, "phase": 1, "dur_ns": 1}; !maps.Equal(got, want) {
		t.Errorf("DuckDB columns %v, want each of %v once", got, want)
	}
}
