package linreg

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"zorepro/pipeline/stream"
)

// Features returns d, the number of non-bias features: the ones ARS V2-t
// standardizes with its running statistics (spec §3.7).
func (in *Instance) Features() int { return in.D }

// Queries is a batch of examples for ARS V2-t (algos/ars, spec §3.7): one
// example per direction, scored for the + and the − perturbation by the
// reward −½(z·(w ± ν·Δ) − y)², where z = [1, (x[1:]−μ)/s]. It owns the
// scratch of batches of a fixed size.
type Queries struct {
	in *Instance
	X  *mat.Dense
	y  []float64
	z  [][]float64 // per example, so concurrent queries do not share it
}

// NewQueries returns the queries of batches of n ≥ 1 examples (the error is
// always nil). It panics if n < 1.
func (in *Instance) NewQueries(n int) (*Queries, error) {
	if n < 1 {
		panic(fmt.Sprintf("linreg: NewQueries: batch of %d examples", n))
	}
	q := &Queries{in: in, X: mat.NewDense(n, in.Dim(), nil), y: make([]float64, n), z: make([][]float64, n)}
	for k := range q.z {
		q.z[k] = make([]float64, in.Dim())
	}
	return q, nil
}

// Draw draws iteration it's examples from src.Rand("batch", it) (Batch).
func (q *Queries) Draw(src stream.Source, it int64) {
	q.in.drawBatch(src, it, q.X, q.y)
}

// Features returns example k's non-bias features x[1:].
func (q *Queries) Features(k int) []float64 { return q.X.RawRowView(k)[1:] }

// Rewards standardizes example k, z = [1, (x[1:]−μ)/s], and returns
// Rewards(w, dir, z, y_k, ν). It uses no randomness.
func (q *Queries) Rewards(k int, w, dir []float64, nu float64, mu, s []float64, _ stream.Source, _ int64) (plus, minus float64, err error) {
	x, z := q.X.RawRowView(k), q.z[k]
	z[0] = 1
	for j := 1; j < len(z); j++ {
		z[j] = (x[j] - mu[j-1]) / s[j-1]
	}
	plus, minus = Rewards(w, dir, z, q.y[k], nu)
	return plus, minus, nil
}

// Rewards returns r± = −½(z·(w ± ν·Δ) − y)² for one direction: the perturbed
// weights are w_j ± ν·Δ_j, the prediction Σ_j z_j·(w_j ± ν·Δ_j) is summed in
// index order, and r = −((ŷ−y)·(ŷ−y)·½). It panics on mismatched lengths.
func Rewards(w, dir, z []float64, y, nu float64) (rPlus, rMinus float64) {
	if len(dir) != len(w) || len(z) != len(w) {
		panic(fmt.Sprintf("linreg: Rewards: len(w) = %d, len(dir) = %d, len(z) = %d", len(w), len(dir), len(z)))
	}
	var yp, ym float64
	for j, zj := range z {
		d := nu * dir[j]
		yp += zj * (w[j] + d)
		ym += zj * (w[j] - d)
	}
	ep, em := yp-y, ym-y
	return -(ep * ep * 0.5), -(em * em * 0.5)
}
