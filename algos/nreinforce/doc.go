// Package nreinforce is natural REINFORCE for linear regression with
// partial information (spec §3.6, §6 item 17). It uses the Gaussian
// policy's score-function estimate ĝ and Fisher estimate (Problem, Policy;
// envs/linreg.GaussianPolicy, REINFORCE's policy: same batch, β and
// streams) and takes a normalized natural-gradient step. In iteration t
// (1-based):
//
//	F   = (1/B)·XᵀX + 10⁻³·I        (Fisher of the Gaussian mean, up to 1/β², damped)
//	v   = F⁻¹ĝ                        (Cholesky; F is positive definite)
//	ε_t = lr/√t                       (ConstantEps: ε_t = lr, the pre-2018-05-04 variant)
//	η_t = √(ε_t / (vᵀĝ))
//	w  ← w − η_t·v
//
// so every step has F-norm ‖η_t·v‖_F = √((η_t v)ᵀF(η_t v)) = √ε_t: a
// trust-region step, not SGD with an lr/√T rate. The authors' code solved
// F·v = ĝ by least squares; F is symmetric positive definite (its smallest
// eigenvalue is at least 10⁻³), so a Cholesky solve gives the same v; its
// condition number is at most (λ_max + 10⁻³)/10⁻³, about 10³ at d = 10 and
// 5·10⁴ at d = 100 for the linreg features.
//
// Guard: vᵀĝ = ĝᵀF⁻¹ĝ is positive unless ĝ = 0, which happens only when
// every r_i·(ŷ_i − μ_i) vanishes (e.g. β so small that μ + β·n rounds to μ).
// Then η_t would be ε_t/0 = +Inf and the step Inf·0 = NaN; instead the
// iteration leaves w unchanged and reports metric "skipped" = 1 (and
// "eta" = 0). A non-finite vᵀĝ (non-finite weights or data) is a returned
// ErrNonFinite error rather than NaN weights.
//
// Streams: as REINFORCE, iteration it draws its batch from
// src.Rand("batch", it) and the exploration noise from
// src.Rand("explore", it). The state is w alone (ε_t depends only on the
// iteration number), so resuming is exact. Snapshots are raw weights
// (layout raw) evaluated on batches of B examples (§3.1.6).
package nreinforce
