package mnistsgd

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"zorepro/algos"
	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Defaults of the parameters Decode may omit (spec §2.7).
const (
	DefaultMomentum = 0.5
	DefaultBatch    = 64
)

// Config holds the hyperparameters. Every field must be set;
// Factory.Decode fills Momentum and Batch with DefaultMomentum and
// DefaultBatch when the parameters omit them. The paper's LR is 0.01.
type Config struct {
	// LR is the step size lr > 0.
	LR float64 `json:"lr"`
	// Momentum is μ, 0 ≤ μ < 1.
	Momentum float64 `json:"momentum"`
	// Batch is B ≥ 1; each iteration consumes B samples.
	Batch int `json:"batch"`
}

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	var errs []error
	if !(c.LR > 0) || math.IsInf(c.LR, 0) {
		errs = append(errs, fmt.Errorf("%w: LR = %v, want finite > 0", ErrConfig, c.LR))
	}
	if !(c.Momentum >= 0 && c.Momentum < 1) {
		errs = append(errs, fmt.Errorf("%w: Momentum = %v, want 0 ≤ Momentum < 1", ErrConfig, c.Momentum))
	}
	if c.Batch < 1 {
		errs = append(errs, fmt.Errorf("%w: Batch = %d, want ≥ 1", ErrConfig, c.Batch))
	}
	return errors.Join(errs...)
}

// checkInstance reports an instance the methods cannot draw from.
func checkInstance(in *mnist.Instance) error {
	if in == nil || in.NTrain() < 1 || len(in.TrainImages) != in.NTrain()*mnist.Pixels {
		return fmt.Errorf("%w: no training images or inconsistent sizes", ErrInstance)
	}
	return nil
}

// SGD is the optimizer state on one instance. It implements algos.Method.
type SGD struct {
	cfg   Config
	in    *mnist.Instance
	src   stream.Source
	theta []float64
	buf   []float64 // momentum buffer; meaningful once steps > 0
	steps int64     // SGD steps taken

	// scratch
	net  *lenet.Net
	idx  []int
	x    []float64
	y    []int
	dl   []float64
	grad []float64
}

var _ algos.Method = (*SGD)(nil)

// New returns SGD starting at a copy of theta0 (lenet's flat layout) with an
// empty momentum buffer. It returns an ErrConfig error for invalid
// hyperparameters and an ErrInstance error for an unusable instance; it
// panics if len(theta0) != lenet.NumParams.
func New(cfg Config, in *mnist.Instance, theta0 []float64, src stream.Source) (*SGD, error) {
	if err := errors.Join(cfg.Validate(), checkInstance(in)); err != nil {
		return nil, err
	}
	if len(theta0) != lenet.NumParams {
		panic(fmt.Sprintf("mnistsgd: len(theta0) = %d, want %d", len(theta0), lenet.NumParams))
	}
	B := cfg.Batch
	return &SGD{
		cfg: cfg, in: in, src: src,
		theta: slices.Clone(theta0), buf: make([]float64, lenet.NumParams),
		net: lenet.New(B), idx: make([]int, B), x: make([]float64, B*mnist.Pixels), y: make([]int, B),
		dl: make([]float64, B*lenet.Classes), grad: make([]float64, lenet.NumParams),
	}, nil
}

// Step runs iteration it (see the package documentation): batch from
// "batch"[it], Forward in lenet.Train with "dropout"[it], CrossEntropy,
// Backward, MomentumStep. It consumes B samples and reports "train_loss".
func (s *SGD) Step(it int64) (algos.Stat, error) {
	s.in.DrawTrainBatch(s.src.Rand("batch", uint64(it)), s.idx, s.x, s.y)
	logits := s.net.Forward(s.theta, s.x, lenet.Train, s.src.Rand("dropout", uint64(it)))
	loss := lenet.CrossEntropy(logits, s.y, s.dl)
	s.net.Backward(s.dl, s.grad)
	MomentumStep(s.theta, s.buf, s.grad, s.cfg.LR, s.cfg.Momentum, s.steps == 0)
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
		panic(fmt.Sprintf("mnistsgd: MomentumStep: lengths %d, %d, %d", len(theta), len(buf), len(g)))
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
func (s *SGD) Params() []float64 { return s.theta }

// Snapshot returns θ (read-only view; layout mnist.LayoutRaw).
func (s *SGD) Snapshot() []float64 { return s.theta }

// Steps returns the number of steps taken.
func (s *SGD) Steps() int64 { return s.steps }

const (
	stateMagic   = "ZMSG"
	stateVersion = 1
)

// MarshalState encodes θ, the momentum buffer and the step count ("ZMSG",
// version 1).
func (s *SGD) MarshalState() ([]byte, error) {
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(s.theta)
	e.Floats(s.buf)
	e.Int64(s.steps)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob. On error the receiver is
// unchanged.
func (s *SGD) UnmarshalState(b []byte) error {
	d := blob.NewDecoder(b, stateMagic, stateVersion)
	theta := d.Floats()
	buf := d.Floats()
	steps := d.Int64()
	if d.Err() == nil && (len(theta) != lenet.NumParams || len(buf) != lenet.NumParams) {
		d.Failf("state has %d parameters and %d momentum values, want %d", len(theta), len(buf), lenet.NumParams)
	}
	if steps < 0 {
		d.Failf("step count %d", steps)
	}
	if err := d.Finish(); err != nil {
		return fmt.Errorf("mnistsgd: %w", err)
	}
	copy(s.theta, theta)
	copy(s.buf, buf)
	s.steps = steps
	return nil
}
