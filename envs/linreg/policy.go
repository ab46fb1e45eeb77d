package linreg

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"zorepro/pipeline/stream"
)

// GaussianPolicy explores in action space (spec §3.5): the action for
// features x is the prediction ŷ ~ N(x·w, β²), and its reward is −½(ŷ − y)².
// It is this problem's policy for REINFORCE (algos/reinforce) and natural
// REINFORCE (algos/nreinforce), and owns the scratch of batches of a fixed
// size.
type GaussianPolicy struct {
	in   *Instance
	beta float64
	// X holds the last batch's B×Dim feature rows, Y its B labels, Noise
	// its B exploration draws n_i ~ N(0, 1).
	X        *mat.Dense
	Y        []float64
	Noise    []float64
	mu, coef []float64
}

// NewPolicy returns the Gaussian policy with standard deviation beta > 0 for
// batches of n ≥ 1 examples; a missing beta (0) is an ErrPolicy error. It
// panics if n < 1.
func (in *Instance) NewPolicy(n int, beta float64) (*GaussianPolicy, error) {
	if n < 1 {
		panic(fmt.Sprintf("linreg: NewPolicy: batch of %d examples", n))
	}
	if !(beta > 0) {
		return nil, fmt.Errorf("%w: the Gaussian policy needs its standard deviation beta > 0, got %v", ErrPolicy, beta)
	}
	dim := in.Dim()
	return &GaussianPolicy{
		in: in, beta: beta,
		X: mat.NewDense(n, dim, nil), Y: make([]float64, n), Noise: make([]float64, n),
		mu: make([]float64, n), coef: make([]float64, n),
	}, nil
}

// Gradient draws iteration it's batch: X and Y with src.Rand("batch", it)
// (Batch), then Noise[0], Noise[1], ... from src.Rand("explore", it). It
// writes the score-function estimate ĝ into g and returns the mean reward
// (1/B)·Σ r_i (summed in index order):
//
//	μ = Xw (dgemv);  per i: ŷ_i = μ_i + β·n_i,  e_i = ŷ_i − y_i,
//	r_i = −(e_i·e_i·½),  c_i = r_i·(ŷ_i − μ_i);
//	s = Xᵀc (dgemv);  g_j = −((1/B)·s_j).
//
// ĝ is the score-function estimate of the gradient of the Gaussian-smoothed
// batch loss with the 1/β² factor of the score dropped and no baseline, as
// in the authors' code (§6 item 18): E[ĝ] = β²·∇_w E_n[½(ŷ − y)²]. It
// panics if len(g) or len(w) is not Dim.
func (p *GaussianPolicy) Gradient(g, w []float64, src stream.Source, it int64) (float64, error) {
	p.in.drawBatch(src, it, p.X, p.Y)
	rng := src.Rand("explore", uint64(it))
	for i := range p.Noise {
		p.Noise[i] = rng.NormFloat64()
	}
	return p.estimate(g, w), nil
}

// estimate computes ĝ and the mean reward on the batch and noise in p.
func (p *GaussianPolicy) estimate(g, w []float64) float64 {
	n, dim := p.X.Dims()
	if len(g) != dim || len(w) != dim {
		panic(fmt.Sprintf("linreg: GaussianPolicy.Gradient: len(g) = %d, len(w) = %d, want %d", len(g), len(w), dim))
	}
	mat.NewVecDense(n, p.mu).MulVec(p.X, mat.NewVecDense(dim, w))
	var sum float64
	for i, mu := range p.mu {
		yhat := mu + p.beta*p.Noise[i]
		e := yhat - p.Y[i]
		r := -(e * e * 0.5)
		sum += r
		p.coef[i] = r * (yhat - mu)
	}
	mat.NewVecDense(dim, g).MulVec(p.X.T(), mat.NewVecDense(n, p.coef))
	inv := 1 / float64(n)
	for j := range g {
		g[j] = -(inv * g[j])
	}
	return sum / float64(n)
}

// Fisher sets F to the Fisher information estimate of the last batch's
// policy with the 1/β² factor dropped (as in ĝ): (1/B)·XᵀX (dsyrk with
// alpha = 1/B). It panics unless F is Dim×Dim.
func (p *GaussianPolicy) Fisher(F *mat.SymDense) {
	B, dim := p.X.Dims()
	if F.SymmetricDim() != dim {
		panic(fmt.Sprintf("linreg: Fisher: F is %d×%d, want %d×%d", F.SymmetricDim(), F.SymmetricDim(), dim, dim))
	}
	F.SymOuterK(1/float64(B), p.X.T())
}
