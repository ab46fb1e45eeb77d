package lenet

import (
	"time"

	"gonum.org/v1/gonum/blas"
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
// lda, ldb, ldc) with the build's BLAS (dgemm: gemm_gonum.go or
// gemm_openblas.go) and, when st is not nil, accounts for the call.
func gemm(st *gemmStats, tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	var t0 time.Time
	if st != nil {
		t0 = time.Now()
	}
	dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	if st != nil {
		st.dur += time.Since(t0)
		st.calls++
		st.flops += 2 * float64(m) * float64(n) * float64(k)
		if st.record {
			st.shapes = append(st.shapes, gemmShape{tA, tB, m, n, k, lda, ldb, ldc, beta})
		}
	}
}
