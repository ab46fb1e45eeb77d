package linreg

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"zorepro/pipeline/stream"
)

// SquaredLoss is the minibatch ½·MSE of a linear prediction, the loss SGD
// minimizes (algos/sgd): it owns the scratch of batches of a fixed size.
type SquaredLoss struct {
	in   *Instance
	X    *mat.Dense
	y, r []float64
}

// NewLoss returns the squared loss of batches of n ≥ 1 examples (the error
// is always nil: every instance draws batches). It panics if n < 1.
func (in *Instance) NewLoss(n int) (*SquaredLoss, error) {
	if n < 1 {
		panic(fmt.Sprintf("linreg: NewLoss: batch of %d examples", n))
	}
	return &SquaredLoss{in: in, X: mat.NewDense(n, in.Dim(), nil), y: make([]float64, n), r: make([]float64, n)}, nil
}

// Gradient draws iteration it's batch from src.Rand("batch", it) (Batch)
// and computes, at w: the residuals r = Xw − y (BLAS dgemv, then y
// subtracted), the loss (1/B)·Σ_i ½r_i² (summed in index order, before any
// step), Xᵀr (dgemv) and g_j = (1/B)·(Xᵀr)_j. It panics unless len(g) and
// len(w) are Dim.
func (l *SquaredLoss) Gradient(g, w []float64, src stream.Source, it int64) (float64, error) {
	l.in.drawBatch(src, it, l.X, l.y)
	B, dim := l.X.Dims()
	if len(g) != dim || len(w) != dim {
		panic(fmt.Sprintf("linreg: SquaredLoss.Gradient: len(g) = %d, len(w) = %d, want %d", len(g), len(w), dim))
	}
	rv := mat.NewVecDense(B, l.r)
	rv.MulVec(l.X, mat.NewVecDense(dim, w))
	var loss float64
	for i := range l.r {
		l.r[i] -= l.y[i]
		loss += 0.5 * l.r[i] * l.r[i]
	}
	loss /= float64(B)
	mat.NewVecDense(dim, g).MulVec(l.X.T(), rv)
	inv := 1 / float64(B)
	for j := range g {
		g[j] = inv * g[j]
	}
	return loss, nil
}
