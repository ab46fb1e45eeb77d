package nreinforce

import (
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

// Damping is the multiple of the identity added to the Fisher matrix
// (§3.6).
const Damping = 1e-3

// Defaults of the parameters Decode may omit (§3.6: REINFORCE's batch and
// β).
const (
	DefaultBatch = 512
	DefaultBeta  = 0.5
)

// Problem is a contextual bandit with a Gaussian policy whose Fisher
// information the policy estimates: *linreg.Instance satisfies it with
// *linreg.GaussianPolicy.
type Problem[P Policy] interface {
	// Dim is the number of parameters.
	Dim() int
	// InitialWeights draws the initial parameters from rng.
	InitialWeights(rng *rand.Rand) []float64
	// NewPolicy returns the policy with standard deviation beta for batches
	// of n ≥ 1 contexts.
	NewPolicy(n int, beta float64) (P, error)
}

// Policy is a problem's Gaussian policy, owned by one method.
type Policy interface {
	// Gradient draws iteration it's batch and exploration from src, writes
	// the score-function estimate ĝ at theta into g (REINFORCE's, with the
	// 1/β² factor dropped) and returns the mean reward.
	Gradient(g, theta []float64, src stream.Source, it int64) (meanReward float64, err error)
	// Fisher sets F to the Fisher information estimate of the last batch,
	// with the same factor dropped and no damping.
	Fisher(F *mat.SymDense)
}

// Config holds natural REINFORCE's hyperparameters. Every field must be
// set; Factory.Decode fills Batch and Beta with DefaultBatch and
// DefaultBeta and ConstantEps with false when the parameters
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
	ch := algos.NewChecks(ErrConfig)
	ch.Positive("LR", c.LR)
	ch.Positive("Beta", c.Beta)
	ch.Count("Batch", c.Batch)
	return ch.Err()
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
type NREINFORCE[P Policy] struct {
	cfg    Config
	policy P
	src    stream.Source
	w      []float64

	// scratch
	g, step []float64
	F       *mat.SymDense
	chol    mat.Cholesky
}

var _ algos.Method = (*NREINFORCE[Policy])(nil)

// New returns natural REINFORCE starting at a copy of w0. It returns an
// ErrConfig error for invalid hyperparameters and the problem's error if it
// refuses the policy; it panics if len(w0) != p.Dim().
func New[P Policy](cfg Config, p Problem[P], w0 []float64, src stream.Source) (*NREINFORCE[P], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dim := p.Dim()
	if len(w0) != dim {
		panic(fmt.Sprintf("nreinforce: len(w0) = %d, problem dimension %d", len(w0), dim))
	}
	policy, err := p.NewPolicy(cfg.Batch, cfg.Beta)
	if err != nil {
		return nil, err
	}
	return &NREINFORCE[P]{
		cfg: cfg, policy: policy, src: src, w: slices.Clone(w0),
		g: make([]float64, dim), step: make([]float64, dim),
		F: mat.NewSymDense(dim, nil),
	}, nil
}

// Step runs iteration it: ĝ and the mean reward from the policy; F =
// the policy's Fisher estimate + Damping·I; its Cholesky factorization;
// NaturalStep(ĝ, ε_it); w_j ← w_j − s_j unless the step is skipped. It
// consumes B samples and reports "train_reward" (the batch's mean reward),
// "eta" (η_t, 0 when skipped) and "skipped" (1 when vᵀĝ ≤ 0, else 0).
func (n *NREINFORCE[P]) Step(it int64) (algos.Stat, error) {
	reward, err := n.policy.Gradient(n.g, n.w, n.src, it)
	if err != nil {
		return algos.Stat{}, err
	}
	n.policy.Fisher(n.F)
	Damp(n.F)
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

// Damp adds Damping to the diagonal of F.
func Damp(F *mat.SymDense) {
	for j := 0; j < F.SymmetricDim(); j++ {
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
func (n *NREINFORCE[P]) Params() []float64 { return n.w }

// Snapshot returns w (read-only view; layout "raw").
func (n *NREINFORCE[P]) Snapshot() []float64 { return n.w }

const (
	stateMagic   = "ZNRF"
	stateVersion = 1
)

// MarshalState encodes w ("ZNRF", version 1); ε_t depends only on the
// iteration number, so there is no other state.
func (n *NREINFORCE[P]) MarshalState() ([]byte, error) {
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(n.w)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob; w must have the problem's
// dimension. On error the receiver is unchanged.
func (n *NREINFORCE[P]) UnmarshalState(b []byte) error {
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
