// Package olrs is the online protocol shared by the two random-search
// learners of the paper's §3 (Algorithms 1 and 2): it plays T rounds of an
// olr stream in chunks (one driver iteration per chunk), lets a Rule choose
// each round's prediction and update, projects θ onto Θ, and accumulates
// the losses and the stream's moments, so that a snapshot reports the
// average regret against the optimum in hindsight.
//
// Each round's loss is recorded twice: at θ_i (the quantity Theorem 1
// bounds in expectation) and at the prediction actually played (θ_i + δu,
// or θ_iᵀs_i + δe). The rules live in their own packages (paramrs,
// actionrs) so that editing one reruns only its tasks.
//
// Streams: chunk k's rounds come from "rounds"[k], its exploration noise
// from "explore"[k]; θ starts at 0.
package olrs
