//go:build openblas

package lenet

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// OpenBLAS is opened with dlopen, not linked, so that the process chooses
// its kernels before it loads: OpenBLAS reads OPENBLAS_CORETYPE once, in
// the constructor that runs when the library is loaded. Its entry points
// are declared here rather than through a cblas.h (Debian keeps one per
// threading variant under an architecture directory); the enumerations
// are CBLAS's fixed values.
enum { rowMajor = 101, noTrans = 111, trans = 112 };

typedef void (*dgemm_fn)(int order, int transA, int transB, int m, int n, int k,
	double alpha, const double *a, int lda, const double *b, int ldb,
	double beta, double *c, int ldc);

static dgemm_fn p_dgemm;
static void (*p_set_num_threads)(int);
static int (*p_get_num_threads)(void);
static char *(*p_get_config)(void);
static char *(*p_get_corename)(void);

// cpu_has_avx2_fma reports whether the CPU runs OpenBLAS's Haswell
// kernels (AVX2 and FMA3).
static int cpu_has_avx2_fma(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// open_openblas sets OPENBLAS_CORETYPE to core (unless core is NULL),
// opens the library and resolves its entry points; it returns NULL or why
// it could not.
static const char *open_openblas(const char *core) {
	if (core != NULL && setenv("OPENBLAS_CORETYPE", core, 1) != 0) {
		return "setenv OPENBLAS_CORETYPE failed";
	}
	void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		return dlerror();
	}
	p_dgemm = (dgemm_fn)dlsym(lib, "cblas_dgemm");
	p_set_num_threads = (void (*)(int))dlsym(lib, "openblas_set_num_threads");
	p_get_num_threads = (int (*)(void))dlsym(lib, "openblas_get_num_threads");
	p_get_config = (char *(*)(void))dlsym(lib, "openblas_get_config");
	p_get_corename = (char *(*)(void))dlsym(lib, "openblas_get_corename");
	if (!p_dgemm || !p_set_num_threads || !p_get_num_threads || !p_get_config || !p_get_corename) {
		return "libopenblas.so.0 lacks cblas_dgemm or an openblas_* entry point";
	}
	return NULL;
}

static void set_num_threads(int n) { p_set_num_threads(n); }
static int get_num_threads(void) { return p_get_num_threads(); }
static char *get_config(void) { return p_get_config(); }
static char *get_corename(void) { return p_get_corename(); }

static void call_dgemm(int order, int transA, int transB, int m, int n, int k,
	double alpha, const double *a, int lda, const double *b, int ldb,
	double beta, double *c, int ldc) {
	p_dgemm(order, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"gonum.org/v1/gonum/blas"
)

// PinnedCore is the OpenBLAS kernel family every x86-64 CPU with AVX2 and
// FMA3 computes with. OpenBLAS otherwise picks kernels by CPU model (and
// falls back to generic ones for a model it does not know: version 0.3.21
// runs Sapphire Rapids Xeons on its SSE3 "Prescott" kernels), and
// different kernels round differently, so the same task would give other
// bits on another machine. Pinned, a product's bits depend only on the
// kernels and their fixed blocking, not on the CPU: MNIST results move
// between AVX2 machines, Intel or AMD, as every other experiment's do.
const PinnedCore = "Haswell"

// directConv reports whether Forward's convolutions run as the direct
// AVX2/FMA3 kernels of conv_openblas.go, which compute the bits of the
// Haswell core's products: set by init where OpenBLAS is pinned to it.
var directConv bool

// blasName is OpenBLAS's configuration string (version, build options)
// and the kernel core it computes with, read once at start-up.
var blasName string

// init opens OpenBLAS pinned to PinnedCore (on a CPU without AVX2 and FMA3,
// with the core OpenBLAS chooses, which BLAS then names: such a machine
// computes other MNIST bits, and its tasks other identities) and sets it to
// one thread. The pipeline parallelises across tasks and within them
// through its own workers; OpenBLAS computes on the calling thread only,
// which also keeps each product's summation order fixed (a threaded
// product's order depends on how it is split).
func init() {
	var core *C.char
	if C.cpu_has_avx2_fma() != 0 {
		core = C.CString(PinnedCore)
		defer C.free(unsafe.Pointer(core))
		directConv = true
	}
	if msg := C.open_openblas(core); msg != nil {
		panic(fmt.Sprintf("lenet: cannot load OpenBLAS (install Debian's libopenblas0, or build without the openblas tag): %s", C.GoString(msg)))
	}
	C.set_num_threads(1)
	if n := C.get_num_threads(); n != 1 {
		panic(fmt.Sprintf("lenet: OpenBLAS keeps %d threads after openblas_set_num_threads(1)", n))
	}
	got := C.GoString(C.get_corename())
	if core != nil && !strings.EqualFold(got, PinnedCore) {
		panic(fmt.Sprintf("lenet: OpenBLAS computes with core %s although OPENBLAS_CORETYPE=%s was set before it loaded", got, PinnedCore))
	}
	blasName = fmt.Sprintf("OpenBLAS (%s; core %s; one thread)", C.GoString(C.get_config()), got)
}

// BLAS names the matrix-product library this build computes with; it
// enters the identity of every task that runs the network. The kernel
// core is part of it: PinnedCore on every CPU with AVX2 and FMA3.
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
	C.call_dgemm(C.rowMajor, cTrans(tA), cTrans(tB), C.int(m), C.int(n), C.int(k),
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
