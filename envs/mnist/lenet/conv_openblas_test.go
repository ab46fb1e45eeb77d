//go:build openblas

package lenet

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// Forward's direct convolutions give the bits of im2col + Dgemm with the
// pinned kernels: the convolution outputs (NaN for NaN: which NaN an FMA
// passes on depends on its operands' order, and pooling turns every NaN
// into the same 0 and argmax), the pooled maps and their argmaxes, the
// logits and, in Train mode, Backward's gradient, on MNIST-like and
// standardized images, at three scales of parameters, with signed zeros,
// subnormals, infinities and NaNs among the pixels, for the batch sizes
// the stages use.
func TestDirectConvolutionsGiveTheProductsBits(t *testing.T) {
	if !directConv {
		t.Skipf("%s: no direct kernels on this CPU (no AVX2 and FMA3); Forward computes with the products", BLAS())
	}
	special := func(x []float64) []float64 {
		x = slices.Clone(x)
		vals := []float64{math.Copysign(0, -1), 5e-324, -5e-324, math.Inf(1), math.Inf(-1), math.NaN(), 1e300, -1e300}
		for i, v := range vals { // one value per image, where the images have them
			if img := i + 1; img*InputSize < len(x) {
				x[img*InputSize+(100+37*i)%InputSize] = v
			}
		}
		return x
	}
	standardized := func(n int, seed uint64) []float64 {
		rng := newRand(seed)
		x := make([]float64, n*InputSize)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	checked := 0
	for _, n := range []int{1, 7, 64, 100} {
		for _, scale := range []float64{1, 10, 1e-3} {
			theta := NewParams(newRand(uint64(n) + 100))
			for i := range theta {
				theta[i] *= scale
			}
			for _, in := range []struct {
				name string
				x    []float64
			}{
				{"pixels", pixelImages(newRand(uint64(n)+200), n)},
				{"standardized", standardized(n, uint64(n)+300)},
				{"special", special(pixelImages(newRand(uint64(n)+400), n))},
			} {
				for _, mode := range []Mode{Eval, Train} {
					name := fmt.Sprintf("n=%d/scale=%g/%s/%v", n, scale, in.name, mode)
					direct, prod := New(n), New(n)
					prod.direct = false
					got := slices.Clone(direct.Forward(theta, in.x, mode, newRand(7)))
					want := slices.Clone(prod.Forward(theta, in.x, mode, newRand(7)))
					sameBits(t, name+": logits", got, want)
					sameBits(t, name+": pooled conv1", direct.a1[:n*a1Len], prod.a1[:n*a1Len])
					sameBits(t, name+": pooled conv2", direct.a2[:n*a2Len], prod.a2[:n*a2Len])
					if !slices.Equal(direct.arg1[:n*a1Len], prod.arg1[:n*a1Len]) || !slices.Equal(direct.arg2[:n*a2Len], prod.arg2[:n*a2Len]) {
						t.Errorf("%s: the pooling argmaxes differ", name)
					}
					// The last image's convolution outputs, before pooling.
					sameBits(t, name+": conv1 of the last image", direct.c1, prod.c1)
					sameBits(t, name+": conv2 of the last image", direct.c2, prod.c2)
					if mode == Train {
						dl := make([]float64, len(want))
						CrossEntropy(want, testLabels(n), dl)
						gd, gp := make([]float64, NumParams), make([]float64, NumParams)
						direct.Backward(dl, gd)
						prod.Backward(dl, gp)
						sameBits(t, name+": gradient", gd, gp)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d passes: the direct kernels gave the products' bits", checked)
}

// sameBits fails t unless a and b hold the same bits, any NaN matching
// any NaN.
func sameBits(t *testing.T, what string, a, b []float64) {
	t.Helper()
	for i := range a {
		x, y := a[i], b[i]
		if math.Float64bits(x) != math.Float64bits(y) && !(math.IsNaN(x) && math.IsNaN(y)) {
			t.Errorf("%s: element %d is %v (%#x) direct, %v (%#x) with the products", what, i, x, math.Float64bits(x), y, math.Float64bits(y))
			return
		}
	}
}
