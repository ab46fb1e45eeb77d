// Package ars is Augmented Random Search: parameter-space exploration in
// the two forms the paper runs.
//
// # ARS V2-t (Factory, ARS; spec §2.6, §3.7, §6 item 20)
//
// One-step ARS with input normalization, top-b directions and reward-std
// scaling, for contextual problems (Problem, Queries): linear regression
// (envs/linreg: a linear prediction, reward −½ squared error) and the MNIST
// LeNet (envs/mnist: a ±1 reward for a label sampled from the softmax).
// The method keeps θ and running statistics (algos.RunningStat) of the
// problem's raw features. One iteration it, with N directions, top b, step
// α and perturbation ν:
//
//	examples                        N, one per direction, drawn by the problem ("batch"[it])
//	μ, s := stats.Mean, stats.Std   BEFORE this iteration's pushes (iteration 1: μ = 0, s = 1)
//	Δ_k ~ N(0, I_d)                 k = 0..N−1, NormFloat64 in order from "directions"[it, k] (Direction)
//	r±_k                            the problem's rewards of θ ± ν·Δ_k on example k standardized with μ, s
//	stats.Push(x_0), ..., stats.Push(x_{N−1})        the raw features, in index order
//	kept = Select(r+, r−, b)        top b by max(r+_k, r−_k), stable, ties to the lower index
//	σ    = RewardStd(r+, r−, kept)  population std of the 2b kept rewards (0 → 1)
//	θ   += α/(b·σ) · Σ_{k ∈ kept, ascending} (r+_k − r−_k)·Δ_k      Update
//
// and consumes 2N samples. The N directions (drawing Δ_k and both queries)
// are independent units: SetParallel lends them a worker pool
// (algos.Parallelizer); each writes only its own slots, and the pushes,
// selection, σ, the update and the reported mean reward run afterwards in
// index order, so results are bit-identical for any number of workers.
// Snapshot: θ ‖ μ ‖ s with the CURRENT statistics (after the last
// iteration's pushes), layout normalized; evaluation standardizes with
// them. Each iteration reports "train_reward", the mean of the 2N rewards
// (summed r+_0, r−_0, r+_1, ... in order). State ("ZARS" v1): θ and the
// statistics.
//
// # ARS V1 (V1Factory, V1; spec §4.2, §5.3)
//
// The multi-step "ARS V1" of repo A as the MuJoCo and LQR experiments ran
// it: a linear policy a = W s (W is p×n, zero-initialised, no observation
// filter, no top-b selection) on an episodic.Episodic environment, every
// direction's return difference scaled by the population std of all 2N
// returns, and an ES-Adam step (algos.ESAdam, spec §1) ADDED to W because g
// is an ascent direction. One iteration it:
//
//	ε_k ~ N(0, I_{p×n})                    k = 0..N−1, from "directions"[it, k], row-major
//	R⁺_k = return of one episode of W + ν·ε_k   rollout rng "episodes"[it, k, 0]
//	R⁻_k = return of one episode of W − ν·ε_k   rollout rng "episodes"[it, k, 1]
//	σ    = RewardStd over all 2N returns    (N > 1; else 1; 0 → 1)
//	g    = (1/N) Σ_k ((R⁺_k − R⁻_k)/σ)·ε_k   Gradient
//	W   += ESAdam.Step(g)
//
// It consumes 2·N·H environment steps. The 2N rollouts may run in parallel
// (SetParallel) with results bit-identical to a serial run. If the
// environment also implements episodic.Converger, Step calls it after the
// update with the new W and "converged"[it], appends its metrics and sets
// Stat.Done when it reports convergence: the LQR stationarity stop of
// §5.2. The environment contract, hyperparameters and policy state are
// shared with algos/exact through algos/episodic. State ("ZAV1" v1): W and
// its ES-Adam.
//
// Invalid configurations are returned errors (errors.go); dimension
// mismatches are programmer errors and panic.
package ars
