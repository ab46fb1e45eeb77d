package mnist

import (
	"fmt"
	"math"
	"math/rand/v2"

	"zorepro/envs/mnist/lenet"
	"zorepro/pipeline/stream"
)

// SoftmaxPolicy is MNIST as a contextual bandit for REINFORCE (spec §2.5;
// algos/reinforce): the network's softmax over the ten labels is the
// policy, and the only feedback is ±1 for the sampled label. It owns a
// network workspace and the scratch of batches of a fixed size.
type SoftmaxPolicy struct {
	in      *Instance
	net     *lenet.Net
	idx     []int
	x       []float64
	y       []int
	p       []float64
	actions []int
	rewards []float64
	dl      []float64
}

// NewPolicy returns the softmax policy for batches of n ≥ 1 training images.
// The policy has no exploration scale: a beta other than 0 is an ErrPolicy
// error, and so is an instance without training images (ErrNoTraining). It
// panics if n < 1.
func (in *Instance) NewPolicy(n int, beta float64) (*SoftmaxPolicy, error) {
	if n < 1 {
		panic(fmt.Sprintf("mnist: NewPolicy: batch of %d images", n))
	}
	if beta != 0 {
		return nil, fmt.Errorf("%w: the softmax policy has no exploration scale (beta = %v given)", ErrPolicy, beta)
	}
	if err := in.checkTraining(); err != nil {
		return nil, err
	}
	return &SoftmaxPolicy{
		in: in, net: lenet.New(n), idx: make([]int, n), x: make([]float64, n*Pixels), y: make([]int, n),
		p: make([]float64, n*lenet.Classes), actions: make([]int, n), rewards: make([]float64, n),
		dl: make([]float64, n*lenet.Classes),
	}, nil
}

// Gradient runs one REINFORCE estimate of iteration it: the network in
// train mode (dropout "dropout"[it]); B indices drawn uniformly WITH
// replacement (§2.1; "batch"[it]) and their raw 0–255 pixels (§6 item 11);
// p_i = softmax(f(x_i)) and a_i ~ Categorical(p_i) (Sample, "actions"[it]);
// r_i = 2·1[a_i = y_i] − 1; L = (1/B)·Σ_i r_i·(−log p_i[a_i])
// (lenet.ReinforceLoss: no baseline, no reward normalization) and its
// gradient into g by backprop. It returns the mean reward. A non-finite
// logit leaves no distribution to sample from: an ErrNonFinite error,
// before g is written.
func (s *SoftmaxPolicy) Gradient(g, theta []float64, src stream.Source, it int64) (float64, error) {
	s.in.DrawTrainBatch(src.Rand("batch", uint64(it)), s.idx, s.x, s.y)
	logits := s.net.Forward(theta, s.x, lenet.Train, src.Rand("dropout", uint64(it)))
	for i, z := range logits {
		if math.IsNaN(z) || math.IsInf(z, 0) {
			return 0, fmt.Errorf("%w: image %d of the batch (training image %d)", ErrNonFinite, i/lenet.Classes, s.idx[i/lenet.Classes])
		}
	}
	lenet.Softmax(s.p, logits)
	reward := Sample(s.actions, s.rewards, s.p, s.y, src.Rand("actions", uint64(it)))
	lenet.ReinforceLoss(logits, s.actions, s.rewards, s.dl)
	s.net.Backward(s.dl, g)
	return reward, nil
}

// Sample draws actions[i] = lenet.SampleAction(p_i, rng) for the rows p_i
// of p (n×Classes, rows in order), sets rewards[i] = 2·1[actions[i] =
// labels[i]] − 1, and returns the mean reward (summed in order, divided by
// n). It panics on mismatched lengths or a row without a positive
// probability.
func Sample(actions []int, rewards, p []float64, labels []int, rng *rand.Rand) float64 {
	n := len(actions)
	if len(rewards) != n || len(labels) != n || len(p) != n*lenet.Classes {
		panic(fmt.Sprintf("mnist: Sample: %d actions, %d rewards, %d labels, %d probabilities", n, len(rewards), len(labels), len(p)))
	}
	var sum float64
	for i := range actions {
		a := lenet.SampleAction(p[i*lenet.Classes:(i+1)*lenet.Classes], rng)
		actions[i] = a
		rewards[i] = -1
		if a == labels[i] {
			rewards[i] = 1
		}
		sum += rewards[i]
	}
	return sum / float64(n)
}
