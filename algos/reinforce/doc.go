// Package reinforce is REINFORCE, action-space exploration with a
// score-function gradient (spec §2.5, §3.5), for every environment whose
// instances offer a policy (Problem). Each iteration the policy draws a
// batch of B contexts, samples one action per context, observes the
// rewards and returns the score-function estimate ĝ of the loss gradient
// and the mean reward; REINFORCE then descends with its optimizer:
//
//	optimizer esadam:  w ← w − ESAdam.Step(ĝ)      (the authors' ES Adam, §1; linear regression)
//	optimizer adam:    one PyTorch Adam step on ĝ  (algos.Adam, §1; MNIST)
//
// The policy belongs to the environment's action space: linear
// regression's Gaussian around the linear prediction with standard
// deviation β (envs/linreg.GaussianPolicy: ĝ = −(1/B)·Σ_i r_i·(ŷ_i − μ_i)·x_i,
// the 1/β² of the score dropped as in the authors' code, §6 item 18), and
// MNIST's softmax over the ten labels with ±1 rewards
// (envs/mnist.SoftmaxPolicy, backprop of (1/B)·Σ_i r_i·(−log p_i[a_i])).
// β is given for a Gaussian policy and refused by the softmax one.
//
// Streams: "init" for the initial parameters (Problem.InitialWeights); the
// policy draws iteration it's batch and exploration from streams indexed
// by it (linear regression: "batch"[it], "explore"[it]; MNIST:
// "batch"[it], "dropout"[it], "actions"[it]).
//
// State (MarshalState, "ZRNF" v2): w and the optimizer's moments and step
// count. The snapshot is w (layout raw), evaluated where the environment
// draws test batches on batches of B examples (§3.1.6). Each iteration
// reports "train_reward", the batch's mean reward.
package reinforce
