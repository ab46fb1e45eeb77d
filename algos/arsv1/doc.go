// Package arsv1 is the multi-step "ARS V1" of repo A as the paper's MuJoCo
// and LQR experiments ran it (spec §4.2, §5.3): parameter-space exploration
// of a linear policy a = W s (W is p×n, zero-initialised, no observation
// filter, no top-b selection), with every direction's return difference
// scaled by the population std of all 2N returns, and an ES-Adam step
// (algos.ESAdam, spec §1) ADDED to W because g is an ascent direction.
//
// One iteration it:
//
//	ε_k ~ N(0, I_{p×n})                    k = 0..N−1, from src.Rand("directions", it, k), row-major
//	R⁺_k = return of one episode of W + ν·ε_k   rollout rng src.Rand("episodes", it, k, 0)
//	R⁻_k = return of one episode of W − ν·ε_k   rollout rng src.Rand("episodes", it, k, 1)
//	σ    = RewardStd(R⁺, R⁻)               population std of the 2N returns (N > 1; else 1; 0 → 1)
//	g    = (1/N) Σ_k ((R⁺_k − R⁻_k)/σ)·ε_k   Gradient
//	W   += ESAdam.Step(g)
//
// It consumes 2·N·H environment steps. Each rollout starts from its own
// fresh reset drawn from its own stream, so the 2N rollouts may run in
// parallel (episodic.Options) with results bit-identical to a serial run:
// every rollout writes only its own slot, and σ, g and the reported mean
// return are reduced in index order (R⁺_0, R⁻_0, R⁺_1, ...) afterwards.
//
// If the environment also implements episodic.Converger, Step calls it
// after the update with the new W and src.Rand("converged", it), appends its
// metrics and sets Stat.Done when it reports convergence: that is the LQR
// stationarity stop of §5.2. The sample budget is the driver's (algos.Run).
//
// The environment interface (episodic.Episodic), the hyperparameters
// (episodic.Config) and the state W with its ES-Adam (episodic.Policy) are
// shared with algos/exact through algos/episodic, so an environment written
// once (envs/lqr, envs/mujoco) serves both.
package arsv1
