package sgd

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"zorepro/algos"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Problem is a regression problem that draws batches; *linreg.Instance
// satisfies it.
type Problem interface {
	// Dim is the length of a feature row and of w.
	Dim() int
	// Batch fills X (rows(X)×Dim) and y (length rows(X)) from rng.
	Batch(rng *rand.Rand, X *mat.Dense, y []float64)
}

// Config holds SGD's hyperparameters. There are no defaults: both must be
// set (spec §3.3: LR 0.1 and Batch 64 for d = 10, 100; LR 0.01 and Batch 256
// for d = 1000).
type Config struct {
	// LR is the step size η > 0.
	LR float64 `json:"lr"`
	// Batch is the batch size B > 0; each iteration consumes B samples.
	Batch int `json:"batch"`
}

// ErrConfig is returned by Config.Validate for invalid hyperparameters.
var ErrConfig = errors.New("sgd: invalid config")

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	var errs []error
	if !(c.LR > 0) || math.IsInf(c.LR, 0) {
		errs = append(errs, fmt.Errorf("%w: LR = %v, want finite > 0", ErrConfig, c.LR))
	}
	if c.Batch < 1 {
		errs = append(errs, fmt.Errorf("%w: Batch = %d, want > 0", ErrConfig, c.Batch))
	}
	return errors.Join(errs...)
}

// SGD is the optimizer state on one problem. It implements algos.Method.
type SGD struct {
	cfg Config
	p   Problem
	src stream.Source
	w   []float64

	// scratch
	X    *mat.Dense
	y, r []float64
	g    []float64
}

var _ algos.Method = (*SGD)(nil)

// New returns SGD starting at a copy of w0. It panics if cfg is invalid
// (validate configuration at the edge with Config.Validate) or if
// len(w0) != p.Dim().
func New(cfg Config, p Problem, w0 []float64, src stream.Source) *SGD {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	dim := p.Dim()
	if len(w0) != dim {
		panic(fmt.Sprintf("sgd: len(w0) = %d, problem dimension %d", len(w0), dim))
	}
	return &SGD{
		cfg: cfg, p: p, src: src, w: slices.Clone(w0),
		X: mat.NewDense(cfg.Batch, dim, nil),
		y: make([]float64, cfg.Batch), r: make([]float64, cfg.Batch), g: make([]float64, dim),
	}
}

// Step runs iteration it: batch from src.Rand("batch", it); residuals
// r = Xw − y (BLAS dgemv); metric "train_loss" = (1/B)·Σ ½r_i² before the
// step; Xᵀr (dgemv); w_j ← w_j − LR·((1/B)·(Xᵀr)_j). It consumes B samples.
func (s *SGD) Step(it int64) (algos.Stat, error) {
	s.p.Batch(s.src.Rand("batch", uint64(it)), s.X, s.y)
	B, dim := s.cfg.Batch, len(s.w)
	rv := mat.NewVecDense(B, s.r)
	rv.MulVec(s.X, mat.NewVecDense(dim, s.w))
	var loss float64
	for i := range s.r {
		s.r[i] -= s.y[i]
		loss += 0.5 * s.r[i] * s.r[i]
	}
	loss /= float64(B)
	mat.NewVecDense(dim, s.g).MulVec(s.X.T(), rv)
	inv := 1 / float64(B)
	for j := range s.w {
		s.w[j] -= s.cfg.LR * (inv * s.g[j])
	}
	return algos.Stat{Samples: int64(B), Metrics: []task.Metric{{Name: "train_loss", Value: loss}}}, nil
}

// Params returns w (read-only view).
func (s *SGD) Params() []float64 { return s.w }

// Snapshot returns w (read-only view; layout "raw").
func (s *SGD) Snapshot() []float64 { return s.w }

const (
	stateMagic   = "ZSGD"
	stateVersion = 1
)

// MarshalState encodes w ("ZSGD", version 1); SGD has no other state.
func (s *SGD) MarshalState() ([]byte, error) {
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(s.w)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob; w must have the problem's
// dimension.
func (s *SGD) UnmarshalState(b []byte) error {
	d := blob.NewDecoder(b, stateMagic, stateVersion)
	w := d.Floats()
	if d.Err() == nil && len(w) != len(s.w) {
		d.Failf("sgd: state has %d weights, problem dimension %d", len(w), len(s.w))
	}
	if err := d.Finish(); err != nil {
		return fmt.Errorf("sgd: %w", err)
	}
	copy(s.w, w)
	return nil
}
