// Package dgp rebuilds the synthetic data-generating process of
// docs/statistics.md §9 for the tests of package stats, with its analytic truths.
//
// One interleaved stream of K rounds × 2 blocks × L steps; the order inside
// each round is a coin flip. Log-noise is AR(1) and runs on across blocks:
// z_t = φ z_{t−1} + σ_w √(1−φ²) ε_t. Each block gets u ~ N(0, σ_b²), each round
// r ~ N(0, σ_r²). A step is x = m_a·e^{r+u+z_t}·S_t, S_t = 1 with probability
// 1 − p_a, else U(10, 100).
//
// It imports nothing from stats, so that internal tests of stats can use it.
package dgp

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Params is one DGP cell. Arm 0 is A (baseline), arm 1 is B.
type Params struct {
	K, L                        int
	Phi, SigmaW, SigmaB, SigmaR float64
	M                           [2]float64 // scale per arm
	P                           [2]float64 // spike probability per arm
}

// D1 is the spiky cell.
func D1() Params {
	return Params{K: 10, L: 100, Phi: 0.9, SigmaW: 0.15, SigmaB: 0.05, SigmaR: 0.03, M: [2]float64{1, 0.9}, P: [2]float64{0.02, 0.01}}
}

// D2 is D1 without spikes.
func D2() Params { p := D1(); p.P = [2]float64{}; return p }

// D3 is D1 with strong round effects (drift shared by both arms of a round).
func D3() Params { p := D1(); p.SigmaB, p.SigmaR = 0.02, 0.10; return p }

// D4 is D1 with sparse tails.
func D4() Params { p := D1(); p.P = [2]float64{0.002, 0.001}; return p }

// Block is one generated block.
type Block struct {
	Arm    int
	Round  int
	Index  int   // position in the stream
	Start  int64 // ns
	Steps  []float64
	Spikes int // steps with S_t > 1
}

// StepNS is the nominal spacing of steps, used only for start times.
const StepNS = 1_000_000

// Generate draws one experiment from the PCG stream (seed1, seed2).
func Generate(p Params, seed1, seed2 uint64) []Block {
	rng := rand.New(rand.NewPCG(seed1, seed2))
	innov := p.SigmaW * math.Sqrt(1-p.Phi*p.Phi)
	z := p.SigmaW * rng.NormFloat64() // stationary start
	var out []Block
	for k := range p.K {
		r := p.SigmaR * rng.NormFloat64()
		order := [2]int{0, 1}
		if rng.Float64() < 0.5 {
			order = [2]int{1, 0}
		}
		for _, arm := range order {
			u := p.SigmaB * rng.NormFloat64()
			b := Block{Arm: arm, Round: k, Index: len(out), Start: int64(len(out)) * int64(p.L) * StepNS, Steps: make([]float64, p.L)}
			for t := range p.L {
				z = p.Phi*z + innov*rng.NormFloat64()
				s := 1.0
				if p.P[arm] > 0 && rng.Float64() < p.P[arm] {
					s = 10 + 90*rng.Float64()
					b.Spikes++
				}
				b.Steps[t] = p.M[arm] * math.Exp(r+u+z) * s
			}
			out = append(out, b)
		}
	}
	return out
}

// S2 is the total log variance s² = σ_w² + σ_b² + σ_r².
func (p Params) S2() float64 { return p.SigmaW*p.SigmaW + p.SigmaB*p.SigmaB + p.SigmaR*p.SigmaR }

// Mean is μ_a = m_a·e^{s²/2}·(1 + 54 p_a).
func (p Params) Mean(arm int) float64 {
	return p.M[arm] * math.Exp(p.S2()/2) * (1 + 54*p.P[arm])
}

// CDF is the marginal P(x ≤ q) of arm a.
func (p Params) CDF(arm int, q float64) float64 {
	s := math.Sqrt(p.S2())
	lq := math.Log(q / p.M[arm])
	base := distuv.UnitNormal.CDF(lq / s)
	if p.P[arm] == 0 {
		return base
	}
	// E_S[Φ((lq − ln S)/s)], S ~ U(10, 100), by composite Simpson.
	const n = 2000
	h := 90.0 / n
	var sum float64
	for i := 0; i <= n; i++ {
		w := 2.0
		switch {
		case i == 0 || i == n:
			w = 1
		case i%2 == 1:
			w = 4
		}
		sum += w * distuv.UnitNormal.CDF((lq-math.Log(10+float64(i)*h))/s)
	}
	spike := sum * h / 3 / 90
	return (1-p.P[arm])*base + p.P[arm]*spike
}

// Quantile solves CDF(q) = prob by bisection on log q.
func (p Params) Quantile(arm int, prob float64) float64 {
	s := math.Sqrt(p.S2())
	lo := math.Log(p.M[arm]) - 12*s
	hi := math.Log(p.M[arm]) + math.Log(100) + 12*s
	for range 200 {
		mid := (lo + hi) / 2
		if p.CDF(arm, math.Exp(mid)) < prob {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp((lo + hi) / 2)
}

// Decomp is a DGP for the decomposition test: wall = H + L + Y + M + O per
// step, each part lognormal with shared round/block/AR effects and its own
// i.i.d. noise; arm B adds Shift to L only.
type Decomp struct {
	K, L  int
	Base  [5]float64 // part scales: H, L, Y, M, O
	Noise float64    // part-specific log noise
	Shift float64    // added to L in arm B
}

// DecompBlock holds parts[c][t] and wall[t].
type DecompBlock struct {
	Arm, Round, Index int
	Start             int64
	Parts             [5][]float64
	Wall              []float64
}

// Generate draws one decomposition experiment.
func (d Decomp) Generate(seed1, seed2 uint64) []DecompBlock {
	p := D2()
	rng := rand.New(rand.NewPCG(seed1, seed2))
	innov := p.SigmaW * math.Sqrt(1-p.Phi*p.Phi)
	z := p.SigmaW * rng.NormFloat64()
	var out []DecompBlock
	for k := range d.K {
		r := p.SigmaR * rng.NormFloat64()
		order := [2]int{0, 1}
		if rng.Float64() < 0.5 {
			order = [2]int{1, 0}
		}
		for _, arm := range order {
			u := p.SigmaB * rng.NormFloat64()
			b := DecompBlock{Arm: arm, Round: k, Index: len(out), Start: int64(len(out)) * int64(d.L) * StepNS, Wall: make([]float64, d.L)}
			for c := range b.Parts {
				b.Parts[c] = make([]float64, d.L)
			}
			for t := range d.L {
				z = p.Phi*z + innov*rng.NormFloat64()
				for c := range b.Parts {
					v := d.Base[c] * math.Exp(r+u+z+d.Noise*rng.NormFloat64())
					if c == 1 && arm == 1 {
						v += d.Shift
					}
					b.Parts[c][t] = v
				}
				// The wall is the sum in a fixed order, as the phases stage builds it.
				b.Wall[t] = b.Parts[0][t] + b.Parts[1][t] + b.Parts[2][t] + b.Parts[3][t] + b.Parts[4][t]
			}
			out = append(out, b)
		}
	}
	return out
}
