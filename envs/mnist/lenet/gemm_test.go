package lenet

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// dgemm's BLAS semantics, the same in both builds: a hand-computed
// product with each transposition, C = β·C when k = 0 (β = 0 clears C
// without reading it, NaN included), and operands too short panic.
func TestDgemmSemantics(t *testing.T) {
	// A = [1 2 3; 4 5 6] (2×3), B = [1 0; 0 1; 1 1] (3×2):
	// A·B = [4 5; 10 11]; with C = 1 and β = 1, α = 2: [9 11; 21 23].
	a := []float64{1, 2, 3, 4, 5, 6}
	aT := []float64{1, 4, 2, 5, 3, 6}
	b := []float64{1, 0, 0, 1, 1, 1}
	bT := []float64{1, 0, 1, 0, 1, 1}
	want := []float64{9, 11, 21, 23}
	for _, tc := range []struct {
		tA, tB   blas.Transpose
		a, b     []float64
		lda, ldb int
	}{
		{blas.NoTrans, blas.NoTrans, a, b, 3, 2},
		{blas.Trans, blas.NoTrans, aT, b, 2, 2},
		{blas.NoTrans, blas.Trans, a, bT, 3, 3},
		{blas.Trans, blas.Trans, aT, bT, 2, 3},
	} {
		c := []float64{1, 1, 1, 1}
		dgemm(tc.tA, tc.tB, 2, 2, 3, 2, tc.a, tc.lda, tc.b, tc.ldb, 1, c, 2)
		for i := range c {
			if c[i] != want[i] {
				t.Errorf("%v×%v: C = %v, want %v", tc.tA, tc.tB, c, want)
				break
			}
		}
	}
	c := []float64{math.NaN(), 3}
	dgemm(blas.NoTrans, blas.NoTrans, 1, 2, 0, 1, nil, 1, nil, 2, 0, c, 2)
	if c[0] != 0 || c[1] != 0 {
		t.Errorf("k = 0, β = 0: C = %v, want [0 0]", c)
	}
	c = []float64{1, 3}
	dgemm(blas.NoTrans, blas.NoTrans, 1, 2, 0, 1, nil, 1, nil, 2, 2, c, 2)
	if c[0] != 2 || c[1] != 6 {
		t.Errorf("k = 0, β = 2: C = %v, want [2 6]", c)
	}
	defer func() {
		if recover() == nil {
			t.Error("a short A did not panic")
		}
	}()
	dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, a[:5], 3, b, 2, 0, make([]float64, 4), 2)
}
