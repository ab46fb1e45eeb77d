package reinforce

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"zorepro/pipeline/stream"
)

// Problem is a regression problem that draws batches; *linreg.Instance
// satisfies it.
type Problem interface {
	// Dim is the length of a feature row and of w; coordinate 0 is the bias.
	Dim() int
	// Batch fills X (rows(X)×Dim) and y (length rows(X)) from rng.
	Batch(rng *rand.Rand, X *mat.Dense, y []float64)
}

// Batch is one iteration's data for the score-function estimator: B
// examples and B standard-normal exploration draws, with scratch for
// Gradient. Natural REINFORCE reads X to form its Fisher matrix.
type Batch struct {
	// X holds the B×Dim feature rows, Y the B labels.
	X *mat.Dense
	Y []float64
	// Noise holds the B exploration draws n_i ~ N(0, 1).
	Noise []float64

	mu, coef []float64
}

// NewBatch returns a zero Batch of n ≥ 1 examples with dim ≥ 1 features.
func NewBatch(n, dim int) *Batch {
	if n < 1 || dim < 1 {
		panic(fmt.Sprintf("reinforce: NewBatch(%d, %d)", n, dim))
	}
	return &Batch{
		X: mat.NewDense(n, dim, nil), Y: make([]float64, n), Noise: make([]float64, n),
		mu: make([]float64, n), coef: make([]float64, n),
	}
}

// Draw fills the batch for iteration it: X and Y from p with
// src.Rand("batch", it), then Noise[0], Noise[1], ... from
// src.Rand("explore", it).NormFloat64(). It panics if p.Dim() does not
// match the batch.
func (b *Batch) Draw(p Problem, src stream.Source, it int64) {
	p.Batch(src.Rand("batch", uint64(it)), b.X, b.Y)
	rng := src.Rand("explore", uint64(it))
	for i := range b.Noise {
		b.Noise[i] = rng.NormFloat64()
	}
}

// Gradient writes the score-function estimate ĝ into g and returns the
// mean reward (1/B)·Σ r_i (summed in index order):
//
//	μ = Xw (dgemv);  per i: ŷ_i = μ_i + β·n_i,  e_i = ŷ_i − y_i,
//	r_i = −(e_i·e_i·½),  c_i = r_i·(ŷ_i − μ_i);
//	s = Xᵀc (dgemv);  g_j = −((1/B)·s_j).
//
// It panics if len(g) or len(w) is not Dim.
func (b *Batch) Gradient(g, w []float64, beta float64) (meanReward float64) {
	n, dim := b.X.Dims()
	if len(g) != dim || len(w) != dim {
		panic(fmt.Sprintf("reinforce: Gradient: len(g) = %d, len(w) = %d, want %d", len(g), len(w), dim))
	}
	mat.NewVecDense(n, b.mu).MulVec(b.X, mat.NewVecDense(dim, w))
	var sum float64
	for i, mu := range b.mu {
		yhat := mu + beta*b.Noise[i]
		e := yhat - b.Y[i]
		r := -(e * e * 0.5)
		sum += r
		b.coef[i] = r * (yhat - mu)
	}
	mat.NewVecDense(dim, g).MulVec(b.X.T(), mat.NewVecDense(n, b.coef))
	inv := 1 / float64(n)
	for j := range g {
		g[j] = -(inv * g[j])
	}
	return sum / float64(n)
}
