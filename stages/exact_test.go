package stages_test

import (
	"testing"

	"zorepro/algos/exact"
)

// Known answers of ExAct on the LQR (the algorithm's own tests in
// algos/exact use a fake episodic environment).

// TestExActEstimatorAscends: on a small LQR (n = 3, H = 3, c = 0) at a fixed
// W = [0.5, 0, 0], the mean of G over 3000 iterations of N = 10 one-point
// samples (ν = 0.1, σ-normalized as in Step) has cosine > 0.5 with −∇J(W):
// ExAct's estimate points uphill in return. (On the paper's n = H = 100
// problem the one-point estimate is far too noisy for a short test.)
func TestExActEstimatorAscends(t *testing.T) {
	env := lqrEnv(t, 3, 3, 0, 1e-12, exactSource())
	const n, iters, nu = 10, 3000, 0.1
	W := []float64{0.5, 0, 0}
	_, gradJ := env.Expected(W)
	src := exactSource()
	eps, obs, rets := make([][]float64, n), make([][]float64, n), make([]float64, n)
	mean := make([]float64, 3)
	G := make([]float64, 3)
	for it := uint64(1); it <= iters; it++ {
		for k := 0; k < n; k++ {
			tk := src.Rand("timesteps", it, uint64(k)).IntN(env.H)
			eps[k] = []float64{src.Rand("directions", it, uint64(k)).NormFloat64()}
			obs[k] = make([]float64, 3)
			rets[k], _ = env.Rollout(src.Rand("episodes", it, uint64(k)), W, tk, []float64{nu * eps[k][0]}, obs[k])
		}
		exact.Gradient(G, eps, obs, rets, exact.RewardStd(rets))
		for j := range mean {
			mean[j] += G[j] / iters
		}
	}
	checkUphill(t, mean, gradJ)
}
