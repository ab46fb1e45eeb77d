// Package ars is Augmented Random Search "V2" (input normalization, top-b
// directions, reward-std scaling) for one-step linear regression, spec §3.7.
//
// The parameters w live in normalized-feature coordinates: the prediction for
// a feature row x is z·w with z = [1, (x[1:]−μ)/s], where μ and s are the
// running mean and std (algos.RunningStat, spec §1) of the non-bias features
// of every training example seen so far. Each iteration uses the statistics
// as they were BEFORE its own pushes; Snapshot returns w ‖ μ ‖ s with the
// statistics AFTER them, which is what evaluation uses (layout
// linreg.LayoutNormalized; map back with linreg.Instance.RawWeights).
//
// Streams: iteration it draws its N examples from src.Rand("batch", it) (one
// example per direction, used by both the + and the − query) and direction k
// from src.Rand("directions", it, k). Directions are generated and evaluated
// in parallel when the work is large, but every direction has its own stream
// and output slots, and every reduction (statistics pushes, reward sums, σ,
// the update sum) runs in direction-index order, so results are bit-identical
// for any GOMAXPROCS.
//
// The core update is factored into pure functions (Rewards, Select,
// RewardStd, Update) so it can be checked by hand.
package ars
