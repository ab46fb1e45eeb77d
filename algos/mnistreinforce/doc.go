// Package mnistreinforce is REINFORCE on the MNIST LeNet as a contextual
// bandit (spec §2.5): action-space exploration with the softmax policy over
// the ten labels and only ±1 feedback for the sampled label. Each
// iteration:
//
//  1. the network is in train mode (dropout after fc1 active);
//  2. B indices are drawn uniformly WITH replacement from the training set
//     (§2.1); the network sees raw 0–255 pixels (§6 item 11);
//  3. p_i = softmax(f(x_i)) and a_i ~ Categorical(p_i) (lenet.SampleAction);
//  4. r_i = 2·1[a_i = y_i] − 1; B samples are consumed (§2.3);
//  5. L = (1/B)·Σ_i r_i·(−log p_i[a_i]) (lenet.ReinforceLoss: no baseline,
//     no reward normalization), backprop, one PyTorch Adam step (AdamStep,
//     lr 1e-3, β = (0.9, 0.999), ε = 1e-8; not algos.ESAdam).
//
// B = 256 is the code's value and the default (§6 item 10); the paper's
// text says 512, which is the "batch" parameter's switch.
//
// Streams (zorepro/pipeline/stream), all indexed by the iteration:
//
//	"init"          the initial θ: lenet.Init (PyTorch v0.3 default init)
//	"batch"[it]     B draws of rng.IntN(NTrain), in batch order (DrawTrainBatch)
//	"dropout"[it]   the dropout masks of the Forward (lenet: B·50 draws)
//	"actions"[it]   B draws, one rng.Float64 per row in batch order
//
// State (MarshalState): θ and Adam's m, v and step count t. The snapshot is
// θ (mnist.LayoutRaw). Each iteration reports "train_reward", the mean of
// the B rewards (summed in batch order).
//
// A non-finite logit leaves no distribution to sample from: Step then
// returns an ErrNonFinite error and leaves the state unchanged. Invalid
// configurations and instances are returned errors (errors.go); dimension
// mismatches are programmer errors and panic.
package mnistreinforce
