package metricproof

import "github.com/nsysphase/nsysphase/phases"

// longestKernel measures maxKernel: the longest of the instance's kernels.
func longestKernel(_ *phases.Instance, ops []phases.Op) int64 {
	var longest int64
	for _, o := range ops {
		if o.Kind == phases.OpKernel {
			longest = max(longest, o.End-o.Start)
		}
	}
	return longest
}
