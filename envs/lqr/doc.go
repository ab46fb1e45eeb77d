// Package lqr is the noisy linear-quadratic regulator of spec §5 (Vemula, Sun
// & Bagnell 2019, experiment 4: samples to stationarity against dynamics
// noise).
//
// System (fixed, not random): n states (default 100), one action, horizon H
// (default 100);
//
//	A = 0.9·I + 0.01·(ones on the sub- and super-diagonal)   (symmetric tridiagonal)
//	B = 1 (an n×1 column of ones),  Q = 10⁻³·I,  R = 1
//	x_{t+1} = A x_t + B u_t + c·ξ_t,  ξ_t ~ N(0, I)          (c is a standard deviation, §6.4)
//	u_t = K x_t,  K ∈ R^{1×n}, unclipped
//	cost_t = q·(x_tᵀx_t) + r·u_t²  on the pre-transition state; reward = −cost_t
//
// An episode has H steps from a fresh x₀ ~ N(0, I). The state after the last
// step is never computed (it enters no cost), so an episode makes H−1
// transitions.
//
// Every operation with A exploits its structure: A·x costs O(n), so an
// environment step is O(n), the stationarity gradient O(nH) and the exact
// expected cost and gradient O(n²H) instead of O(n³H). Row i of A·x is
// summed in ascending column order, (0.01·x_{i−1} + 0.9·x_i) + 0.01·x_{i+1},
// which on amd64 (no fused multiply-add) is bit-identical to a dense
// row-by-row product that skips nothing (the skipped terms are exact
// zeros); see the tests.
//
// # Randomness
//
// All draws use rand.Rand.NormFloat64.
//   - x₀* (the fixed initial state of the stationarity check, §5.2) is the
//     first n draws of the stream "x0star" of the source
//     stream.New(seed, X0Scope, nil), where seed is the generate task's root
//     seed. It deliberately does not depend on the task's scope, so that one
//     seed gives the same x₀* at every noise level and horizon, as in the
//     original (spec §5.4: "the same seed is reused across all noise
//     levels"). Because that source is built here, the family is not
//     recorded in the task's stream log; this comment is its record.
//   - Rollout draws x₀ (n normals), then before each transition t = 0..H−2
//     the n normals ξ_t (coordinate order), after computing u_t. The normals
//     are drawn even when c = 0, so a stream's consumption does not depend on
//     c.
//   - Stationarity draws ξ_0..ξ_{H−2} (n normals each, in that order) from
//     the rng it is given; x₀ is x₀*.
//
// # Diagnostics
//
// Stationarity is the faithful stop rule (§5.2): the gradient G of one
// trajectory's cost from x₀* with fresh noise held fixed, by the adjoint
// recursion; the run stops when ‖G‖²_F < Tol (0.05). Expected is the extra
// diagnostic of §6.5: the exact J(K) = E_{x₀~N(0,I), ξ}[Σ_t cost_t] and its
// gradient, through the state covariance recursion Σ_{t+1} = MΣ_tMᵀ + c²I
// (M = A + BK, Σ_0 = I) and the value recursion P_t = S + MᵀP_{t+1}M
// (S = Q + KᵀRK, P_H = 0):
//
//	J   = Σ_{t=0}^{H−1} tr(S Σ_t)
//	∇J  = 2 Σ_{t=0}^{H−1} (R K + Bᵀ P_{t+1} M) Σ_t
//
// An unstable K (spectral radius of A + BK well above 1) overflows to ±Inf
// and NaN; nothing here treats that as an error, as in the original, where a
// diverged run simply never converges and spends its whole budget.
//
// Dimension mismatches are programmer errors and panic; decoding and
// snapshot validation return errors (errors.go).
package lqr
