// Package mnistsgd is full-information mini-batch SGD with momentum on the
// MNIST LeNet (spec §2.4), the upper reference of Fig. 1. Each iteration:
//
//  1. the network is in train mode (dropout after fc1 active);
//  2. B indices are drawn uniformly WITH replacement from the training set
//     (no epochs, no shuffling; §2.1) and their raw 0–255 pixels and labels
//     are gathered (mnist.Instance.DrawTrainBatch; no input normalization,
//     §6 item 11);
//  3. L = mean cross-entropy of the log-softmax (lenet.CrossEntropy);
//  4. backprop (lenet.Net.Backward), then one PyTorch SGD-with-momentum step
//     (MomentumStep: buf = g on the first step, then buf = μ·buf + g;
//     θ −= lr·buf; no dampening, Nesterov or weight decay; spec §1);
//  5. B samples are consumed (§2.3: 64 per iteration with the paper's B).
//
// Paper values (§2.7): lr 0.01, momentum 0.5, batch 64.
//
// Streams (zorepro/pipeline/stream), all indexed by the iteration, so a
// method restored from a checkpoint continues bit-exactly:
//
//	"init"          the initial θ: lenet.Init (PyTorch v0.3 default init)
//	"batch"[it]     B draws of rng.IntN(NTrain), in batch order (DrawTrainBatch)
//	"dropout"[it]   the dropout masks of the Forward (lenet: B·50 draws)
//
// State (MarshalState): θ, the momentum buffer and the number of steps
// taken. The snapshot is θ (mnist.LayoutRaw): evaluation feeds the network
// raw pixels. Each iteration reports "train_loss", the batch loss L before
// the step (with that iteration's dropout).
//
// Invalid configurations and instances are returned errors (errors.go);
// dimension mismatches are programmer errors and panic.
package mnistsgd
