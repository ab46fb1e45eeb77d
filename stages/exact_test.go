package stages_test

import (
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/algos/episodic"
	"zorepro/algos/episodic/episodictest"
	"zorepro/algos/exact"
	"zorepro/envs/lqr"
	"zorepro/pipeline/stream"
)

// Known answers of ExAct on the LQR (the algorithm's own tests in
// algos/exact use a fake episodic environment).

func exactSource() stream.Source { return stream.New(97554704, "test/algos/exact", nil) }

// newExAct is exact.New with Options{Parallel: par}, failing t on error.
func newExAct(t testing.TB, cfg exact.Config, env episodic.Episodic, src stream.Source, par episodic.Parallel) *exact.ExAct {
	t.Helper()
	return episodictest.Must(t, exact.New, cfg, env, src, par)
}

// TestExActFactory: the factory builds ExAct on the LQR at W = 0 (n = 100).
func TestExActFactory(t *testing.T) {
	cfg := exact.Config{Alpha: 0.003, Directions: 10, Nu: 0.05, DiagnosticsEvery: 10}
	m, err := exact.Factory[*lqr.Instance]{}.New(cfg, lqrEnv(t, 100, 100, 0.01, 0.05, exactSource()), exactSource())
	if err != nil || len(m.Params()) != 100 {
		t.Fatalf("New: %v", err)
	}
}

// TestExActParallelSameBits: serial and goroutine-parallel rollouts give the
// same events bit for bit over 8 iterations; run with -cpu=1,4.
func TestExActParallelSameBits(t *testing.T) {
	env := lqrEnv(t, 100, 100, 0.01, 1e-12, exactSource())
	cfg := exact.Config{Alpha: 3e-3, Directions: 10, Nu: 0.05}
	episodictest.CheckParallelSameBits(t, func(par episodic.Parallel) algos.Method {
		return newExAct(t, cfg, env, exactSource(), par)
	}, algos.Budget{Samples: 8 * 1000}, 8)
}

// TestExActResume: interrupting and resuming from checkpoints reproduces the
// uninterrupted run bit for bit (LQR, n = 10, H = 20, 15 iterations).
func TestExActResume(t *testing.T) {
	env := lqrEnv(t, 10, 20, 0.05, 1e-12, exactSource())
	cfg := exact.Config{Alpha: 0.01, Directions: 3, Nu: 0.05}
	newMethod := func() algos.Method {
		return newExAct(t, cfg, env, exactSource(), episodictest.Goroutines)
	}
	_, events := algostest.CheckResume(t, newMethod, algos.Budget{Samples: 15 * 3 * 20}, algos.Schedule{Every: 4}, []int64{1, 6, 12})
	if len(events) != 15 {
		t.Fatalf("%d iterations, want 15", len(events))
	}
}

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

// BenchmarkExActIterationLQR is one iteration on the paper's LQR
// (n = H = 100, N = 10: 1000 environment steps plus the stationarity
// check), serial.
func BenchmarkExActIterationLQR(b *testing.B) {
	env := lqrEnv(b, 100, 100, 0.01, 1e-12, exactSource())
	e := newExAct(b, exact.Config{Alpha: 3e-3, Directions: 10, Nu: 0.05}, env, exactSource(), nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Step(int64(i + 1)); err != nil {
			b.Fatal(err)
		}
	}
}
