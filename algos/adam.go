package algos

import (
	"fmt"
	"math"

	"zorepro/pipeline/blob"
)

// PyTorch Adam's defaults (spec §1), as the original MNIST code used them.
const (
	AdamBeta1 = 0.9
	AdamBeta2 = 0.999
	AdamEps   = 1e-8
)

// Adam is PyTorch's Adam (torch.optim.Adam v0.3–v1.4, the releases of the
// original code) for a loss gradient: each Step descends. Its state is the
// moments m, v and the step count t; LR is configuration.
type Adam struct {
	LR   float64
	m, v []float64
	t    int64
}

// NewAdam returns Adam over dim coordinates with m = v = 0 and t = 0.
func NewAdam(dim int, lr float64) *Adam {
	return &Adam{LR: lr, m: make([]float64, dim), v: make([]float64, dim)}
}

// Dim returns the number of coordinates the moments cover.
func (a *Adam) Dim() int { return len(a.m) }

// Step advances t and applies AdamStep to theta in place for the gradient
// g.
func (a *Adam) Step(theta, g []float64) {
	a.t++
	AdamStep(theta, a.m, a.v, g, a.t, a.LR)
}

// AdamStep applies step t (1 for the first step) of PyTorch's Adam to theta
// in place, with first and second moments m and v (zero before the first
// step), for the gradient g of a loss. It computes, per coordinate j:
//
//	m_j = β1·m_j + (1−β1)·g_j
//	v_j = β2·v_j + ((1−β2)·g_j)·g_j
//	θ_j = θ_j − (a·m_j)/(√v_j + ε),   a = lr·√(1−β2^t)/(1−β1^t)
//
// with 1−β1 = 0.1 and 1−β2 = 0.001 (Go constant arithmetic, then rounded to
// float64). This is Adam with the standard bias correction in Kingma & Ba's
// "efficient" ordering (equal to lr·m̂/(√v̂ + ε·√(1−β2^t))). It panics on
// mismatched lengths or t < 1.
func AdamStep(theta, m, v, g []float64, t int64, lr float64) {
	if len(m) != len(theta) || len(v) != len(theta) || len(g) != len(theta) {
		panic(fmt.Sprintf("algos: AdamStep: lengths %d, %d, %d, %d", len(theta), len(m), len(v), len(g)))
	}
	if t < 1 {
		panic(fmt.Sprintf("algos: AdamStep: step %d < 1", t))
	}
	bc1 := 1 - math.Pow(AdamBeta1, float64(t))
	bc2 := 1 - math.Pow(AdamBeta2, float64(t))
	a := lr * math.Sqrt(bc2) / bc1
	for j, gj := range g {
		m[j] = AdamBeta1*m[j] + (1-AdamBeta1)*gj
		v[j] = AdamBeta2*v[j] + (1-AdamBeta2)*gj*gj
		theta[j] -= a * m[j] / (math.Sqrt(v[j]) + AdamEps)
	}
}

const (
	torchAdamMagic   = "ZTAD"
	torchAdamVersion = 1
)

// MarshalBinary encodes t, m and v ("ZTAD", version 1); LR is not encoded.
func (a *Adam) MarshalBinary() ([]byte, error) {
	e := blob.NewEncoder(torchAdamMagic, torchAdamVersion)
	e.Int64(a.t)
	e.Floats(a.m)
	e.Floats(a.v)
	return e.Data(), nil
}

// UnmarshalBinary decodes a MarshalBinary blob, replacing t, m and v (LR is
// kept). It checks t ≥ 0 and len(m) = len(v); on error the receiver is
// unchanged.
func (a *Adam) UnmarshalBinary(data []byte) error {
	d := blob.NewDecoder(data, torchAdamMagic, torchAdamVersion)
	t := d.Int64()
	m := d.Floats()
	v := d.Floats()
	if t < 0 {
		d.Failf("Adam t = %d", t)
	}
	if len(m) != len(v) {
		d.Failf("Adam m has %d coordinates, v %d", len(m), len(v))
	}
	if err := d.Finish(); err != nil {
		return err
	}
	a.t, a.m, a.v = t, m, v
	return nil
}
