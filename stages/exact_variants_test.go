package stages_test

import (
	"slices"
	"testing"

	"zorepro/algos"
	"zorepro/algos/episodic"
	"zorepro/algos/episodic/episodictest"
	"zorepro/algos/exact"
	"zorepro/envs/lqr"
	"zorepro/pipeline/stream"
)

// variantEstimate draws one iteration's estimate G of ExAct's variant at W
// from its documented pieces on the LQR: t_k from "timesteps"(it, k)
// (reward-to-go), ε_k from "directions"(it, k) (p normals, or H·p for
// all-steps, step-major), the episode from "episodes"(it, k) through
// Episode; each direction scored by the return from t_k on (summed in step
// order) or the whole return; σ over the scores; Gradient or
// GradientAllSteps. It returns G and the whole returns.
func variantEstimate(env *lqr.Instance, src stream.Source, variant string, W []float64, n int, nu float64, it uint64) (G, rets []float64) {
	h := env.H
	eps, obs, scores := make([][]float64, n), make([][]float64, n), make([]float64, n)
	rets = make([]float64, n)
	for k := 0; k < n; k++ {
		ep := src.Rand("episodes", it, uint64(k))
		switch variant {
		case exact.RewardToGo:
			tk := src.Rand("timesteps", it, uint64(k)).IntN(h)
			eps[k] = []float64{src.Rand("directions", it, uint64(k)).NormFloat64()}
			obs[k] = make([]float64, env.N)
			rew := make([]float64, h)
			rets[k], _ = env.Episode(ep, W, []int{tk}, []float64{nu * eps[k][0]}, obs[k], rew)
			for _, r := range rew[tk:] {
				scores[k] += r
			}
		case exact.AllSteps:
			rng := src.Rand("directions", it, uint64(k))
			eps[k], obs[k] = make([]float64, h), make([]float64, h*env.N)
			delta, steps := make([]float64, h), make([]int, h)
			for t := range eps[k] {
				eps[k][t] = rng.NormFloat64()
				delta[t], steps[t] = nu*eps[k][t], t
			}
			rets[k], _ = env.Episode(ep, W, steps, delta, obs[k], nil)
			scores[k] = rets[k]
		}
	}
	G = make([]float64, len(W))
	if variant == exact.AllSteps {
		exact.GradientAllSteps(G, 1, eps, obs, scores, exact.RewardStd(scores))
	} else {
		exact.Gradient(G, eps, obs, scores, exact.RewardStd(scores))
	}
	return G, rets
}

// ExAct's reward-to-go and all-steps variants step, bit for bit, as the
// composition of their pieces (variantEstimate, then the ES-Adam ascent),
// with N·H samples an iteration and the mean whole return as train_return.
func TestExActVariantsCompose(t *testing.T) {
	for _, variant := range []string{exact.RewardToGo, exact.AllSteps} {
		t.Run(variant, func(t *testing.T) {
			env := lqrEnv(t, 3, 5, 0.01, 1e-12, exactSource())
			cfg := exact.Config{Config: episodic.Config{Alpha: 0.01, Directions: 4, Nu: 0.1}, Variant: variant}
			m := episodictest.Must(t, exact.New, cfg, env, exactSource(), nil)
			w := make([]float64, 3)
			adam := algos.NewESAdam(3, cfg.Alpha)
			for it := int64(1); it <= 3; it++ {
				G, rets := variantEstimate(env, exactSource(), variant, w, 4, cfg.Nu, uint64(it))
				for j, s := range adam.Step(G) {
					w[j] += s
				}
				var sum float64
				for _, r := range rets {
					sum += r
				}
				st, err := m.Step(it)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(m.Params(), w) {
					t.Fatalf("it %d: W = %v, composed %v", it, m.Params(), w)
				}
				if st.Samples != 4*5 || st.Metrics[0].Name != "train_return" || st.Metrics[0].Value != sum/4 {
					t.Fatalf("it %d: stat %+v, want 20 samples and train_return %v", it, st, sum/4)
				}
			}
		})
	}
}

// On the small deterministic LQR of TestExActEstimatorAscends, the mean
// estimate of each variant points uphill in return: cosine > 0.5 with
// −∇J(W).
func TestExActVariantsAscend(t *testing.T) {
	for _, variant := range []string{exact.RewardToGo, exact.AllSteps} {
		t.Run(variant, func(t *testing.T) {
			env := lqrEnv(t, 3, 3, 0, 1e-12, exactSource())
			W := []float64{0.5, 0, 0}
			_, gradJ := env.Expected(W)
			const iters = 3000
			mean := make([]float64, 3)
			src := exactSource()
			for it := uint64(1); it <= iters; it++ {
				G, _ := variantEstimate(env, src, variant, W, 10, 0.1, it)
				for j := range mean {
					mean[j] += G[j] / iters
				}
			}
			checkUphill(t, mean, gradJ)
		})
	}
}

// The one-step variant needs no Perturber; the others refuse an
// environment without one.
func TestExActVariantNeedsPerturber(t *testing.T) {
	fake := &episodictest.Fake{P: 1, N: 2, H: 3}
	for _, variant := range exact.Variants {
		_, err := exact.New(exact.Config{Config: episodic.Config{Alpha: 0.01, Directions: 2, Nu: 0.1}, Variant: variant}, fake, exactSource(), episodic.Options{})
		if (err == nil) != (variant == exact.OneStep) {
			t.Errorf("%s on an environment without Episode: %v", variant, err)
		}
	}
	if _, err := exact.New(exact.Config{Config: episodic.Config{Alpha: 0.01, Directions: 2, Nu: 0.1}, Variant: "both"}, fake, exactSource(), episodic.Options{}); err == nil {
		t.Error("an unknown variant was accepted")
	}
}

// Episode with one perturbed step is Rollout, bit for bit, and its rewards
// add up (in step order) to the return, on the LQR and (mujoco_test.go)
// on MuJoCo.
func TestEpisodeIsRollout(t *testing.T) {
	env := lqrEnv(t, 4, 6, 0.05, 1e-12, exactSource())
	W := []float64{0.1, -0.2, 0.05, 0.3}
	for tk := 0; tk < 6; tk++ {
		obs1, obs2, rew := make([]float64, 4), make([]float64, 4), make([]float64, 6)
		r1, _ := env.Rollout(exactSource().Rand("e", uint64(tk)), W, tk, []float64{0.7}, obs1)
		r2, _ := env.Episode(exactSource().Rand("e", uint64(tk)), W, []int{tk}, []float64{0.7}, obs2, rew)
		var sum float64
		for _, r := range rew {
			sum += r
		}
		if r1 != r2 || !slices.Equal(obs1, obs2) || sum != r1 {
			t.Errorf("t = %d: Rollout %v, Episode %v (rewards sum to %v); obs %v, %v", tk, r1, r2, sum, obs1, obs2)
		}
	}
}
