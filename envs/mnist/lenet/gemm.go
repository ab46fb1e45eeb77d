package lenet

import (
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// impl is gonum's pure-Go BLAS, named directly rather than through blas64
// so that a process-wide blas64.Use cannot change the network's bits.
var impl gonum.Implementation

// Piece sizes for gemm. gonum's Dgemm takes a blocked path that spawns
// goroutines as soon as ⌈m/64⌉·⌈n/64⌉ ≥ 4 (gonum v0.17 minParBlock); that
// path also cuts the inner dimension k into 64-long blocks, which changes
// the rounding of A·Bᵀ products (each block's dot product is added to C
// separately). Calling Dgemm on pieces of at most pieceLong×pieceShort (3
// blocks) keeps every call on the serial path: no goroutines, k never cut.
const (
	pieceLong  = 192
	pieceShort = 64
)

// gemmStats accumulates the time spent inside gemm and the nominal flops
// (2·m·n·k per product, whatever the kernel skips), and records the calls'
// shapes while record is set. Benchmarks set Net.stats to measure the GEMM
// share of a pass and to replay its shapes.
type gemmStats struct {
	calls  int
	flops  float64
	dur    time.Duration
	record bool
	shapes []gemmShape
}

// gemmShape is one gemm call without its operands.
type gemmShape struct {
	tA, tB        blas.Transpose
	m, n, k       int
	lda, ldb, ldc int
	beta          float64
}

// gemm computes C = α·op(A)·op(B) + β·C (row-major, leading dimensions
// lda, ldb, ldc) with gonum's Dgemm, split into pieces of C of at most
// 192×64 or 64×192 so that each Dgemm call runs serially (see pieceLong).
//
// Every element of C is then computed by one kernel over the full k in a
// fixed order, so the result depends neither on the piece sizes nor on
// GOMAXPROCS, and row i of C depends only on row i of op(A) and on op(B):
// a batch gives the same bits as its images one at a time. gonum's kernels
// skip the terms whose factor α·a is exactly 0 (NoTrans×NoTrans,
// Trans×NoTrans); the results are the same as adding them, except for the
// sign of zero and NaN/Inf propagation from B.
func gemm(st *gemmStats, tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	var t0 time.Time
	if st != nil {
		t0 = time.Now()
	}
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
	if st != nil {
		st.dur += time.Since(t0)
		st.calls++
		st.flops += 2 * float64(m) * float64(n) * float64(k)
		if st.record {
			st.shapes = append(st.shapes, gemmShape{tA, tB, m, n, k, lda, ldb, ldc, beta})
		}
	}
}
