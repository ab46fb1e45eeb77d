// Package sgd is full-information mini-batch SGD, with PyTorch's momentum
// when μ > 0: linear regression's upper reference (spec §3.3) and MNIST's
// (§2.4). Each iteration takes the problem's gradient g of the mean loss of
// a fresh batch of B examples at θ and steps
//
//	μ = 0:  θ_j ← θ_j − lr·g_j
//	μ > 0:  buf ← g on the first step, then buf ← μ·buf + g;  θ ← θ − lr·buf
//
// (no dampening, Nesterov or weight decay; spec §1). The problem supplies
// the loss (Problem, Loss): linear regression's ½·MSE,
// g = (1/B)·Xᵀ(Xw − y) (envs/linreg), or LeNet's cross-entropy by backprop
// with dropout (envs/mnist).
//
// Streams: "init" for the initial parameters (Problem.InitialWeights); the
// problem draws each iteration's batch from streams indexed by the
// iteration ("batch"[it], and MNIST's "dropout"[it]).
//
// State (MarshalState, "ZSGD" v2): θ, the momentum buffer and the number of
// steps taken. The snapshot is θ (layout raw). Each iteration reports
// "train_loss", the batch loss before the step.
package sgd
