// Package reinforce is REINFORCE with a Gaussian policy on the scalar
// prediction, for linear regression with partial information (spec §3.5).
// Each iteration draws a batch of B examples, explores in action space and
// steps with ES-Adam:
//
//	μ = Xw,  ŷ_i = μ_i + β·n_i (n_i ~ N(0, 1)),  r_i = −½(ŷ_i − y_i)²,
//	ĝ = −(1/B)·Σ_i r_i·(ŷ_i − μ_i)·x_i,          w ← w − ESAdam.Step(ĝ).
//
// ĝ is the score-function estimate of the gradient of the Gaussian-smoothed
// batch loss with the 1/β² factor of the score dropped and no baseline, as
// in the authors' code (§6 item 18): E[ĝ] = β²·∇_w E_n[½(ŷ − y)²] (the
// derivation is in reinforce_test.go). Under ES-Adam the factor only
// interacts with Adam's ε.
//
// The estimator (Batch: Draw and Gradient) is shared with natural
// REINFORCE (zorepro/algos/nreinforce), which uses the same ĝ, batch and
// streams.
//
// Streams: iteration it draws its batch from src.Rand("batch", it) and the
// B exploration draws n_1, ..., n_B, in order, from src.Rand("explore", it).
// The snapshot layout is the raw weight vector (linreg.LayoutRaw): tests
// use the deterministic prediction Xw, on batches of B examples (§3.1.6).
package reinforce
