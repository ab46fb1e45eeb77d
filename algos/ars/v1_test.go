package ars

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

func testSourceV1() stream.Source { return stream.New(53307867, "test/algos/arsv1", nil) }

// mustNewV1 is NewV1 with Options{Parallel: par}, failing t on error.
func mustNewV1(t testing.TB, cfg V1Config, env episodic.Episodic, src stream.Source, par episodic.Parallel) *V1 {
	t.Helper()
	return episodictest.Must(t, NewV1, cfg, env, src, par)
}

// TestV1RewardStdHand: r⁺ = [2, 2], r⁻ = [−2, −2] have mean 0 and
// σ = √(16/4) = 2; N = 1 gives 1 (no normalization); equal returns give 1.
func TestV1RewardStdHand(t *testing.T) {
	if s := v1RewardStd([]float64{2, 2}, []float64{-2, -2}); s != 2 {
		t.Errorf("σ = %v, want 2", s)
	}
	if s := v1RewardStd([]float64{2, -2}, []float64{-2, 2}); s != 2 {
		t.Errorf("σ = %v, want 2", s)
	}
	if s := v1RewardStd([]float64{5}, []float64{1}); s != 1 {
		t.Errorf("N = 1: σ = %v, want 1", s)
	}
	if s := v1RewardStd([]float64{-3, -3, -3}, []float64{-3, -3, -3}); s != 1 {
		t.Errorf("zero spread: σ = %v, want 1", s)
	}
	// Population (not sample) std: [1, 3, 0, 0] (r⁺_0, r⁻_0, r⁺_1, r⁻_1)
	// has mean 1 and variance (0+4+1+1)/4 = 1.5.
	if s := v1RewardStd([]float64{1, 0}, []float64{3, 0}); math.Abs(s-math.Sqrt(1.5)) > 1e-15 {
		t.Errorf("σ = %v, want √1.5", s)
	}
	if s := v1RewardStd([]float64{math.NaN(), 0}, []float64{0, 0}); !math.IsNaN(s) {
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
	env := &episodictest.Fake{P: 2, N: 3, H: 7}
	cfg := V1Config{Alpha: 0.05, Directions: 3, Nu: 0.2}
	src := testSourceV1()
	a := mustNewV1(t, cfg, env, src, nil)
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
		Gradient(g, dirs, rp, rm, v1RewardStd(rp, rm))
		for j, s := range adam.Step(g) {
			w[j] += s
		}
		episodictest.CheckStep(t, a, it, w, 2*3*7, sum/6)
	}
}

// TestFirstStepAlpha: from W = 0 the first update moves every coordinate
// by about ±α (ES-Adam, spec §1).
func TestFirstStepAlpha(t *testing.T) {
	const alpha = 0.03
	a := mustNewV1(t, V1Config{Alpha: alpha, Directions: 4, Nu: 0.1}, &episodictest.Fake{P: 2, N: 5, H: 3}, testSourceV1(), nil)
	episodictest.CheckFirstStepAlpha(t, a, alpha)
}

// TestConverger: the hook gets src.Rand("converged", it), its metrics are
// appended, and Done ends the driver's run at that iteration (the third,
// after 3·2·2·5 samples).
func TestConverger(t *testing.T) {
	env := &episodictest.Stopper{Episodic: &episodictest.Fake{P: 1, N: 2, H: 5}, StopAt: 3}
	src := testSourceV1()
	a := mustNewV1(t, V1Config{Alpha: 0.01, Directions: 2, Nu: 0.1}, env, src, nil)
	episodictest.CheckConverger(t, a, src, 3, 3*2*2*5)
}

// TestRolloutError: a failing episode fails the Step with the error wrapped
// (serial and parallel), and W is unchanged.
func TestRolloutError(t *testing.T) {
	boom := &episodictest.Fake{P: 1, N: 2, H: 5, Fail: func(W []float64) bool { return W[0] < 0 }}
	episodictest.CheckRolloutError(t, func(par episodic.Parallel) algos.Method {
		return mustNewV1(t, V1Config{Alpha: 0.01, Directions: 3, Nu: 0.1}, boom, testSourceV1(), par)
	}, []float64{0, 0})
}

// TestUnmarshalStateErrors: W is 1×3; the bad blob has an ES-Adam over 5
// coordinates.
func TestUnmarshalStateErrors(t *testing.T) {
	env := &episodictest.Fake{P: 1, N: 3, H: 2}
	newARS := func(env episodic.Episodic) *V1 {
		return mustNewV1(t, V1Config{Alpha: 0.01, Directions: 2, Nu: 0.1}, env, testSourceV1(), nil)
	}
	episodictest.CheckStateErrors(t, newARS(env), newARS(env), newARS(&episodictest.Fake{P: 1, N: 4, H: 2}), v1StateMagic, v1StateVersion, 5)
}

func TestFactory(t *testing.T) {
	episodictest.CheckFactory(t, V1Factory[episodic.Episodic]{}, testSourceV1(),
		V1Config{Alpha: 0.003, Directions: 10, Nu: 0.05, DiagnosticsEvery: 10}, "arsv1",
		map[string]any{"alpha": 0, "directions": 0, "nu": -1})
	if _, err := NewV1(V1Config{Alpha: math.Inf(1), Directions: 1, Nu: 1}, &episodictest.Fake{P: 1, N: 1, H: 1}, testSourceV1(), episodic.Options{}); !errors.Is(err, episodic.ErrConfig) {
		t.Fatalf("infinite alpha: %v", err)
	}
}
