// Package olr is online linear regression with partial information (paper
// §3, the setting of Theorem 1): every round nature shows a feature vector
// s_i, the learner predicts with θ_i, and only the scalar loss
// c_i(θ) = (θᵀs_i − a_i)² comes back.
//
// The stream comes from the linear-regression generator of spec §3.1
// (package linreg) at dimension d, with the bias coordinate, so θ has
// b = d + 1 coordinates. To meet the theorem's boundedness assumptions
// with constants that do not depend on b, each round is projected onto
// the unit ball: s = x/‖x‖ (every x has ‖x‖ ≥ 1 because x₀ = 1), and its
// target is scaled alike, a = clip((x·w* + ξ)/‖x‖, ±C_a), with one
// ξ ~ N(0, 0.001²) per round. So C_s = 1, the best predictor in hindsight
// is close to w* (‖w*‖ ≈ 1), and Θ is the ball ‖θ‖ ≤ C_θ. The defaults
// are C_θ = 3 and C_a = 3, so the loss bound is C = (C_θ·C_s + C_a)² = 36
// and the Lipschitz constant is L = (C_θ·C_s + C_a)·C_s = 6.
//
// Regret is measured against the optimum in hindsight over Θ, computed
// from the realised stream's moments SᵀS, Sᵀa and aᵀa through the normal
// equations. When the unconstrained solution leaves Θ, the constrained
// one solves the secular equation ‖(SᵀS + λI)⁻¹Sᵀa‖ = C_θ by bisection
// on λ over an eigendecomposition of SᵀS.
package olr
