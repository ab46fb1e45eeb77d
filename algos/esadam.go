package algos

import (
	"fmt"
	"math"

	"zorepro/pipeline/blob"
)

// ESAdam is the Adam variant of spec §1 used by repo A's ARS/ExAct and by
// linear REINFORCE. Its state is the moments m, v and the step count t. One
// step on an input g (per coordinate):
//
//	t  += 1
//	b1t = 0.9·(1−10⁻⁸)^(t−1)
//	m   = b1t·m + (1−b1t)·g
//	v   = 0.999·v + 0.001·(g·g)
//	step = Alpha·(m/(1−0.9^t)) / (√(v/(1−0.999^t)) + 10⁻⁸)
//
// Step returns the step vector and leaves the parameters to the caller:
// ADD it when g is an ascent direction (repo A's reward-weighted ARS/ExAct),
// SUBTRACT it when g is a loss gradient (linear REINFORCE). The first step
// moves every coordinate by about ±Alpha whatever the scale of g.
type ESAdam struct {
	// Alpha is the step size. It is configuration, not state: it is not
	// part of MarshalBinary.
	Alpha float64
	m, v  []float64
	t     int64
}

// Dim returns the number of coordinates the optimizer's moments cover.
func (a *ESAdam) Dim() int { return len(a.m) }

// adamGamma is ES-Adam's decay of β1 per step.
const adamGamma = 1 - 1e-8

// NewESAdam returns an ESAdam over dim coordinates with m = v = 0 and t = 0.
func NewESAdam(dim int, alpha float64) *ESAdam {
	return &ESAdam{Alpha: alpha, m: make([]float64, dim), v: make([]float64, dim)}
}

// T returns the number of steps taken.
func (a *ESAdam) T() int64 { return a.t }

// Step advances the state with input g and returns a new step vector. It
// panics if len(g) is not the dimension.
func (a *ESAdam) Step(g []float64) []float64 {
	if len(g) != len(a.m) {
		panic(fmt.Sprintf("algos: ESAdam.Step: len(g) = %d, want %d", len(g), len(a.m)))
	}
	a.t++
	b1t := AdamBeta1 * math.Pow(adamGamma, float64(a.t-1))
	c1 := 1 - math.Pow(AdamBeta1, float64(a.t))
	c2 := 1 - math.Pow(AdamBeta2, float64(a.t))
	step := make([]float64, len(g))
	for i, gi := range g {
		a.m[i] = b1t*a.m[i] + (1-b1t)*gi
		a.v[i] = AdamBeta2*a.v[i] + 0.001*(gi*gi)
		mhat := a.m[i] / c1
		vhat := a.v[i] / c2
		step[i] = a.Alpha * mhat / (math.Sqrt(vhat) + AdamEps)
	}
	return step
}

const (
	adamMagic   = "ZADM"
	adamVersion = 1
)

// MarshalBinary encodes t, m and v ("ZADM", version 1); Alpha is not encoded.
func (a *ESAdam) MarshalBinary() ([]byte, error) {
	e := blob.NewEncoder(adamMagic, adamVersion)
	e.Int64(a.t)
	e.Floats(a.m)
	e.Floats(a.v)
	return e.Data(), nil
}

// UnmarshalBinary decodes a MarshalBinary blob, replacing t, m and v (Alpha
// is kept). It checks t ≥ 0 and len(m) = len(v); on error the receiver is
// unchanged.
func (a *ESAdam) UnmarshalBinary(data []byte) error {
	d := blob.NewDecoder(data, adamMagic, adamVersion)
	t := d.Int64()
	m := d.Floats()
	v := d.Floats()
	if t < 0 {
		d.Failf("ESAdam t = %d", t)
	}
	if len(m) != len(v) {
		d.Failf("ESAdam m has %d coordinates, v %d", len(m), len(v))
	}
	if err := d.Finish(); err != nil {
		return err
	}
	a.t, a.m, a.v = t, m, v
	return nil
}
