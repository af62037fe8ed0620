package dgp

import (
	"math"
	"math/rand/v2"
)

// Runs is the data-generating process of a CI history (docs/statistics.md
// §11): independent runs (one profile each, one commit each) of one phase,
// L steps per run. A step of a run with true scale factor f is
//
//	x_t = f · M · e^{r + z_t} · S_t
//
// with r ~ N(0, σ_run²) the run-level effect (machine, clocks, placement),
// z_t = φ z_{t−1} + σ_w √(1−φ²) ε_t AR(1) log step noise started from its
// stationary law in each run, and S_t = 1 with probability 1 − P, else a
// rare spike U(SpikeLo, SpikeHi). A regression of +25% is f = 1.25: the
// truth of every statistic of the run scales by f.
type Runs struct {
	L                int
	M                float64 // scale, ns
	Phi, SigmaW      float64
	SigmaRun         float64
	P                float64
	SpikeLo, SpikeHi float64
}

// CIRuns is the history cell of the tests: 1000 steps of about 10 ms, AR(1)
// φ = 0.9 with a 10% stationary log SD, a 2% run effect, and spikes of 2–5×
// in 0.5% of steps. Its run-to-run CV of the run mean is about 2.5% (the
// run effect, plus the within-run noise of the mean of autocorrelated,
// spiky steps).
func CIRuns() Runs {
	return Runs{L: 1000, M: 10e6, Phi: 0.9, SigmaW: 0.10, SigmaRun: 0.02, P: 0.005, SpikeLo: 2, SpikeHi: 5}
}

// Run draws one run's steps (ns) with scale factor f from rng.
func (p Runs) Run(rng *rand.Rand, f float64) []float64 {
	out := make([]float64, p.L)
	p.RunInto(rng, f, out)
	return out
}

// RunInto is Run writing into out (len(out) steps).
func (p Runs) RunInto(rng *rand.Rand, f float64, out []float64) {
	innov := p.SigmaW * math.Sqrt(1-p.Phi*p.Phi)
	r := p.SigmaRun * rng.NormFloat64()
	z := p.SigmaW * rng.NormFloat64()
	for t := range out {
		z = p.Phi*z + innov*rng.NormFloat64()
		s := 1.0
		if p.P > 0 && rng.Float64() < p.P {
			s = p.SpikeLo + (p.SpikeHi-p.SpikeLo)*rng.Float64()
		}
		out[t] = f * p.M * math.Exp(r+z) * s
	}
}

// SlowStepRuns is the history cell with slow steps (docs/statistics.md §11,
// "Which statistic"): CIRuns with a 3% run effect and, in place of its
// 2–5× spikes, rare slow steps of 10–100× (a collection, a checkpoint, a
// page-in) in 0.2% of steps, about two a run. The count of slow steps in a
// run is nearly Poisson, so they move the run's mean by about 8% from run
// to run while its median hardly notices them.
func SlowStepRuns() Runs {
	return Runs{L: 1000, M: 10e6, Phi: 0.9, SigmaW: 0.10, SigmaRun: 0.03, P: 0.002, SpikeLo: 10, SpikeHi: 100}
}

// MedianWithinLogVar approximates the within-run variance of the log of a
// run's median: π/2 times the AR(1) variance of the mean of the log steps
// (the median of a normal sample is π/2 times as variable as its mean; the
// rare slow steps move it by less than P). The run-to-run variance of the
// log run median is about σ_run² plus this.
func (p Runs) MedianWithinLogVar() float64 {
	return math.Pi / 2 * p.SigmaW * p.SigmaW * (1 + p.Phi) / ((1 - p.Phi) * float64(p.L))
}

// WithMedianRunCV returns p with σ_run set so that the run-to-run SD of the
// log run median is about cv.
func (p Runs) WithMedianRunCV(cv float64) Runs {
	p.SigmaRun = math.Sqrt(max(0, cv*cv-p.MedianWithinLogVar()))
	return p
}
