package exact

import (
	"errors"
	"math"
	"slices"
	"testing"

	"zorepro/algos"
	"zorepro/algos/episodic"
	"zorepro/algos/episodic/episodictest"
	"zorepro/pipeline/stream"
)

func testSource() stream.Source { return stream.New(97554704, "test/algos/exact", nil) }

// mustNew is New with Options{Parallel: par}, failing t on error.
func mustNew(t testing.TB, cfg Config, env episodic.Episodic, src stream.Source, par episodic.Parallel) *ExAct {
	t.Helper()
	return episodictest.Must(t, New, cfg, env, src, par)
}

// TestRewardStdHand: the N one-point placeholders count as zeros.
//   - R = [4, 4]: {4, 4, 0, 0} has mean 2 and σ = √(16/4) = 2 (without the
//     zeros σ would be 0, i.e. 1 after the guard);
//   - R = [3]: {3, 0}: σ = 1.5;
//   - R = [1, 2, 3]: {1, 2, 3, 0, 0, 0}: mean 1, σ = √(8/6);
//   - R = [0, 0]: σ = 0, guarded to 1.
func TestRewardStdHand(t *testing.T) {
	if s := RewardStd([]float64{4, 4}); s != 2 {
		t.Errorf("R = [4 4]: σ = %v, want 2", s)
	}
	if s := RewardStd([]float64{3}); s != 1.5 {
		t.Errorf("R = [3]: σ = %v, want 1.5", s)
	}
	if s := RewardStd([]float64{1, 2, 3}); math.Abs(s-math.Sqrt(8.0/6)) > 1e-15 {
		t.Errorf("R = [1 2 3]: σ = %v, want √(4/3)", s)
	}
	if s := RewardStd([]float64{0, 0}); s != 1 {
		t.Errorf("R = 0: σ = %v, want 1", s)
	}
	if s := RewardStd([]float64{-0.5, math.NaN()}); !math.IsNaN(s) {
		t.Errorf("NaN return: σ = %v, want NaN", s)
	}
}

// TestGradientHand:
//   - p = 1, n = 2: ε = [[1], [−1]], s = [[1, 2], [3, 4]], R = [4, 4], σ = 2:
//     c = 2 for both; G = (2·[1, 2] − 2·[3, 4])/2 = [−2, −2].
//   - p = 2, n = 2, N = 1: ε = [1, 2], s = [3, 5], R = 3, σ = 1.5: c = 2;
//     G = 2·ε sᵀ = [[6, 10], [12, 20]].
//
// ES-Adam's first step from these G moves each coordinate by about ±α.
func TestGradientHand(t *testing.T) {
	G := make([]float64, 2)
	Gradient(G, [][]float64{{1}, {-1}}, [][]float64{{1, 2}, {3, 4}}, []float64{4, 4}, RewardStd([]float64{4, 4}))
	if !slices.Equal(G, []float64{-2, -2}) {
		t.Errorf("G = %v, want [−2 −2]", G)
	}
	G = make([]float64, 4)
	Gradient(G, [][]float64{{1, 2}}, [][]float64{{3, 5}}, []float64{3}, RewardStd([]float64{3}))
	if !slices.Equal(G, []float64{6, 10, 12, 20}) {
		t.Errorf("G = %v, want [6 10 12 20]", G)
	}
	const alpha = 0.2
	for j, s := range algos.NewESAdam(4, alpha).Step(G) {
		if math.Abs(s-alpha) > alpha*(1e-8/G[j]+1e-12) {
			t.Errorf("step[%d] = %v, want ≈ %v", j, s, alpha)
		}
	}
}

// TestStepComposition: two Steps equal the composition of the pure
// functions on the documented streams, bit for bit: t_k from
// "timesteps"(it, k), ε_k from "directions"(it, k), the episode from
// "episodes"(it, k); N·H samples; train_return the mean return.
func TestStepComposition(t *testing.T) {
	env := &episodictest.Fake{P: 2, N: 3, H: 7}
	cfg := Config{Config: episodic.Config{Alpha: 0.05, Directions: 3, Nu: 0.2}, Variant: OneStep}
	src := testSource()
	e := mustNew(t, cfg, env, src, nil)
	w := make([]float64, 6)
	adam := algos.NewESAdam(6, cfg.Alpha)
	for it := int64(1); it <= 2; it++ {
		N := cfg.Directions
		eps, obs, rets := make([][]float64, N), make([][]float64, N), make([]float64, N)
		var sum float64
		for k := 0; k < N; k++ {
			tk := src.Rand("timesteps", uint64(it), uint64(k)).IntN(7)
			rng := src.Rand("directions", uint64(it), uint64(k))
			eps[k] = []float64{rng.NormFloat64(), rng.NormFloat64()}
			delta := []float64{cfg.Nu * eps[k][0], cfg.Nu * eps[k][1]}
			obs[k] = make([]float64, 3)
			rets[k], _ = env.Rollout(src.Rand("episodes", uint64(it), uint64(k)), w, tk, delta, obs[k])
			sum += rets[k]
		}
		G := make([]float64, 6)
		Gradient(G, eps, obs, rets, RewardStd(rets))
		for j, s := range adam.Step(G) {
			w[j] += s
		}
		episodictest.CheckStep(t, e, it, w, 3*7, sum/3)
	}
}

// TestFirstStepAlpha: from W = 0 the first update moves every coordinate
// by about ±α.
func TestFirstStepAlpha(t *testing.T) {
	const alpha = 0.003
	e := mustNew(t, Config{Config: episodic.Config{Alpha: alpha, Directions: 5, Nu: 0.1}, Variant: OneStep}, &episodictest.Fake{P: 2, N: 4, H: 6}, testSource(), nil)
	episodictest.CheckFirstStepAlpha(t, e, alpha)
}

// TestTimestepsUniform: t_k covers 0..H−1 (each about equally often).
func TestTimestepsUniform(t *testing.T) {
	const h = 5
	counts := make([]int, h)
	src := testSource()
	for it := uint64(1); it <= 1000; it++ {
		counts[src.Rand("timesteps", it, 0).IntN(h)]++
	}
	for i, c := range counts {
		if c < 150 || c > 250 {
			t.Errorf("t = %d drawn %d times in 1000, want ≈ 200", i, c)
		}
	}
}

// TestConverger: the hook gets src.Rand("converged", it), its metrics are
// appended, and Done ends the driver's run at that iteration (the fourth,
// after 4·2·5 samples).
func TestConverger(t *testing.T) {
	env := &episodictest.Stopper{Episodic: &episodictest.Fake{P: 1, N: 2, H: 5}, StopAt: 4}
	src := testSource()
	e := mustNew(t, Config{Config: episodic.Config{Alpha: 0.01, Directions: 2, Nu: 0.1}, Variant: OneStep}, env, src, nil)
	episodictest.CheckConverger(t, e, src, 4, 4*2*5)
}

// TestRolloutError: a failing episode fails the Step (serial and
// parallel), and W is unchanged.
func TestRolloutError(t *testing.T) {
	boom := &episodictest.Fake{P: 1, N: 2, H: 5, Fail: func([]float64) bool { return true }}
	episodictest.CheckRolloutError(t, func(par episodic.Parallel) algos.Method {
		return mustNew(t, Config{Config: episodic.Config{Alpha: 0.01, Directions: 3, Nu: 0.1}, Variant: OneStep}, boom, testSource(), par)
	}, []float64{0, 0})
}

// TestUnmarshalStateErrors: W is 1×3 (the other method's 2×3); the bad blob
// has an ES-Adam over 4 coordinates.
func TestUnmarshalStateErrors(t *testing.T) {
	newExAct := func(env episodic.Episodic) *ExAct {
		return mustNew(t, Config{Config: episodic.Config{Alpha: 0.01, Directions: 2, Nu: 0.1}, Variant: OneStep}, env, testSource(), nil)
	}
	episodictest.CheckStateErrors(t, newExAct(&episodictest.Fake{P: 1, N: 3, H: 2}), newExAct(&episodictest.Fake{P: 1, N: 3, H: 2}), newExAct(&episodictest.Fake{P: 2, N: 3, H: 2}), stateMagic, stateVersion, 4)
}

func TestFactory(t *testing.T) {
	episodictest.CheckFactory(t, Factory[episodic.Episodic]{}, testSource(),
		Config{Config: episodic.Config{Alpha: 0.003, Directions: 10, Nu: 0.05, DiagnosticsEvery: 10}, Variant: OneStep}, "exact",
		map[string]any{"alpha": -1, "directions": 0, "nu": 0})
	if _, err := New(Config{Config: episodic.Config{Alpha: 1, Directions: 1, Nu: math.NaN()}, Variant: OneStep}, &episodictest.Fake{P: 1, N: 1, H: 1}, testSource(), episodic.Options{}); !errors.Is(err, episodic.ErrConfig) {
		t.Fatalf("NaN nu: %v", err)
	}
}
