package reinforce

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"zorepro/algos"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Defaults of the parameters Decode may omit (§3.5).
const (
	DefaultBatch = 512
	DefaultBeta  = 0.5
)

// Config holds REINFORCE's hyperparameters. Every field must be set;
// Factory.Decode fills Batch and Beta with DefaultBatch and DefaultBeta
// when the parameters omit them. LR is tuned per d (§3.5: 0.08, 0.03, 0.01
// for d = 10, 100, 1000).
type Config struct {
	// LR is the ES-Adam step size α > 0.
	LR float64 `json:"lr"`
	// Batch is the batch size B > 0; each iteration consumes B samples.
	Batch int `json:"batch"`
	// Beta is the standard deviation β > 0 of the Gaussian policy.
	Beta float64 `json:"beta"`
}

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	var errs []error
	pos := func(name string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%w: %s = %v, want finite > 0", ErrConfig, name, v))
		}
	}
	pos("LR", c.LR)
	pos("Beta", c.Beta)
	if c.Batch < 1 {
		errs = append(errs, fmt.Errorf("%w: Batch = %d, want > 0", ErrConfig, c.Batch))
	}
	return errors.Join(errs...)
}

// REINFORCE is the optimizer state on one problem. It implements
// algos.Method.
type REINFORCE struct {
	cfg  Config
	p    Problem
	src  stream.Source
	w    []float64
	adam *algos.ESAdam

	// scratch
	batch *Batch
	g     []float64
}

var _ algos.Method = (*REINFORCE)(nil)

// New returns REINFORCE starting at a copy of w0 with fresh ES-Adam moments
// (Alpha = LR). It panics if cfg is invalid (validate configuration at the
// edge with Config.Validate) or if len(w0) != p.Dim().
func New(cfg Config, p Problem, w0 []float64, src stream.Source) *REINFORCE {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	dim := p.Dim()
	if len(w0) != dim {
		panic(fmt.Sprintf("reinforce: len(w0) = %d, problem dimension %d", len(w0), dim))
	}
	return &REINFORCE{
		cfg: cfg, p: p, src: src, w: slices.Clone(w0),
		adam:  algos.NewESAdam(dim, cfg.LR),
		batch: NewBatch(cfg.Batch, dim), g: make([]float64, dim),
	}
}

// Step runs iteration it: Batch.Draw(p, src, it); ĝ = Batch.Gradient(w, β);
// s = ESAdam.Step(ĝ); w_j ← w_j − s_j. It consumes B samples and reports
// "train_reward", the mean reward of the batch's exploratory predictions.
func (r *REINFORCE) Step(it int64) (algos.Stat, error) {
	r.batch.Draw(r.p, r.src, it)
	reward := r.batch.Gradient(r.g, r.w, r.cfg.Beta)
	step := r.adam.Step(r.g)
	for j := range r.w {
		r.w[j] -= step[j]
	}
	return algos.Stat{Samples: int64(r.cfg.Batch), Metrics: []task.Metric{{Name: "train_reward", Value: reward}}}, nil
}

// Params returns w (read-only view).
func (r *REINFORCE) Params() []float64 { return r.w }

// Snapshot returns w (read-only view; layout "raw").
func (r *REINFORCE) Snapshot() []float64 { return r.w }

const (
	stateMagic   = "ZRNF"
	stateVersion = 1
)

// MarshalState encodes w and the ES-Adam state ("ZRNF", version 1).
func (r *REINFORCE) MarshalState() ([]byte, error) {
	adam, err := r.adam.MarshalBinary()
	if err != nil {
		return nil, err
	}
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(r.w)
	e.Blob(adam)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob; its dimensions must match the
// problem's. On error the receiver is unchanged.
func (r *REINFORCE) UnmarshalState(b []byte) error {
	d := blob.NewDecoder(b, stateMagic, stateVersion)
	w := d.Floats()
	state := d.Blob()
	if err := d.Finish(); err != nil {
		return fmt.Errorf("reinforce: %w", err)
	}
	if len(w) != len(r.w) {
		return fmt.Errorf("reinforce: %w: state has %d weights, problem dimension %d", blob.ErrFormat, len(w), len(r.w))
	}
	adam := algos.NewESAdam(0, r.cfg.LR)
	if err := adam.UnmarshalBinary(state); err != nil {
		return fmt.Errorf("reinforce: ES-Adam: %w", err)
	}
	if dim := adam.Dim(); dim != len(r.w) {
		return fmt.Errorf("reinforce: %w: ES-Adam state has %d coordinates, problem dimension %d", blob.ErrFormat, dim, len(r.w))
	}
	copy(r.w, w)
	r.adam = adam
	return nil
}
