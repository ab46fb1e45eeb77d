//go:build !openblas

package lenet

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// impl is gonum's pure-Go BLAS, named directly rather than through blas64
// so that a process-wide blas64.Use cannot change the network's bits.
var impl gonum.Implementation

// BLAS names the matrix-product library this build computes with; it
// enters the identity of every task that runs the network.
func BLAS() string { return "gonum (pure Go; its version is in the code identity)" }

// Piece sizes for dgemm. gonum's Dgemm takes a blocked path that spawns
// goroutines as soon as ⌈m/64⌉·⌈n/64⌉ ≥ 4 (gonum v0.17 minParBlock); that
// path also cuts the inner dimension k into 64-long blocks, which changes
// the rounding of A·Bᵀ products (each block's dot product is added to C
// separately). Calling Dgemm on pieces of at most pieceLong×pieceShort (3
// blocks) keeps every call on the serial path: no goroutines, k never cut.
const (
	pieceLong  = 192
	pieceShort = 64
)

// dgemm is gonum's Dgemm split into pieces of C of at most 192×64 or
// 64×192 so that each Dgemm call runs serially (see pieceLong).
//
// Every element of C is then computed by one kernel over the full k in a
// fixed order, so the result depends neither on the piece sizes nor on
// GOMAXPROCS, and row i of C depends only on row i of op(A) and on op(B):
// a batch gives the same bits as its images one at a time. gonum's kernels
// skip the terms whose factor α·a is exactly 0 (NoTrans×NoTrans,
// Trans×NoTrans); the results are the same as adding them, except for the
// sign of zero and NaN/Inf propagation from B.
func dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	pm, pn := pieceShort, pieceLong
	if m > n {
		pm, pn = pieceLong, pieceShort
	}
	for i := 0; i < m; i += pm {
		mi := min(pm, m-i)
		ai := i * lda // rows i.. of A
		if tA == blas.Trans {
			ai = i // columns i.. of the stored k×m matrix
		}
		for j := 0; j < n; j += pn {
			nj := min(pn, n-j)
			bj := j // columns j.. of the stored k×n matrix
			if tB == blas.Trans {
				bj = j * ldb // rows j.. of the stored n×k matrix
			}
			impl.Dgemm(tA, tB, mi, nj, k, alpha, a[ai:], lda, b[bj:], ldb, beta, c[i*ldc+j:], ldc)
		}
	}
}

// batchInvariant: row i of a product depends only on row i of op(A) and on
// op(B) (see dgemm), so an image's logits do not depend on its batch.
const batchInvariant = true
