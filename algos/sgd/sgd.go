package sgd

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"zorepro/algos"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Problem is what SGD minimizes: a model with Dim parameters and a loss
// whose mean over a minibatch has a gradient. *linreg.Instance (½·MSE of a
// linear prediction) and *mnist.Instance (LeNet's cross-entropy) satisfy
// it, with their own Loss types L.
type Problem[L Loss] interface {
	// Dim is the number of parameters.
	Dim() int
	// InitialWeights draws the initial parameters from rng.
	InitialWeights(rng *rand.Rand) []float64
	// NewLoss returns the minibatch loss for batches of n ≥ 1 examples,
	// with scratch of its own, or an error if the problem cannot draw
	// batches.
	NewLoss(n int) (L, error)
}

// Loss is a problem's minibatch loss, owned by one method.
type Loss interface {
	// Gradient draws iteration it's batch from src (the problem names the
	// streams, e.g. "batch"[it]), writes into g the gradient of the mean
	// batch loss at theta, and returns that loss.
	Gradient(g, theta []float64, src stream.Source, it int64) (loss float64, err error)
}

// Config holds SGD's hyperparameters (spec §3.3 for linear regression: lr
// 0.1 and batch 64 at d = 10, 100, lr 0.01 and batch 256 at d = 1000, no
// momentum; §2.4, §2.7 for MNIST: lr 0.01, momentum 0.5, batch 64).
type Config struct {
	// LR is the step size > 0.
	LR float64 `json:"lr"`
	// Batch is the batch size B ≥ 1; each iteration consumes B samples.
	Batch int `json:"batch"`
	// Momentum is μ, 0 ≤ μ < 1 (PyTorch's SGD momentum; 0: plain SGD).
	Momentum float64 `json:"momentum"`
}

// Validate reports every invalid field at once, each as an ErrConfig error.
func (c Config) Validate() error {
	ch := algos.NewChecks(ErrConfig)
	ch.Positive("LR", c.LR)
	ch.Count("Batch", c.Batch)
	if !(c.Momentum >= 0 && c.Momentum < 1) {
		ch.Failf("Momentum = %v, want 0 ≤ Momentum < 1", c.Momentum)
	}
	return ch.Err()
}

// SGD is the optimizer state on one problem. It implements algos.Method.
type SGD[L Loss] struct {
	cfg   Config
	loss  L
	src   stream.Source
	theta []float64
	buf   []float64 // momentum buffer (nil without momentum)
	steps int64     // steps taken
	g     []float64 // scratch
}

var _ algos.Method = (*SGD[Loss])(nil)

// New returns SGD starting at a copy of theta0 with an empty momentum
// buffer. It returns an ErrConfig error for invalid hyperparameters and the
// problem's error if it cannot draw batches; it panics if len(theta0) is
// not p.Dim().
func New[L Loss](cfg Config, p Problem[L], theta0 []float64, src stream.Source) (*SGD[L], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(theta0) != p.Dim() {
		panic(fmt.Sprintf("sgd: len(theta0) = %d, problem dimension %d", len(theta0), p.Dim()))
	}
	loss, err := p.NewLoss(cfg.Batch)
	if err != nil {
		return nil, err
	}
	s := &SGD[L]{cfg: cfg, loss: loss, src: src, theta: slices.Clone(theta0), g: make([]float64, len(theta0))}
	if cfg.Momentum > 0 {
		s.buf = make([]float64, len(theta0))
	}
	return s, nil
}

// Step runs iteration it: the problem's gradient g of iteration it's batch
// at θ, then θ_j −= lr·g_j, or with momentum MomentumStep. It consumes B
// samples and reports "train_loss", the batch loss before the step.
func (s *SGD[L]) Step(it int64) (algos.Stat, error) {
	loss, err := s.loss.Gradient(s.g, s.theta, s.src, it)
	if err != nil {
		return algos.Stat{}, err
	}
	if s.buf == nil {
		for j := range s.theta {
			s.theta[j] -= s.cfg.LR * s.g[j]
		}
	} else {
		MomentumStep(s.theta, s.buf, s.g, s.cfg.LR, s.cfg.Momentum, s.steps == 0)
	}
	s.steps++
	return algos.Stat{Samples: int64(s.cfg.Batch), Metrics: []task.Metric{{Name: "train_loss", Value: loss}}}, nil
}

// MomentumStep applies one step of PyTorch's SGD with momentum (spec §1; no
// dampening, no Nesterov, no weight decay) in place, per coordinate j:
//
//	first:      buf_j = g_j
//	otherwise:  buf_j = μ·buf_j + g_j
//	            θ_j   = θ_j − lr·buf_j
//
// It panics on mismatched lengths.
func MomentumStep(theta, buf, g []float64, lr, momentum float64, first bool) {
	if len(buf) != len(theta) || len(g) != len(theta) {
		panic(fmt.Sprintf("sgd: MomentumStep: lengths %d, %d, %d", len(theta), len(buf), len(g)))
	}
	for j, gj := range g {
		if first {
			buf[j] = gj
		} else {
			buf[j] = momentum*buf[j] + gj
		}
		theta[j] -= lr * buf[j]
	}
}

// Params returns θ (read-only view).
func (s *SGD[L]) Params() []float64 { return s.theta }

// Snapshot returns θ (read-only view; layout raw).
func (s *SGD[L]) Snapshot() []float64 { return s.theta }

// Steps returns the number of steps taken.
func (s *SGD[L]) Steps() int64 { return s.steps }

const (
	stateMagic   = "ZSGD"
	stateVersion = 2
)

// MarshalState encodes θ, the momentum buffer (empty without momentum) and
// the number of steps taken ("ZSGD", version 2).
func (s *SGD[L]) MarshalState() ([]byte, error) {
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(s.theta)
	e.Floats(s.buf)
	e.Int64(s.steps)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob; its dimensions must match.
// On error the receiver is unchanged.
func (s *SGD[L]) UnmarshalState(b []byte) error {
	d := blob.NewDecoder(b, stateMagic, stateVersion)
	theta := d.Floats()
	buf := d.Floats()
	steps := d.Int64()
	if d.Err() == nil && (len(theta) != len(s.theta) || len(buf) != len(s.buf)) {
		d.Failf("state has %d parameters and %d momentum values, want %d and %d", len(theta), len(buf), len(s.theta), len(s.buf))
	}
	if steps < 0 {
		d.Failf("step count %d", steps)
	}
	if err := d.Finish(); err != nil {
		return fmt.Errorf("sgd: %w", err)
	}
	copy(s.theta, theta)
	copy(s.buf, buf)
	s.steps = steps
	return nil
}
