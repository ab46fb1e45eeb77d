//go:build amd64 && !purego

package fma

import "golang.org/x/sys/cpu"

// kernel is the AVX2 kernel when the CPU (and OS) support AVX2 and FMA, the
// portable one otherwise; both give the same bits.
var kernel kernelFunc = kernelGo

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		kernel = kernelAVX2
	}
}

func kernelAVX2(k int, rows *[panelRows][]float64, strip []float64, out *[panelRows * stripWidth]float64) {
	if k == 0 {
		*out = [panelRows * stripWidth]float64{}
		return
	}
	_ = strip[k*stripWidth-1]
	for _, r := range rows {
		_ = r[k-1]
	}
	fmaKernel4x8(k, &rows[0][0], &rows[1][0], &rows[2][0], &rows[3][0], &strip[0], out)
}

// fmaKernel4x8 is kernelGo for four rows of length k and one strip, with
// eight accumulators of four lanes (kernel_amd64.s).
//
//go:noescape
func fmaKernel4x8(k int, a0, a1, a2, a3, strip *float64, out *[panelRows * stripWidth]float64)
