package cli_test

import (
	"strings"
	"testing"

	"github.com/nsysphase/nsysphase/internal/cli"
)

// TestColumnNamesCarryUnits: DuckDB's DESCRIBE and parquet_schema() show
// column names and types only (neither Parquet field metadata nor comments),
// so a column's unit must be readable there: durations end in _ns, sizes in
// _bytes, and a column whose unit varies by row (per-metric tables) sits in a
// table with a metric_unit column. No name has two meanings: the same name
// has the same unit in every table, and no column is called "unit".
func TestColumnNamesCarryUnits(t *testing.T) {
	t.Parallel()
	type col struct{ table, unit string }
	seen := map[string]col{}
	table := ""
	names := map[string][]string{} // table → column names
	units := map[string][][2]string{}
	for _, line := range strings.Split(cli.SchemaMarkdown(), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			table = h
			continue
		}
		// items is written as CSV and JSON only (inventory), whose names
		// are the JSON contract of that command.
		if table == "items" || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, " | ")
		if len(cells) != 5 {
			continue
		}
		name := strings.Trim(cells[0], "| `")
		unit := strings.TrimSpace(cells[2])
		names[table] = append(names[table], name)
		units[table] = append(units[table], [2]string{name, unit})
		if name == "unit" {
			t.Errorf("%s.unit: a name with two meanings (block or measurement unit); say which", table)
		}
		if prev, ok := seen[name]; ok && prev.unit != unit {
			t.Errorf("%s.%s has unit %q but %s.%s has %q: one name, one meaning", table, name, unit, prev.table, name, prev.unit)
		}
		seen[name] = col{table, unit}
	}
	if len(names) < 5 {
		t.Fatalf("parsed %d tables from the schema; the format changed?", len(names))
	}
	for table, cols := range units {
		for _, c := range cols {
			name, unit := c[0], c[1]
			switch {
			case unit == "ns" && !strings.HasSuffix(name, "_ns"):
				t.Errorf("%s.%s is in ns: name it …_ns so DuckDB users see the unit", table, name)
			case unit == "bytes" && !strings.HasSuffix(name, "_bytes"):
				t.Errorf("%s.%s is in bytes: name it …_bytes", table, name)
			case strings.HasSuffix(name, "_ns") && unit != "ns":
				t.Errorf("%s.%s ends in _ns but its unit is %q", table, name, unit)
			case strings.HasSuffix(name, "_bytes") && unit != "bytes":
				t.Errorf("%s.%s ends in _bytes but its unit is %q", table, name, unit)
			case unit == "the metric's" && !contains(names[table], "metric_unit"):
				t.Errorf("%s.%s is in the metric's unit but %s has no metric_unit column", table, name, table)
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
