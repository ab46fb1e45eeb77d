//go:build !openblas

package lenet

// directConv: this build has no direct convolution kernels; Forward's
// convolutions are im2col + gonum's Dgemm.
const directConv = false

func (net *Net) conv1(w1, b1, img []float64) { net.conv1GEMM(w1, b1, img) }

func (net *Net) conv2(w2, b2, a1 []float64) { net.conv2GEMM(w2, b2, a1) }
