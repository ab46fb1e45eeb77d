// Package exact is ExAct as the paper's MuJoCo and LQR experiments ran it
// (spec §4.3, §5.3): action-space exploration of a linear policy a = W s
// (W is p×n, zero-initialised, no observation filter), "coord" one-point
// version with the whole-episode return and an ES-Adam step (algos.ESAdam,
// spec §1) ADDED to W.
//
// One iteration it, for each direction k = 0..N−1:
//
//	t_k ~ U{0, ..., H−1}      src.Rand("timesteps", it, k).IntN(H)
//	ε_k ~ N(0, I_p)           src.Rand("directions", it, k), p normals
//	one episode with policy W, except that step t_k executes W s + ν·ε_k;
//	    rollout rng src.Rand("episodes", it, k)
//	s_k = s_{t_k}             the observation before that action
//	R_k = the WHOLE episode's return (steps 0..H−1, §6.8)
//
// then
//
//	σ = RewardStd(R)          population std of {R_1..R_N, 0, …, 0} (N zeros, §6.9; 0 → 1)
//	G = (1/N) Σ_k (R_k/σ)·ε_k s_kᵀ      Gradient, p×n
//	W += ESAdam.Step(G)
//
// It consumes N·H environment steps. No baseline is subtracted: R_k
// multiplies ε_k raw (§4.3). Rollouts may run in parallel (episodic.Options)
// with results bit-identical to a serial run; every reduction runs in index
// order afterwards.
//
// If the environment also implements episodic.Converger, Step calls it after
// the update with the new W and src.Rand("converged", it), appends its
// metrics and sets Stat.Done when it reports convergence (the LQR
// stationarity stop, §5.2).
//
// The environment interface (episodic.Episodic), the hyperparameters
// (episodic.Config) and the state W with its ES-Adam (episodic.Policy) are
// shared with algos/arsv1 through algos/episodic, so one environment serves
// both.
package exact
