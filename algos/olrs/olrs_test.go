package olrs_test

import (
	"math"
	"testing"

	"zorepro/algos/olrs"
	"zorepro/algos/olrs/actionrs"
	"zorepro/algos/olrs/paramrs"
	"zorepro/pipeline/stream"
)

// estimate returns the gradient estimate a rule's round implied:
// (θ_before − θ_after)/α.
func estimate(r olrs.Rule, alpha float64, theta, s []float64, a float64, seed uint64, k int) []float64 {
	th := append([]float64(nil), theta...)
	r.Round(th, s, a, stream.New(seed, "est", nil).Rand("e", uint64(k)))
	out := make([]float64, len(th))
	for j := range th {
		out[j] = (theta[j] - th[j]) / alpha
	}
	return out
}

// The paper's Appendix A: both estimators are unbiased for the gradient of
// their smoothed losses, which for the quadratic c(θ) = (θᵀs − a)² equals
// ∇c(θ) = 2(θᵀs − a)s (smoothing over the ball adds δ²‖s‖²/(b+2), a
// constant; over e ∈ {±1} it adds δ²).
func TestEstimatorsAreUnbiased(t *testing.T) {
	theta := []float64{0.3, -0.2, 0.5, 0.1}
	s := []float64{0.5, 0.5, -0.5, 0.5}
	a := 0.4
	var pred float64
	for j := range s {
		pred += theta[j] * s[j]
	}
	grad := make([]float64, len(s))
	for j := range s {
		grad[j] = 2 * (pred - a) * s[j]
	}

	// Algorithm 2: averaging the two equally likely e is exact.
	act := &actionrs.Rule{Alpha: 1e-3, Delta: 0.1}
	mean := make([]float64, len(s))
	seen := map[float64]bool{}
	for k := 0; len(seen) < 2 || k < 2; k++ {
		est := estimate(act, act.Alpha, theta, s, a, 7, k)
		sign := est[0] // distinguishes e = +1 from e = −1
		if seen[sign] {
			continue
		}
		seen[sign] = true
		for j := range mean {
			mean[j] += est[j] / 2
		}
	}
	for j := range mean {
		if math.Abs(mean[j]-grad[j]) > 1e-12 {
			t.Fatalf("Algorithm 2: E[estimate][%d] = %v, ∇c = %v", j, mean[j], grad[j])
		}
	}

	// Algorithm 1: Monte Carlo over u, within 5 standard errors.
	par := &paramrs.Rule{Alpha: 1e-3, Delta: 0.2}
	const n = 200000
	sum, sum2 := make([]float64, len(s)), make([]float64, len(s))
	for k := 0; k < n; k++ {
		est := estimate(par, par.Alpha, theta, s, a, 11, k)
		for j := range est {
			sum[j] += est[j]
			sum2[j] += est[j] * est[j]
		}
	}
	for j := range sum {
		m := sum[j] / n
		se := math.Sqrt((sum2[j]/n - m*m) / n)
		if math.Abs(m-grad[j]) > 5*se {
			t.Errorf("Algorithm 1: E[estimate][%d] = %v ± %v, ∇c = %v", j, m, se, grad[j])
		}
	}
}
