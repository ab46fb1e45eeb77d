package nreinforce

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"zorepro/algos"
	"zorepro/algos/reinforce"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Damping is the multiple of the identity added to the Fisher matrix
// (§3.6).
const Damping = 1e-3

// Config holds natural REINFORCE's hyperparameters. Every field must be
// set; Factory.Decode fills Batch and Beta with reinforce.DefaultBatch
// and reinforce.DefaultBeta and ConstantEps with false when the parameters
// omit them. dag.yaml sets LR = 2.0 (§3.6); the constant-ε variant of the
// May-2018 figures used LR = 0.01.
type Config struct {
	// LR is the trust-region size: ε_t = LR/√t, or LR when ConstantEps.
	LR float64 `json:"lr"`
	// Batch is the batch size B > 0; each iteration consumes B samples.
	Batch int `json:"batch"`
	// Beta is the standard deviation β > 0 of the Gaussian policy.
	Beta float64 `json:"beta"`
	// ConstantEps selects ε_t = LR for every t (the code before
	// 2018-05-04) instead of LR/√t.
	ConstantEps bool `json:"constant_eps"`
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

// Eps returns ε_t for iteration t ≥ 1: LR/√t, or LR when ConstantEps.
func (c Config) Eps(t int64) float64 {
	if c.ConstantEps {
		return c.LR
	}
	return c.LR / math.Sqrt(float64(t))
}

// NREINFORCE is the optimizer state on one problem. It implements
// algos.Method.
type NREINFORCE struct {
	cfg Config
	p   reinforce.Problem
	src stream.Source
	w   []float64

	// scratch
	batch   *reinforce.Batch
	g, step []float64
	F       *mat.SymDense
	chol    mat.Cholesky
}

var _ algos.Method = (*NREINFORCE)(nil)

// New returns natural REINFORCE starting at a copy of w0. It panics if cfg
// is invalid (validate configuration at the edge with Config.Validate) or
// if len(w0) != p.Dim().
func New(cfg Config, p reinforce.Problem, w0 []float64, src stream.Source) *NREINFORCE {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	dim := p.Dim()
	if len(w0) != dim {
		panic(fmt.Sprintf("nreinforce: len(w0) = %d, problem dimension %d", len(w0), dim))
	}
	return &NREINFORCE{
		cfg: cfg, p: p, src: src, w: slices.Clone(w0),
		batch: reinforce.NewBatch(cfg.Batch, dim),
		g:     make([]float64, dim), step: make([]float64, dim),
		F: mat.NewSymDense(dim, nil),
	}
}

// Step runs iteration it: reinforce.Batch.Draw(p, src, it); ĝ =
// Batch.Gradient(w, β); F = Fisher(X); its Cholesky factorization;
// NaturalStep(ĝ, ε_it); w_j ← w_j − s_j unless the step is skipped. It
// consumes B samples and reports "train_reward" (the batch's mean reward),
// "eta" (η_t, 0 when skipped) and "skipped" (1 when vᵀĝ ≤ 0, else 0).
func (n *NREINFORCE) Step(it int64) (algos.Stat, error) {
	n.batch.Draw(n.p, n.src, it)
	reward := n.batch.Gradient(n.g, n.w, n.cfg.Beta)
	Fisher(n.F, n.batch.X)
	if !n.chol.Factorize(n.F) {
		return algos.Stat{}, fmt.Errorf("%w: the damped Fisher matrix is not positive definite", ErrSolve)
	}
	eta, ok, err := NaturalStep(n.step, &n.chol, n.g, n.cfg.Eps(it))
	if err != nil {
		return algos.Stat{}, err
	}
	skipped := 1.0
	if ok {
		skipped = 0
		for j := range n.w {
			n.w[j] -= n.step[j]
		}
	}
	return algos.Stat{Samples: int64(n.cfg.Batch), Metrics: []task.Metric{
		{Name: "train_reward", Value: reward},
		{Name: "eta", Value: eta},
		{Name: "skipped", Value: skipped},
	}}, nil
}

// Fisher sets F = (1/B)·XᵀX + Damping·I with B = rows(X): dsyrk with
// alpha = 1/B, then Damping added to the diagonal. It panics unless F is
// Dim×Dim.
func Fisher(F *mat.SymDense, X *mat.Dense) {
	B, dim := X.Dims()
	if F.SymmetricDim() != dim {
		panic(fmt.Sprintf("nreinforce: Fisher: F is %d×%d, X has %d columns", F.SymmetricDim(), F.SymmetricDim(), dim))
	}
	F.SymOuterK(1/float64(B), X.T())
	for j := 0; j < dim; j++ {
		F.SetSym(j, j, F.At(j, j)+Damping)
	}
}

// NaturalStep writes the step s = η·v into step, where v solves F·v = g
// with chol, a Cholesky factorization of F (dpotrs), q = vᵀg is summed in
// index order and η = √(eps/q). Then sᵀFs = η²·vᵀFv = η²·q = eps up to the
// solve's roundoff. It returns η and ok = true, or, when q ≤ 0 (only g = 0
// for a positive definite F), η = 0, ok = false and a zero step. A NaN or
// infinite q is an ErrNonFinite error and a condition estimate of F above
// mat.ConditionTolerance an ErrSolve error. It panics on mismatched
// dimensions.
func NaturalStep(step []float64, chol *mat.Cholesky, g []float64, eps float64) (eta float64, ok bool, err error) {
	dim := chol.SymmetricDim()
	if len(step) != dim || len(g) != dim {
		panic(fmt.Sprintf("nreinforce: NaturalStep: len(step) = %d, len(g) = %d, F is %d×%d", len(step), len(g), dim, dim))
	}
	if err := chol.SolveVecTo(mat.NewVecDense(dim, step), mat.NewVecDense(dim, g)); err != nil {
		return 0, false, fmt.Errorf("%w: %v", ErrSolve, err)
	}
	var q float64
	for j, v := range step {
		q += v * g[j]
	}
	switch {
	case math.IsNaN(q) || math.IsInf(q, 0):
		return 0, false, fmt.Errorf("%w: vᵀĝ = %v", ErrNonFinite, q)
	case q <= 0:
		clear(step)
		return 0, false, nil
	}
	eta = math.Sqrt(eps / q)
	for j := range step {
		step[j] *= eta
	}
	return eta, true, nil
}

// Params returns w (read-only view).
func (n *NREINFORCE) Params() []float64 { return n.w }

// Snapshot returns w (read-only view; layout "raw").
func (n *NREINFORCE) Snapshot() []float64 { return n.w }

const (
	stateMagic   = "ZNRF"
	stateVersion = 1
)

// MarshalState encodes w ("ZNRF", version 1); ε_t depends only on the
// iteration number, so there is no other state.
func (n *NREINFORCE) MarshalState() ([]byte, error) {
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(n.w)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob; w must have the problem's
// dimension. On error the receiver is unchanged.
func (n *NREINFORCE) UnmarshalState(b []byte) error {
	d := blob.NewDecoder(b, stateMagic, stateVersion)
	w := d.Floats()
	if d.Err() == nil && len(w) != len(n.w) {
		d.Failf("nreinforce: state has %d weights, problem dimension %d", len(w), len(n.w))
	}
	if err := d.Finish(); err != nil {
		return fmt.Errorf("nreinforce: %w", err)
	}
	copy(n.w, w)
	return nil
}
