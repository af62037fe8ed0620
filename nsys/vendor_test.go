package nsys_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/nsysphase/nsysphase/internal/fixture"
	"github.com/nsysphase/nsysphase/nsys"
)

// vendorRow is one row of a `nsys stats` *_sum report: integers exact,
// statistics as printed (one decimal).
type vendorRow struct {
	total, count, min, max int64
	avg, med, std          float64
}

func parseVendor(t *testing.T, header, rec []string, nameCol string, cols map[string]string) (string, vendorRow) {
	t.Helper()
	idx := map[string]int{}
	for i, h := range header {
		idx[h] = i
	}
	get := func(key string) string {
		i, ok := idx[cols[key]]
		if !ok {
			t.Fatalf("vendor report lacks column %q (have %v)", cols[key], header)
		}
		return rec[i]
	}
	atoi := func(key string) int64 {
		v, err := strconv.ParseInt(get(key), 10, 64)
		if err != nil {
			t.Fatalf("column %s: %v", cols[key], err)
		}
		return v
	}
	atof := func(key string) float64 {
		v, err := strconv.ParseFloat(get(key), 64)
		if err != nil {
			t.Fatalf("column %s: %v", cols[key], err)
		}
		return v
	}
	return rec[idx[nameCol]], vendorRow{total: atoi("total"), count: atoi("count"), min: atoi("min"), max: atoi("max"), avg: atof("avg"), med: atof("med"), std: atof("std")}
}

var sumCols = map[string]string{"total": "Total Time (ns)", "avg": "Avg (ns)", "med": "Med (ns)", "min": "Min (ns)", "max": "Max (ns)", "std": "StdDev (ns)"}

func compareNamed(t *testing.T, report string, got []nsys.NamedDurations, header []string, rows [][]string, countCol string) {
	t.Helper()
	cols := map[string]string{"count": countCol}
	for k, v := range sumCols {
		cols[k] = v
	}
	// The vendor groups by name id and prints names without their version
	// suffix, so a name may repeat: match repeats by their total time.
	byName := map[string][]nsys.Durations{}
	for _, g := range got {
		byName[g.Name] = append(byName[g.Name], g.Durations)
	}
	if len(rows) != len(got) {
		t.Errorf("%s: vendor has %d names, we have %d", report, len(rows), len(got))
	}
	for _, rec := range rows {
		name, v := parseVendor(t, header, rec, "Name", cols)
		cands := byName[name]
		if len(cands) == 0 {
			t.Errorf("%s: vendor name %q missing from ours", report, name)
			continue
		}
		k := 0
		for i, c := range cands {
			if c.TotalNs == v.total && c.Count == v.count {
				k = i
				break
			}
		}
		g := cands[k]
		byName[name] = append(cands[:k:k], cands[k+1:]...)
		if g.Count != v.count || g.TotalNs != v.total || g.MinNs != v.min || g.MaxNs != v.max {
			t.Errorf("%s %q: count/total/min/max = %d/%d/%d/%d, vendor %d/%d/%d/%d", report, name, g.Count, g.TotalNs, g.MinNs, g.MaxNs, v.count, v.total, v.min, v.max)
		}
		for _, c := range []struct {
			what      string
			got, want float64
		}{{"avg", g.MeanNs, v.avg}, {"median", g.MedNs, v.med}, {"stddev", g.StdNs, v.std}} {
			if math.Abs(c.got-c.want) > 0.05+1e-9*math.Abs(c.want) {
				t.Errorf("%s %q: %s = %.3f, vendor prints %.1f", report, name, c.what, c.got, c.want)
			}
		}
	}
}

// TestActivityEqualsVendor checks kernel and API summaries against
// cuda_gpu_kern_sum / cuda_api_sum on every fixture that has them.
func TestActivityEqualsVendor(t *testing.T) {
	for _, fx := range fixture.All(t) {
		t.Run(fx.Name, func(t *testing.T) {
			act := activityOf(t, fx)
			checked := 0
			if h, rows, ok := fx.Vendor(t, "cuda_gpu_kern_sum"); ok {
				compareNamed(t, "cuda_gpu_kern_sum", act.KernelsByName, h, rows, "Instances")
				checked++
			}
			if h, rows, ok := fx.Vendor(t, "cuda_api_sum"); ok {
				compareNamed(t, "cuda_api_sum", act.APIByName, h, rows, "Num Calls")
				checked++
			}
			if h, rows, ok := fx.Vendor(t, "cuda_gpu_mem_time_sum"); ok {
				var named []nsys.NamedDurations
				for _, m := range act.Memops {
					named = append(named, nsys.NamedDurations{Name: m.Kind, Durations: m.Durations})
				}
				for i := range rows { // the vendor names the column Operation
					rows[i] = append(rows[i], rows[i][len(rows[i])-1])
				}
				compareNamed(t, "cuda_gpu_mem_time_sum", named, append(header(h), "Name"), rows, "Count")
				checked++
			}
			if h, rows, ok := fx.Vendor(t, "cuda_gpu_mem_size_sum"); ok {
				compareMemBytes(t, act.Memops, h, rows)
				checked++
			}
			if checked == 0 {
				t.Skip("no vendor reports for this fixture")
			}
		})
	}
}

func header(h []string) []string { return append([]string(nil), h...) }

// compareMemBytes checks bytes and counts per memory operation against the
// vendor's cuda_gpu_mem_size_sum, which prints decimal MB (10^6 bytes) to
// three places.
func compareMemBytes(t *testing.T, got []nsys.MemopSummary, header []string, rows [][]string) {
	t.Helper()
	idx := map[string]int{}
	for i, h := range header {
		idx[h] = i
	}
	byKind := map[string]nsys.MemopSummary{}
	for _, m := range got {
		byKind[m.Kind] = m
	}
	for _, rec := range rows {
		kind := rec[idx["Operation"]]
		m, ok := byKind[kind]
		if !ok {
			t.Errorf("cuda_gpu_mem_size_sum: %s missing from ours", kind)
			continue
		}
		mb, err := strconv.ParseFloat(rec[idx["Total (MB)"]], 64)
		if err != nil {
			t.Fatal(err)
		}
		count, _ := strconv.ParseInt(rec[idx["Count"]], 10, 64)
		if got := float64(m.Bytes) / 1e6; math.Abs(got-mb) > 0.0005+1e-12 || m.Count != count {
			t.Errorf("%s: %d bytes (%.3f MB) in %d ops, vendor %.3f MB in %d", kind, m.Bytes, got, m.Count, mb, count)
		}
	}
}

// activityOf opens a fixture and summarises its CUDA activity.
func activityOf(t *testing.T, fx fixture.Fixture) *nsys.ActivitySummary {
	t.Helper()
	f := openExport(t, fx.SQLite(t))
	strs, err := f.Strings()
	if err != nil {
		t.Fatal(err)
	}
	act, err := f.SummarizeActivity(strs)
	if err != nil {
		t.Fatal(err)
	}
	return act
}
