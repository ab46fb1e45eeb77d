// Package newton is the full-information damped Newton method on linear
// regression (spec §3.4): each iteration draws a batch of B examples and
// takes one full Newton step on the batch ½·MSE,
//
//	g = (1/B)·Xᵀ(Xw − y),  H = (1/B)·XᵀX + 10⁻⁸·I,  w ← w − H⁻¹g.
//
// Because the batch loss is quadratic, the step lands exactly on the
// minimizer of (1/2B)‖Xw′ − y‖² + ½·10⁻⁸‖w′ − w‖²: the batch's
// least-squares fit when B ≥ Dim, and, when B < Dim (d = 100 with B = 64),
// in effect the fit that interpolates the batch closest to w (the damping
// leaves only a relative 10⁻⁸/σ² pull of w, where σ² are the nonzero
// eigenvalues of (1/B)XᵀX).
//
// Solver (see Solver): H is symmetric positive definite (the 10⁻⁸
// damping dominates the roundoff of forming XᵀX, about Dim·ε_mach·‖H‖, for
// ‖H‖ ≪ 10⁶), and the step is a Cholesky solve (LAPACK dpotrf/dpotrs
// through gonum's mat.Cholesky). When B ≥ Dim it factorizes H itself. When
// B < Dim it uses the identity (XᵀX/B + λI)⁻¹Xᵀ = Xᵀ(XXᵀ/B + λI)⁻¹ and
// factorizes the B×B matrix XXᵀ/B + λI instead: H then has Dim − B
// eigenvalues equal to 10⁻⁸ and κ(H) ≈ 10¹⁰ at d = 100, B = 64, so a solve
// with H errs by about κ(H)·ε_mach ≈ 10⁻⁷ (measured), while the B×B system
// has κ ≈ 10⁴ and the step agrees with a Householder-QR solution of the
// damped least-squares problem to about 10⁻¹⁴. Both forms compute the same
// step in exact arithmetic. A factorization failure or a condition
// estimate above gonum's ConditionTolerance (10¹⁶) is a returned ErrSolve
// error.
//
// Streams: iteration it draws its batch from src.Rand("batch", it). The
// snapshot layout is the raw weight vector (linreg.LayoutRaw), evaluated
// on test batches of B examples.
package newton
