//go:build openblas

package lenet

/*
#cgo LDFLAGS: -lopenblas

// OpenBLAS's own entry points, declared here rather than through a cblas.h
// (Debian keeps one per threading variant under an architecture directory);
// the enumerations are CBLAS's fixed values.
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char *openblas_get_config(void);
char *openblas_get_corename(void);
void cblas_dgemm(int order, int transA, int transB, int m, int n, int k,
	double alpha, const double *a, int lda, const double *b, int ldb,
	double beta, double *c, int ldc);

enum { rowMajor = 101, noTrans = 111, trans = 112 };
*/
import "C"

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
)

// blasName is OpenBLAS's configuration string (version, build options)
// and the kernel core it chose for this CPU, read once at start-up.
var blasName string

// The pipeline parallelises across tasks and within them through its own
// workers; OpenBLAS computes on the calling thread only, which also keeps
// each product's summation order fixed (a threaded product's order depends
// on how it is split).
func init() {
	C.openblas_set_num_threads(1)
	if n := C.openblas_get_num_threads(); n != 1 {
		panic(fmt.Sprintf("lenet: OpenBLAS keeps %d threads after openblas_set_num_threads(1)", n))
	}
	blasName = fmt.Sprintf("OpenBLAS (%s; core %s; one thread)", C.GoString(C.openblas_get_config()), C.GoString(C.openblas_get_corename()))
}

// BLAS names the matrix-product library this build computes with; it
// enters the identity of every task that runs the network. OpenBLAS picks
// its kernels by CPU at load time, so the core it chose is part of it.
func BLAS() string { return blasName }

// dgemm calls OpenBLAS's cblas_dgemm (row-major) on the calling thread.
// OpenBLAS's kernels are fixed per core, shape and transposition: a call's
// bits do not change from run to run or with how many goroutines call at
// once. Whether a row of C depends on the other rows of A (batch
// invariance) is up to its kernels; TestBatchInvariance checks the shapes
// the network uses.
func dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	checkOperand("A", tA, m, k, lda, len(a))
	checkOperand("B", tB, k, n, ldb, len(b))
	checkOperand("C", blas.NoTrans, m, n, ldc, len(c))
	if k == 0 {
		// C = β·C (β = 0 sets C to 0 without reading it, as BLAS does);
		// a and b may be empty, so OpenBLAS is not called with them.
		for i := range m {
			row := c[i*ldc : i*ldc+n]
			for j := range row {
				if beta == 0 {
					row[j] = 0
				} else {
					row[j] *= beta
				}
			}
		}
		return
	}
	C.cblas_dgemm(C.rowMajor, cTrans(tA), cTrans(tB), C.int(m), C.int(n), C.int(k),
		C.double(alpha), (*C.double)(&a[0]), C.int(lda), (*C.double)(&b[0]), C.int(ldb),
		C.double(beta), (*C.double)(&c[0]), C.int(ldc))
}

func cTrans(t blas.Transpose) C.int {
	if t == blas.Trans {
		return C.trans
	}
	return C.noTrans
}

// checkOperand panics unless a row-major op(X) of rows×cols, stored with
// leading dimension ld, fits in n elements.
func checkOperand(name string, t blas.Transpose, rows, cols, ld, n int) {
	r, c := rows, cols
	if t == blas.Trans {
		r, c = cols, rows
	}
	if ld < max(1, c) || (r > 0 && c > 0 && n < (r-1)*ld+c) {
		panic(fmt.Sprintf("lenet: dgemm: %s is %d×%d with leading dimension %d in %d elements", name, r, c, ld, n))
	}
}

// batchInvariant: OpenBLAS picks kernels by shape, so a row of a product
// may differ in its last bits with the number of rows.
const batchInvariant = false
