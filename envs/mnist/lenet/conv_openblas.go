//go:build openblas

package lenet

/*
#cgo CFLAGS: -O2
#include <immintrin.h>

// The kernels compute each output as the OpenBLAS Haswell dgemm kernel
// computes the same element of im2col + Dgemm (c = bias, then c += W·cols
// with α = β = 1): one fused multiply-add chain over the taps in the
// patch's order (input channel, kernel row, kernel column), from +0, and
// then one addition of the bias. Products and sums are explicit AVX2/FMA3
// intrinsics, with no scalar floating-point arithmetic for a compiler to
// contract or reorder, so the bits are those of the instructions written.
// TestDirectConvolutionsGiveTheProductsBits checks them against the
// Dgemm path.

// conv1_direct: img 28×28, w 10×25, b 10 → out 10×(24×24). Two output
// channels and one output row (24 columns: six vectors of four) at a time.
__attribute__((target("avx2,fma")))
static void conv1_direct(const double *img, const double *w, const double *b, double *out) {
	for (int c = 0; c < 10; c += 2) {
		const double *w0 = w + c*25, *w1 = w0 + 25;
		for (int y = 0; y < 24; y++) {
			__m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
			__m256d b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0;
			for (int ki = 0; ki < 5; ki++) {
				for (int kj = 0; kj < 5; kj++) {
					const double *r = img + (y+ki)*28 + kj;
					__m256d x0 = _mm256_loadu_pd(r), x1 = _mm256_loadu_pd(r+4), x2 = _mm256_loadu_pd(r+8);
					__m256d x3 = _mm256_loadu_pd(r+12), x4 = _mm256_loadu_pd(r+16), x5 = _mm256_loadu_pd(r+20);
					__m256d v = _mm256_broadcast_sd(w0 + ki*5 + kj);
					a0 = _mm256_fmadd_pd(v, x0, a0); a1 = _mm256_fmadd_pd(v, x1, a1); a2 = _mm256_fmadd_pd(v, x2, a2);
					a3 = _mm256_fmadd_pd(v, x3, a3); a4 = _mm256_fmadd_pd(v, x4, a4); a5 = _mm256_fmadd_pd(v, x5, a5);
					v = _mm256_broadcast_sd(w1 + ki*5 + kj);
					b0 = _mm256_fmadd_pd(v, x0, b0); b1 = _mm256_fmadd_pd(v, x1, b1); b2 = _mm256_fmadd_pd(v, x2, b2);
					b3 = _mm256_fmadd_pd(v, x3, b3); b4 = _mm256_fmadd_pd(v, x4, b4); b5 = _mm256_fmadd_pd(v, x5, b5);
				}
			}
			double *o = out + c*576 + y*24;
			__m256d bv = _mm256_broadcast_sd(b + c);
			_mm256_storeu_pd(o, _mm256_add_pd(a0, bv)); _mm256_storeu_pd(o+4, _mm256_add_pd(a1, bv));
			_mm256_storeu_pd(o+8, _mm256_add_pd(a2, bv)); _mm256_storeu_pd(o+12, _mm256_add_pd(a3, bv));
			_mm256_storeu_pd(o+16, _mm256_add_pd(a4, bv)); _mm256_storeu_pd(o+20, _mm256_add_pd(a5, bv));
			o += 576;
			bv = _mm256_broadcast_sd(b + c + 1);
			_mm256_storeu_pd(o, _mm256_add_pd(b0, bv)); _mm256_storeu_pd(o+4, _mm256_add_pd(b1, bv));
			_mm256_storeu_pd(o+8, _mm256_add_pd(b2, bv)); _mm256_storeu_pd(o+12, _mm256_add_pd(b3, bv));
			_mm256_storeu_pd(o+16, _mm256_add_pd(b4, bv)); _mm256_storeu_pd(o+20, _mm256_add_pd(b5, bv));
		}
	}
}

// conv2_direct: a 10×12×12, w 20×250, b 20 → out 20×(8×8). Four output
// channels and one output row (8 columns: two vectors) at a time; the 250
// taps in the order (input channel, kernel row, kernel column).
__attribute__((target("avx2,fma")))
static void conv2_direct(const double *a, const double *w, const double *b, double *out) {
	for (int co = 0; co < 20; co += 4) {
		for (int y = 0; y < 8; y++) {
			__m256d s00 = _mm256_setzero_pd(), s01 = s00, s10 = s00, s11 = s00;
			__m256d s20 = s00, s21 = s00, s30 = s00, s31 = s00;
			for (int ci = 0; ci < 10; ci++) {
				for (int ki = 0; ki < 5; ki++) {
					const double *row = a + ci*144 + (y+ki)*12;
					const double *wk = w + co*250 + ci*25 + ki*5;
					for (int kj = 0; kj < 5; kj++) {
						__m256d x0 = _mm256_loadu_pd(row + kj), x1 = _mm256_loadu_pd(row + kj + 4);
						__m256d v = _mm256_broadcast_sd(wk + kj);
						s00 = _mm256_fmadd_pd(v, x0, s00); s01 = _mm256_fmadd_pd(v, x1, s01);
						v = _mm256_broadcast_sd(wk + 250 + kj);
						s10 = _mm256_fmadd_pd(v, x0, s10); s11 = _mm256_fmadd_pd(v, x1, s11);
						v = _mm256_broadcast_sd(wk + 500 + kj);
						s20 = _mm256_fmadd_pd(v, x0, s20); s21 = _mm256_fmadd_pd(v, x1, s21);
						v = _mm256_broadcast_sd(wk + 750 + kj);
						s30 = _mm256_fmadd_pd(v, x0, s30); s31 = _mm256_fmadd_pd(v, x1, s31);
					}
				}
			}
			double *o = out + co*64 + y*8;
			__m256d bv = _mm256_broadcast_sd(b + co);
			_mm256_storeu_pd(o, _mm256_add_pd(s00, bv)); _mm256_storeu_pd(o+4, _mm256_add_pd(s01, bv));
			bv = _mm256_broadcast_sd(b + co + 1);
			_mm256_storeu_pd(o+64, _mm256_add_pd(s10, bv)); _mm256_storeu_pd(o+68, _mm256_add_pd(s11, bv));
			bv = _mm256_broadcast_sd(b + co + 2);
			_mm256_storeu_pd(o+128, _mm256_add_pd(s20, bv)); _mm256_storeu_pd(o+132, _mm256_add_pd(s21, bv));
			bv = _mm256_broadcast_sd(b + co + 3);
			_mm256_storeu_pd(o+192, _mm256_add_pd(s30, bv)); _mm256_storeu_pd(o+196, _mm256_add_pd(s31, bv));
		}
	}
}
*/
import "C"

// The convolutions of Forward. Where OpenBLAS computes with the pinned
// Haswell kernels (every CPU with AVX2 and FMA3: directConv, set by init in
// gemm_openblas.go), they run as the direct kernels above: the same bits as
// im2col + Dgemm without the patch matrices (the products of LeNet's thin
// layers, 10 and 20 output channels, run at about 60% of the core's peak,
// and the patches cost a third again). Elsewhere they are im2col + Dgemm.

func (net *Net) conv1(w1, b1, img []float64) {
	if !net.direct {
		net.conv1GEMM(w1, b1, img)
		return
	}
	_, _, _ = w1[c1Ch*kk-1], b1[c1Ch-1], img[InputSize-1]
	C.conv1_direct((*C.double)(&img[0]), (*C.double)(&w1[0]), (*C.double)(&b1[0]), (*C.double)(&net.c1[0]))
}

func (net *Net) conv2(w2, b2, a1 []float64) {
	if !net.direct {
		net.conv2GEMM(w2, b2, a1)
		return
	}
	_, _, _ = w2[c2Ch*c2In-1], b2[c2Ch-1], a1[a1Len-1]
	C.conv2_direct((*C.double)(&a1[0]), (*C.double)(&w2[0]), (*C.double)(&b2[0]), (*C.double)(&net.c2[0]))
}
