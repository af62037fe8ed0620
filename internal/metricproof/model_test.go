package metricproof

import (
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

// maxKernel is the longest kernel an instance launched: a maximum, so not
// additive (the (unannotated) row leaves it null), measured from the
// kernel table joined to the API calls (null where either is absent), and
// the last column of the --wide table.
var maxKernel = phases.Declare(phases.MetricInfo{
	Name:     "max_kernel_ns",
	Unit:     phases.UnitNs,
	Doc:      "duration of the longest kernel launched from the range's thread inside the range; 0 without kernels",
	Sources:  []string{nsys.TableRuntime, nsys.TableKernel},
	Additive: false,
	Wide:     12,
	Measure:  longestKernel,
})
