package stats

import "slices"

// evalDecomposition splits the mean wall difference into its exclusive parts
// (docs/statistics.md §6). Every part uses the same resamples (or deletions), so the parts add
// up to the total in each one.
func evalDecomposition(t *cmpTask, metrics []string, cfg *config) []Component {
	dec := cfg.decompose
	base, pl := t.d.base, t.ci
	s0, s1 := base.sides[0], base.sides[1]
	w := dec.Total
	if s0.present(w) == 0 || s1.present(w) == 0 {
		return nil
	}
	wA := s0.mean(w, s0.ones)
	// The parts, then the inner parts, estimated alike.
	all := slices.Clone(dec.Parts)
	for _, in := range dec.Inner {
		all = append(all, in.Metric)
	}
	comps := make([]Component, len(all))
	for k, p := range all {
		diff := s1.mean(p, s1.ones) - s0.mean(p, s0.ones)
		comps[k] = Component{Arm: s1.arm.name, Baseline: s0.arm.name, Part: metrics[p], Diff: diff,
			Share: diff / wA, Method: pl.method, Warnings: slices.Clone(t.codes)}
		if k >= len(dec.Parts) {
			comps[k].Of = metrics[dec.Inner[k-len(dec.Parts)].Of]
		}
	}
	switch pl.method {
	case MethodBootstrap, MethodWithinRun:
		// Values per resample, or per distinct count row when both sides
		// share them (see plan.values).
		wa := pl.sideMeanValues(0, w)
		dW := pl.sideMeanValues(1, w)
		for r := range dW {
			dW[r] -= wa[r]
		}
		parts := make([][]float64, len(all))
		for k, p := range all {
			pa := pl.sideMeanValues(0, p)
			parts[k] = pl.sideMeanValues(1, p)
			for r := range parts[k] {
				parts[k][r] -= pa[r]
			}
			putBuf(pa)
		}
		if cfg.hook != nil {
			rows := [][]float64{pl.replicateRows(wa), pl.replicateRows(dW)}
			for _, v := range parts[:len(dec.Parts)] {
				rows = append(rows, pl.replicateRows(v))
			}
			cfg.hook("decomposition", rows...)
		}
		share := getBuf(len(wa))
		for k := range all {
			for r, v := range parts[k] {
				share[r] = v / wa[r]
			}
			comps[k].DiffCI, _ = pl.interval(parts[k])
			comps[k].ShareCI, _ = pl.interval(share)
			putBuf(parts[k])
		}
		putBuf(share)
		putBuf(wa)
		putBuf(dW)
	case MethodJackknife:
		for k, p := range all {
			diff := func(cs [][]int32) float64 { return pl.sides[1].mean(p, cs[1]) - pl.sides[0].mean(p, cs[0]) }
			if theta, se, ok := pl.jackknife(diff); ok {
				ci := tInterval(theta, se, pl.n, cfg.confidence)
				comps[k].DiffCI = &ci
			}
			share := func(cs [][]int32) float64 { return diff(cs) / pl.sides[0].mean(w, cs[0]) }
			if theta, se, ok := pl.jackknife(share); ok {
				ci := tInterval(theta, se, pl.n, cfg.confidence)
				comps[k].ShareCI = &ci
			}
		}
	}
	return comps
}
