package reinforce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"zorepro/algos"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Problem is a contextual bandit REINFORCE learns on: the problem's policy
// at parameters θ (its action space is the problem's) samples actions, and
// estimates the gradient by the score function. *linreg.Instance (a
// Gaussian policy around the linear prediction) and *mnist.Instance
// (LeNet's softmax over the labels) satisfy it, with their own Policy types.
type Problem[P Policy] interface {
	// Dim is the number of parameters.
	Dim() int
	// InitialWeights draws the initial parameters from rng.
	InitialWeights(rng *rand.Rand) []float64
	// NewPolicy returns the policy's estimator for batches of n ≥ 1
	// contexts, with scratch of its own. beta is the exploration scale of
	// a Gaussian policy (0: not given); a problem refuses a beta its policy
	// has no use for, and a missing one its policy needs.
	NewPolicy(n int, beta float64) (P, error)
}

// Policy is a problem's policy estimator, owned by one method.
type Policy interface {
	// Gradient draws iteration it's batch of contexts from src (the problem
	// names the streams), samples one action per context from the policy
	// at theta, observes the rewards, writes into g the score-function
	// estimate of the gradient of the loss (the negative reward; a descent
	// direction) and returns the mean reward.
	Gradient(g, theta []float64, src stream.Source, it int64) (meanReward float64, err error)
}

// Optimizers.
const (
	// ESAdam is algos.ESAdam, the Adam of the authors' ES code (linear
	// regression, spec §3.5).
	ESAdam = "esadam"
	// Adam is PyTorch's Adam, algos.Adam (MNIST, spec §2.5).
	Adam = "adam"
)

// Config holds REINFORCE's hyperparameters. LR is tuned per d for linear
// regression (§3.5: 0.08, 0.03, 0.01 for d = 10, 100, 1000; batch 512, β =
// 0.5, ES-Adam); MNIST uses lr 1e-3, batch 256 (the code; 512 in the text)
// and PyTorch Adam (§2.5).
type Config struct {
	// LR is the optimizer's step size > 0.
	LR float64 `json:"lr"`
	// Batch is B ≥ 1; each iteration consumes B samples.
	Batch int `json:"batch"`
	// Beta is the standard deviation β > 0 of a Gaussian policy, 0 for a
	// policy without one.
	Beta float64 `json:"beta"`
	// Optimizer is ESAdam or Adam.
	Optimizer string `json:"optimizer"`
}

// DrawKey implements algos.DrawKeyer: an iteration draws a batch of B
// examples and B exploration draws, whatever the step size.
func (c Config) DrawKey() string { return fmt.Sprintf("batch=%d", c.Batch) }

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	ch := algos.NewChecks(ErrConfig)
	ch.Positive("LR", c.LR)
	if !(c.Beta >= 0) || math.IsInf(c.Beta, 0) {
		ch.Failf("Beta = %v, want finite > 0 (or 0: none)", c.Beta)
	}
	ch.Count("Batch", c.Batch)
	if c.Optimizer != ESAdam && c.Optimizer != Adam {
		ch.Failf("Optimizer = %q, want %q or %q", c.Optimizer, ESAdam, Adam)
	}
	return ch.Err()
}

// REINFORCE is the optimizer state on one problem. It implements
// algos.Method.
type REINFORCE[P Policy] struct {
	cfg    Config
	policy P
	src    stream.Source
	w      []float64
	esadam *algos.ESAdam // with ESAdam
	adam   *algos.Adam   // with Adam
	g      []float64     // scratch
}

var _ algos.Method = (*REINFORCE[Policy])(nil)

// New returns REINFORCE starting at a copy of w0 with fresh optimizer
// moments. It returns an ErrConfig error for invalid hyperparameters and
// the problem's error if it refuses the policy (e.g. β); it panics if
// len(w0) != p.Dim().
func New[P Policy](cfg Config, p Problem[P], w0 []float64, src stream.Source) (*REINFORCE[P], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dim := p.Dim()
	if len(w0) != dim {
		panic(fmt.Sprintf("reinforce: len(w0) = %d, problem dimension %d", len(w0), dim))
	}
	policy, err := p.NewPolicy(cfg.Batch, cfg.Beta)
	if err != nil {
		return nil, err
	}
	r := &REINFORCE[P]{cfg: cfg, policy: policy, src: src, w: slices.Clone(w0), g: make([]float64, dim)}
	if cfg.Optimizer == ESAdam {
		r.esadam = algos.NewESAdam(dim, cfg.LR)
	} else {
		r.adam = algos.NewAdam(dim, cfg.LR)
	}
	return r, nil
}

// Step runs iteration it: ĝ and the mean reward from the policy; then
// w_j ← w_j − s_j with s = ESAdam.Step(ĝ), or one PyTorch Adam step. It
// consumes B samples and reports "train_reward". A failed estimate (e.g.
// non-finite logits) ends the iteration before any state changes.
func (r *REINFORCE[P]) Step(it int64) (algos.Stat, error) {
	reward, err := r.policy.Gradient(r.g, r.w, r.src, it)
	if err != nil {
		return algos.Stat{}, err
	}
	if r.esadam != nil {
		step := r.esadam.Step(r.g)
		for j := range r.w {
			r.w[j] -= step[j]
		}
	} else {
		r.adam.Step(r.w, r.g)
	}
	return algos.Stat{Samples: int64(r.cfg.Batch), Metrics: []task.Metric{{Name: "train_reward", Value: reward}}}, nil
}

// Params returns w (read-only view).
func (r *REINFORCE[P]) Params() []float64 { return r.w }

// Snapshot returns w (read-only view; layout raw).
func (r *REINFORCE[P]) Snapshot() []float64 { return r.w }

const (
	stateMagic   = "ZRNF"
	stateVersion = 2
)

// MarshalState encodes w and the optimizer's state ("ZRNF", version 2).
func (r *REINFORCE[P]) MarshalState() ([]byte, error) {
	var opt []byte
	var err error
	if r.esadam != nil {
		opt, err = r.esadam.MarshalBinary()
	} else {
		opt, err = r.adam.MarshalBinary()
	}
	if err != nil {
		return nil, err
	}
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(r.w)
	e.Blob(opt)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob; its dimensions must match the
// problem's and its optimizer the configuration's. On error the receiver is
// unchanged.
func (r *REINFORCE[P]) UnmarshalState(b []byte) error {
	d := blob.NewDecoder(b, stateMagic, stateVersion)
	w := d.Floats()
	opt := d.Blob()
	if err := d.Finish(); err != nil {
		return fmt.Errorf("reinforce: %w", err)
	}
	if len(w) != len(r.w) {
		return fmt.Errorf("reinforce: %w: state has %d weights, problem dimension %d", blob.ErrFormat, len(w), len(r.w))
	}
	var esadam *algos.ESAdam
	var adam *algos.Adam
	dim := -1
	if r.esadam != nil {
		esadam = algos.NewESAdam(0, r.cfg.LR)
		if err := esadam.UnmarshalBinary(opt); err != nil {
			return fmt.Errorf("reinforce: ES-Adam: %w", err)
		}
		dim = esadam.Dim()
	} else {
		adam = algos.NewAdam(0, r.cfg.LR)
		if err := adam.UnmarshalBinary(opt); err != nil {
			return fmt.Errorf("reinforce: Adam: %w", err)
		}
		dim = adam.Dim()
	}
	if dim != len(r.w) {
		return fmt.Errorf("reinforce: %w: optimizer state has %d coordinates, problem dimension %d", blob.ErrFormat, dim, len(r.w))
	}
	r.esadam, r.adam = esadam, adam
	copy(r.w, w)
	return nil
}
