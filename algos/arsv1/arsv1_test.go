package arsv1

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/algos/episodic"
	"zorepro/algos/episodic/episodictest"
	"zorepro/envs/lqr"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

func testSource() stream.Source { return stream.New(53307867, "test/algos/arsv1", nil) }

// mustNew is New with Options{Parallel: par}, failing t on error.
func mustNew(t testing.TB, cfg Config, env episodic.Episodic, src stream.Source, par episodic.Parallel) *ARS {
	t.Helper()
	m, err := New(cfg, env, src, episodic.Options{Parallel: par})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fake is a tiny episodic environment: p×n policy, horizon h; the return
// is Σ_ij W_ij·(i+2j+1) plus one normal from rng (the "reset"), and the
// episode fails when fail(W) is true.
type fake struct {
	p, n, h int
	fail    func(W []float64) bool
}

func (f *fake) ObsDim() int  { return f.n }
func (f *fake) ActDim() int  { return f.p }
func (f *fake) Horizon() int { return f.h }
func (f *fake) Rollout(rng *rand.Rand, W []float64, _ int, _, _ []float64) (float64, error) {
	if f.fail != nil && f.fail(W) {
		return 0, errors.New("simulation unstable")
	}
	var r float64
	for i := 0; i < f.p; i++ {
		for j := 0; j < f.n; j++ {
			r += W[i*f.n+j] * float64(i+2*j+1)
		}
	}
	return r + rng.NormFloat64(), nil
}

// TestRewardStdHand: r⁺ = [2, 2], r⁻ = [−2, −2] have mean 0 and
// σ = √(16/4) = 2; N = 1 gives 1 (no normalization); equal returns give 1.
func TestRewardStdHand(t *testing.T) {
	if s := RewardStd([]float64{2, 2}, []float64{-2, -2}); s != 2 {
		t.Errorf("σ = %v, want 2", s)
	}
	if s := RewardStd([]float64{2, -2}, []float64{-2, 2}); s != 2 {
		t.Errorf("σ = %v, want 2", s)
	}
	if s := RewardStd([]float64{5}, []float64{1}); s != 1 {
		t.Errorf("N = 1: σ = %v, want 1", s)
	}
	if s := RewardStd([]float64{-3, -3, -3}, []float64{-3, -3, -3}); s != 1 {
		t.Errorf("zero spread: σ = %v, want 1", s)
	}
	// Population (not sample) std: [1, 3, 0, 0] (r⁺_0, r⁻_0, r⁺_1, r⁻_1)
	// has mean 1 and variance (0+4+1+1)/4 = 1.5.
	if s := RewardStd([]float64{1, 0}, []float64{3, 0}); math.Abs(s-math.Sqrt(1.5)) > 1e-15 {
		t.Errorf("σ = %v, want √1.5", s)
	}
	if s := RewardStd([]float64{math.NaN(), 0}, []float64{0, 0}); !math.IsNaN(s) {
		t.Errorf("NaN return: σ = %v, want NaN", s)
	}
}

// TestGradientHand: ε_0 = [1, 0], ε_1 = [0, 3], σ = 2.
//   - r⁺ = [2, 2], r⁻ = [−2, −2]: coefficients 4/2 = 2 and 2;
//     g = (2·[1,0] + 2·[0,3])/2 = [1, 3].
//   - r⁺ = [2, −2], r⁻ = [−2, 2]: coefficients 2 and −2; g = [1, −3].
//
// Then ES-Adam's first step from these g moves each coordinate by about
// ±α: step = α·ĝ/(|ĝ| + 1e-8) with ĝ = g up to bias-correction roundoff,
// so |step| = α·(1 − O(1e-8/|g|)).
func TestGradientHand(t *testing.T) {
	dirs := [][]float64{{1, 0}, {0, 3}}
	g := make([]float64, 2)
	Gradient(g, dirs, []float64{2, 2}, []float64{-2, -2}, 2)
	if !slices.Equal(g, []float64{1, 3}) {
		t.Errorf("g = %v, want [1 3]", g)
	}
	Gradient(g, dirs, []float64{2, -2}, []float64{-2, 2}, 2)
	if !slices.Equal(g, []float64{1, -3}) {
		t.Errorf("g = %v, want [1 −3]", g)
	}
	const alpha = 0.1
	step := algos.NewESAdam(2, alpha).Step(g)
	for j, s := range step {
		want := math.Copysign(alpha, g[j])
		if math.Abs(s-want) > alpha*(1e-8/math.Abs(g[j])+1e-12) {
			t.Errorf("step[%d] = %v, want ≈ %v", j, s, want)
		}
	}
}

func TestPerturb(t *testing.T) {
	plus, minus := make([]float64, 2), make([]float64, 2)
	Perturb(plus, minus, []float64{1, -1}, []float64{2, 4}, 0.5)
	if !slices.Equal(plus, []float64{2, 1}) || !slices.Equal(minus, []float64{0, -3}) {
		t.Fatalf("plus %v, minus %v", plus, minus)
	}
}

// TestStepComposition: two Steps on the fake environment equal the
// composition of the pure functions on the documented streams, bit for bit:
// ε_k from "directions"(it, k), episodes from "episodes"(it, k, sign), σ,
// Gradient, ES-Adam ascent; 2·N·H samples; train_return the mean.
func TestStepComposition(t *testing.T) {
	env := &fake{p: 2, n: 3, h: 7}
	cfg := Config{Alpha: 0.05, Directions: 3, Nu: 0.2}
	src := testSource()
	a := mustNew(t, cfg, env, src, nil)
	w := make([]float64, 6)
	adam := algos.NewESAdam(6, cfg.Alpha)
	for it := int64(1); it <= 2; it++ {
		dirs := make([][]float64, cfg.Directions)
		rp, rm := make([]float64, cfg.Directions), make([]float64, cfg.Directions)
		var sum float64
		for k := range dirs {
			rng := src.Rand("directions", uint64(it), uint64(k))
			dirs[k] = make([]float64, 6)
			for j := range dirs[k] {
				dirs[k][j] = rng.NormFloat64()
			}
			plus, minus := make([]float64, 6), make([]float64, 6)
			Perturb(plus, minus, w, dirs[k], cfg.Nu)
			rp[k], _ = env.Rollout(src.Rand("episodes", uint64(it), uint64(k), 0), plus, -1, nil, nil)
			rm[k], _ = env.Rollout(src.Rand("episodes", uint64(it), uint64(k), 1), minus, -1, nil, nil)
			sum += rp[k]
			sum += rm[k]
		}
		g := make([]float64, 6)
		Gradient(g, dirs, rp, rm, RewardStd(rp, rm))
		for j, s := range adam.Step(g) {
			w[j] += s
		}
		st, err := a.Step(it)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Params(), w) {
			t.Fatalf("it %d: W = %v, want %v", it, a.Params(), w)
		}
		if st.Samples != 2*3*7 || st.Done || len(st.Metrics) != 1 || st.Metrics[0] != (task.Metric{Name: "train_return", Value: sum / 6}) {
			t.Fatalf("it %d: stat %+v", it, st)
		}
	}
}

// TestFirstStepAlpha: from W = 0 the first update moves every coordinate
// by about ±α (ES-Adam, spec §1).
func TestFirstStepAlpha(t *testing.T) {
	const alpha = 0.03
	a := mustNew(t, Config{Alpha: alpha, Directions: 4, Nu: 0.1}, &fake{p: 2, n: 5, h: 3}, testSource(), nil)
	if _, err := a.Step(1); err != nil {
		t.Fatal(err)
	}
	for j, v := range a.Params() {
		if math.Abs(math.Abs(v)-alpha) > alpha*1e-6 {
			t.Errorf("W[%d] = %v, want ±%v", j, v, alpha)
		}
	}
}

// TestConverger: the hook gets src.Rand("converged", it), its metrics are
// appended, and Done ends the driver's run at that iteration (the third,
// after 3·2·2·5 samples).
func TestConverger(t *testing.T) {
	env := &episodictest.Stopper{Episodic: &fake{p: 1, n: 2, h: 5}, StopAt: 3}
	src := testSource()
	a := mustNew(t, Config{Alpha: 0.01, Directions: 2, Nu: 0.1}, env, src, nil)
	episodictest.CheckConverger(t, a, src, 3, 3*2*2*5)
}

// TestRolloutError: a failing episode fails the Step with the error wrapped
// (serial and parallel), and W is unchanged.
func TestRolloutError(t *testing.T) {
	boom := &fake{p: 1, n: 2, h: 5, fail: func(W []float64) bool { return W[0] < 0 }}
	episodictest.CheckRolloutError(t, func(par episodic.Parallel) algos.Method {
		return mustNew(t, Config{Alpha: 0.01, Directions: 3, Nu: 0.1}, boom, testSource(), par)
	}, []float64{0, 0})
}

// lqrEnv is a small LQR instance; tol decides whether the stationarity
// stop can fire.
func lqrEnv(t testing.TB, n, h int, c, tol float64) *lqr.Instance {
	return episodictest.LQR(t, n, h, c, tol, testSource().Rand("x0star"))
}

// TestParallelSameBits: serial and goroutine-parallel rollouts give the
// same events (digests of W and metrics) bit for bit over 5 iterations;
// run with -cpu=1,4.
func TestParallelSameBits(t *testing.T) {
	env := lqrEnv(t, 100, 100, 0.01, 1e-12)
	cfg := Config{Alpha: 3e-3, Directions: 10, Nu: 0.05}
	episodictest.CheckParallelSameBits(t, func(par episodic.Parallel) algos.Method {
		return mustNew(t, cfg, env, testSource(), par)
	}, algos.Budget{Samples: 5 * 2000}, 5)
}

// TestResume: interrupting and resuming from checkpoints reproduces the
// uninterrupted run bit for bit (LQR, n = 10, H = 20, 15 iterations).
func TestResume(t *testing.T) {
	env := lqrEnv(t, 10, 20, 0.05, 1e-12)
	cfg := Config{Alpha: 0.01, Directions: 3, Nu: 0.05}
	newMethod := func() algos.Method {
		return mustNew(t, cfg, env, testSource(), episodictest.Goroutines)
	}
	_, events := algostest.CheckResume(t, newMethod, algos.Budget{Samples: 15 * 2 * 3 * 20}, algos.Schedule{Every: 4}, []int64{1, 6, 12})
	if len(events) != 15 {
		t.Fatalf("%d iterations, want 15", len(events))
	}
}

// TestUnmarshalStateErrors: W is 1×3; the bad blob has an ES-Adam over 5
// coordinates.
func TestUnmarshalStateErrors(t *testing.T) {
	env := &fake{p: 1, n: 3, h: 2}
	newARS := func(env episodic.Episodic) *ARS {
		return mustNew(t, Config{Alpha: 0.01, Directions: 2, Nu: 0.1}, env, testSource(), nil)
	}
	episodictest.CheckStateErrors(t, newARS(env), newARS(env), newARS(&fake{p: 1, n: 4, h: 2}), stateMagic, stateVersion, 5)
}

func TestFactory(t *testing.T) {
	f := Factory[episodic.Episodic]{}
	if !slices.Equal(f.Hyper(), []string{"alpha", "directions", "nu"}) {
		t.Fatalf("Hyper = %v", f.Hyper())
	}
	p := task.NewParams("dag.yaml", "train/lqr", map[string]any{"alpha": 0.003, "directions": 10, "nu": 0.05})
	cfg := f.Decode(p)
	if err := p.Err(); err != nil || cfg != (Config{Alpha: 0.003, Directions: 10, Nu: 0.05, DiagnosticsEvery: 10}) || cfg.Validate() != nil || cfg.Header().Method != "arsv1" {
		t.Fatalf("Decode = %+v, %v", cfg, err)
	}
	p = task.NewParams("dag.yaml", "train/lqr", map[string]any{"alpha": 0, "directions": 0, "nu": -1})
	f.Decode(p)
	if err := p.Err(); err == nil {
		t.Fatal("invalid parameters accepted")
	}
	m, err := f.New(cfg, lqrEnv(t, 100, 100, 0.01, 0.05), testSource())
	if err != nil || len(m.Params()) != 100 {
		t.Fatalf("New: %v", err)
	}
	if _, err := New(Config{Alpha: math.Inf(1), Directions: 1, Nu: 1}, &fake{p: 1, n: 1, h: 1}, testSource(), episodic.Options{}); !errors.Is(err, episodic.ErrConfig) {
		t.Fatalf("infinite alpha: %v", err)
	}
}

// TestEstimatorAscends: the ARS estimate points uphill in return, i.e.
// along −∇J of the LQR's exact expected cost. At a fixed W (not updated),
// the mean of g = Gradient(...) over 300 iterations of N = 10 directions
// (ν = 0.01, σ-normalized as in Step) has cosine > 0.5 with −∇J(W), on an
// LQR with n = 20, H = 50 (small for -race). (On the paper's LQR the
// objective is very flat, J(0) ≈ 0.5416 against a minimum ≈ 0.5380 at
// c = 0.01, and returns are heavy-tailed, so a descent-in-J check on a
// short run is not a reliable test; the direction is.)
func TestEstimatorAscends(t *testing.T) {
	env := lqrEnv(t, 20, 50, 0.01, 1e-12)
	const n, iters, nu = 10, 300, 0.01
	W := make([]float64, env.N)
	W[0] = 0.01
	_, gradJ := env.Expected(W)
	src := testSource()
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
			Perturb(plus, minus, W, dirs[k], nu)
			rp[k], _ = env.Rollout(src.Rand("episodes", it, uint64(k), 0), plus, -1, nil, nil)
			rm[k], _ = env.Rollout(src.Rand("episodes", it, uint64(k), 1), minus, -1, nil, nil)
		}
		Gradient(g, dirs, rp, rm, RewardStd(rp, rm))
		for j := range mean {
			mean[j] += g[j] / iters
		}
	}
	var dp, nm, ng float64
	for j := range mean {
		dp -= mean[j] * gradJ[j]
		nm += mean[j] * mean[j]
		ng += gradJ[j] * gradJ[j]
	}
	cos := dp / math.Sqrt(nm*ng)
	t.Logf("cos(mean g, −∇J) = %.3f", cos)
	if !(cos > 0.5) {
		t.Errorf("cos(mean g, −∇J) = %v, want > 0.5", cos)
	}
}

// BenchmarkARSIterationLQR is one iteration on the paper's LQR (n = H = 100,
// N = 10: 2000 environment steps plus the stationarity check), serial.
func BenchmarkARSIterationLQR(b *testing.B) {
	env := lqrEnv(b, 100, 100, 0.01, 1e-12)
	a := mustNew(b, Config{Alpha: 3e-3, Directions: 10, Nu: 0.05}, env, testSource(), nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.Step(int64(i + 1)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*2000)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkARSIterationLQRParallel is the same with goroutine-parallel
// rollouts.
func BenchmarkARSIterationLQRParallel(b *testing.B) {
	env := lqrEnv(b, 100, 100, 0.01, 1e-12)
	a := mustNew(b, Config{Alpha: 3e-3, Directions: 10, Nu: 0.05}, env, testSource(), episodictest.Goroutines)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.Step(int64(i + 1)); err != nil {
			b.Fatal(err)
		}
	}
}
