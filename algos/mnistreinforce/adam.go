package mnistreinforce

import (
	"fmt"
	"math"
)

// PyTorch Adam's defaults (spec §1), as the original used them.
const (
	Beta1 = 0.9
	Beta2 = 0.999
	Eps   = 1e-8
)

// AdamStep applies step t (1 for the first step) of PyTorch's Adam to theta
// in place, with first and second moments m and v (zero before the first
// step), for the gradient g of a loss. It computes, per coordinate j, as
// torch.optim.Adam (v0.3–v1.4, the releases of the original code) does:
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
		panic(fmt.Sprintf("mnistreinforce: AdamStep: lengths %d, %d, %d, %d", len(theta), len(m), len(v), len(g)))
	}
	if t < 1 {
		panic(fmt.Sprintf("mnistreinforce: AdamStep: step %d < 1", t))
	}
	bc1 := 1 - math.Pow(Beta1, float64(t))
	bc2 := 1 - math.Pow(Beta2, float64(t))
	a := lr * math.Sqrt(bc2) / bc1
	for j, gj := range g {
		m[j] = Beta1*m[j] + (1-Beta1)*gj
		v[j] = Beta2*v[j] + (1-Beta2)*gj*gj
		theta[j] -= a * m[j] / (math.Sqrt(v[j]) + Eps)
	}
}
