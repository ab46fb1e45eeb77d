package stages_test

import (
	"math"
	"testing"

	"zorepro/algos/ars"
)

// Known answers of ARS V1 on the LQR (the algorithm's own tests in
// algos/ars use a fake episodic environment).

// TestARSV1EstimatorAscends: the ARS estimate points uphill in return, i.e.
// along −∇J of the LQR's exact expected cost. At a fixed W (not updated),
// the mean of g = Gradient(...) over 300 iterations of N = 10 directions
// (ν = 0.01, σ-normalized as in Step) has cosine > 0.5 with −∇J(W), on an
// LQR with n = 20, H = 50 (small for -race). (On the paper's LQR the
// objective is very flat, J(0) ≈ 0.5416 against a minimum ≈ 0.5380 at
// c = 0.01, and returns are heavy-tailed, so a descent-in-J check on a
// short run is not a reliable test; the direction is.)
func TestARSV1EstimatorAscends(t *testing.T) {
	env := lqrEnv(t, 20, 50, 0.01, 1e-12, v1Source())
	const n, iters, nu = 10, 300, 0.01
	W := make([]float64, env.N)
	W[0] = 0.01
	_, gradJ := env.Expected(W)
	src := v1Source()
	mean := make([]float64, env.N)
	dirs := make([][]float64, n)
	rp, rm := make([]float64, n), make([]float64, n)
	plus, minus := make([]float64, env.N), make([]float64, env.N)
	g := make([]float64, env.N)
	for it := uint64(1); it <= iters; it++ {
		for k := range dirs {
			dirs[k] = make([]float64, env.N)
			rng := src.Rand("directions", it, uint64(k))
			for j := range dirs[k] {
				dirs[k][j] = rng.NormFloat64()
			}
			ars.Perturb(plus, minus, W, dirs[k], nu)
			rp[k], _ = env.Rollout(src.Rand("episodes", it, uint64(k), 0), plus, -1, nil, nil)
			rm[k], _ = env.Rollout(src.Rand("episodes", it, uint64(k), 1), minus, -1, nil, nil)
		}
		ars.Gradient(g, dirs, rp, rm, ars.RewardStd(rp, rm, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}))
		for j := range mean {
			mean[j] += g[j] / iters
		}
	}
	checkUphill(t, mean, gradJ)
}

// checkUphill fails t unless the mean estimate has cosine > 0.5 with −∇J.
func checkUphill(t *testing.T, mean, gradJ []float64) {
	t.Helper()
	var dp, nm, ng float64
	for j := range mean {
		dp -= mean[j] * gradJ[j]
		nm += mean[j] * mean[j]
		ng += gradJ[j] * gradJ[j]
	}
	cos := dp / math.Sqrt(nm*ng)
	t.Logf("cos(mean estimate, −∇J) = %.3f", cos)
	if !(cos > 0.5) {
		t.Errorf("cos(mean estimate, −∇J) = %v, want > 0.5", cos)
	}
}
