package stages_test

import (
	"math"
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/algos/ars"
	"zorepro/algos/episodic"
	"zorepro/algos/episodic/episodictest"
	"zorepro/envs/lqr"
	"zorepro/pipeline/stream"
)

// Known answers of ARS V1 on the LQR (the algorithm's own tests in
// algos/ars use a fake episodic environment).

func v1Source() stream.Source { return stream.New(53307867, "test/algos/arsv1", nil) }

// newV1 is ars.NewV1 with Options{Parallel: par}, failing t on error.
func newV1(t testing.TB, cfg ars.V1Config, env episodic.Episodic, src stream.Source, par episodic.Parallel) *ars.V1 {
	t.Helper()
	return episodictest.Must(t, ars.NewV1, cfg, env, src, par)
}

// TestARSV1Factory: the factory builds ARS V1 on the LQR at W = 0 (n = 100).
func TestARSV1Factory(t *testing.T) {
	cfg := ars.V1Config{Alpha: 0.003, Directions: 10, Nu: 0.05, DiagnosticsEvery: 10}
	m, err := ars.V1Factory[*lqr.Instance]{}.New(cfg, lqrEnv(t, 100, 100, 0.01, 0.05, v1Source()), v1Source())
	if err != nil || len(m.Params()) != 100 {
		t.Fatalf("New: %v", err)
	}
}

// lqrEnv is a small LQR instance, x₀* from src; tol decides whether the stationarity
// stop can fire.
func lqrEnv(t testing.TB, n, h int, c, tol float64, src stream.Source) *lqr.Instance {
	t.Helper()
	in, err := lqr.Generate(n, h, c, tol, src.Rand("x0star"))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestARSV1ParallelSameBits: serial and goroutine-parallel rollouts give the
// same events (digests of W and metrics) bit for bit over 5 iterations;
// run with -cpu=1,4.
func TestARSV1ParallelSameBits(t *testing.T) {
	env := lqrEnv(t, 100, 100, 0.01, 1e-12, v1Source())
	cfg := ars.V1Config{Alpha: 3e-3, Directions: 10, Nu: 0.05}
	episodictest.CheckParallelSameBits(t, func(par episodic.Parallel) algos.Method {
		return newV1(t, cfg, env, v1Source(), par)
	}, algos.Budget{Samples: 5 * 2000}, 5)
}

// TestARSV1Resume: interrupting and resuming from checkpoints reproduces the
// uninterrupted run bit for bit (LQR, n = 10, H = 20, 15 iterations).
func TestARSV1Resume(t *testing.T) {
	env := lqrEnv(t, 10, 20, 0.05, 1e-12, v1Source())
	cfg := ars.V1Config{Alpha: 0.01, Directions: 3, Nu: 0.05}
	newMethod := func() algos.Method {
		return newV1(t, cfg, env, v1Source(), episodictest.Goroutines)
	}
	_, events := algostest.CheckResume(t, newMethod, algos.Budget{Samples: 15 * 2 * 3 * 20}, algos.Schedule{Every: 4}, []int64{1, 6, 12})
	if len(events) != 15 {
		t.Fatalf("%d iterations, want 15", len(events))
	}
}

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

// BenchmarkARSV1IterationLQR is one iteration on the paper's LQR (n = H = 100,
// N = 10: 2000 environment steps plus the stationarity check), serial.
func BenchmarkARSV1IterationLQR(b *testing.B) {
	env := lqrEnv(b, 100, 100, 0.01, 1e-12, v1Source())
	a := newV1(b, ars.V1Config{Alpha: 3e-3, Directions: 10, Nu: 0.05}, env, v1Source(), nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.Step(int64(i + 1)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*2000)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkARSV1IterationLQRParallel is the same with goroutine-parallel
// rollouts.
func BenchmarkARSV1IterationLQRParallel(b *testing.B) {
	env := lqrEnv(b, 100, 100, 0.01, 1e-12, v1Source())
	a := newV1(b, ars.V1Config{Alpha: 3e-3, Directions: 10, Nu: 0.05}, env, v1Source(), episodictest.Goroutines)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.Step(int64(i + 1)); err != nil {
			b.Fatal(err)
		}
	}
}
