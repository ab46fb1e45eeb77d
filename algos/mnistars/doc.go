// Package mnistars is ARS on the MNIST LeNet as a contextual bandit (spec
// §2.6): parameter-space exploration in the "V2-t" form of the authors'
// one-step code (§6 item 20): running per-pixel input standardization,
// top-b direction selection and reward-std scaling, with a plain gradient
// step and STOCHASTIC queries (the label is sampled from the softmax, §6
// item 21).
//
// State: θ (lenet's flat layout, d = 21,840, PyTorch's default init drawn
// from the stream "init") and an algos.RunningStat over the 784 pixels.
// One iteration it, with N directions, top b, step α and perturbation ν:
//
//	Δ_k ~ N(0, I_d)                 k = 0..N−1: d rng.NormFloat64() in flat order from "directions"[it, k]
//	μ, s := stats.Mean, stats.Std   BEFORE this iteration's pushes (iteration 1: μ = 0, s = 1)
//	x_k, y_k                        N training images, indices rng.IntN(NTrain) in order from "batch"[it]
//	z_k = (x_k − μ)/s               mnist.Standardize of the raw 0–255 pixels
//	r±_k: p = softmax(f(z_k; θ ± ν·Δ_k)), a ~ Categorical(p), r = +1 if a = y_k else −1
//	stats.Push(x_0), ..., stats.Push(x_{N−1})
//	kept = Select(r+, r−, b)        top b by max(r+_k, r−_k), stable, ties to the lower index
//	σ    = RewardStd(r+, r−, kept)  population std of the 2b kept rewards (0 → 1)
//	θ   += α/(b·σ) · Σ_{k ∈ kept, ascending} (r+_k − r−_k)·Δ_k      Update
//
// and consumes 2N samples (§2.3). The queries of direction k draw, in
// order, from the single stream "queries"[it, k]: the + query's dropout
// masks (iteration 1 only, lenet: 50 draws), its action (one rng.Float64,
// lenet.SampleAction), then the same for the − query.
//
// Dropout: the original network starts in train mode and its first test
// evaluation switches it to eval mode for good, so only iteration 1's
// queries run with dropout (lenet.Train); every later iteration uses
// lenet.Eval. The mode is a function of it alone, so a resumed run agrees.
//
// Parallelism: the N directions (drawing Δ_k and running both queries) are
// independent units; SetParallel lends them a worker pool (algos.Parallelizer).
// Each unit writes only its own slots (Δ_k, r±_k) and runs its queries on a
// workspace (a lenet.Net and two perturbed parameter vectors) checked out of
// a free list for the unit's exclusive use; a Net's results depend only on
// its inputs, never on what it computed before, so which workspace a unit
// gets cannot change any bit. Pushes, selection, σ, the update and the
// reported mean reward run afterwards on the calling goroutine, in index
// order: results are bit-identical for any number of workers. The N
// directions (N·d floats, 35 MB at N = 200) live only during Step.
//
// Snapshot: θ ‖ μ ‖ s with the CURRENT statistics (after the last
// iteration's pushes), mnist.LayoutNormalized; evaluation standardizes the
// test images with them. Each iteration reports "train_reward", the mean
// of the 2N rewards (summed r+_0, r−_0, r+_1, ... in order).
//
// A non-finite logit leaves no distribution to sample from: Step then
// returns an ErrNonFinite error and leaves the state unchanged. Invalid
// configurations and instances are returned errors (errors.go); dimension
// mismatches are programmer errors and panic.
package mnistars
