package linreg

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// The sampler's hot loop is Z = E·Factorᵀ for a batch E of standard normals:
// at d = 1000 it is about 2·10⁶ flops per example, nearly all of the cost of
// linear regression. Every output element is one fused multiply–add chain in
// index order,
//
//	acc := 0; for k := 0 .. Dim−1 { acc = fma(E[i][k], Factor[j][k], acc) }; Z[i][j] = acc
//
// The amd64 kernel (AVX2 and FMA) runs 32 such chains side by side, one per
// vector lane; the portable kernel runs the same chains with math.FMA. A fused
// multiply–add is correctly rounded, so both give the same bits on every
// machine, and neither depends on the number of cores.

// Kernel shape: panelRows rows of E times stripWidth columns of Z per call.
const (
	panelRows  = 4
	stripWidth = 8
)

// packFactor lays Factorᵀ out in strips of stripWidth columns of Z: strip s
// holds Factor[s·8+q][k] at index (s·Dim + k)·8 + q, for k = 0..Dim−1 and
// q = 0..7, with zeros past the last row of Factor. The kernels read one
// strip front to back.
func packFactor(f *mat.Dense) []float64 {
	dim, _ := f.Dims()
	strips := (dim + stripWidth - 1) / stripWidth
	p := make([]float64, strips*dim*stripWidth)
	for j := 0; j < dim; j++ {
		row := f.RawRowView(j)
		s, q := j/stripWidth, j%stripWidth
		base := s * dim * stripWidth
		for k, v := range row {
			p[base+k*stripWidth+q] = v
		}
	}
	return p
}

// Correlate sets Z = E·Factorᵀ (row i of Z is Factor·ε_i, a draw from
// N(0, C) when ε_i ~ N(0, I)), with the fused multiply–add chains described
// above. E and Z are n×Dim and must not share memory; it panics otherwise.
func (in *Instance) Correlate(E, Z *mat.Dense) {
	n, c := E.Dims()
	zn, zc := Z.Dims()
	if c != in.Dim() || zn != n || zc != c {
		panic(fmt.Sprintf("linreg: Correlate: E is %d×%d and Z is %d×%d, want n×%d", n, c, zn, zc, in.Dim()))
	}
	strips := in.strips
	if strips == nil { // an Instance built field by field
		strips = packFactor(in.Factor)
	}
	correlate(strips, c, E, Z, kernel)
}

// kernelFunc computes the panelRows×stripWidth block out[r·8+q] =
// chain over k < dim of rows[r][k]·strip[k·8+q].
type kernelFunc func(dim int, rows *[panelRows][]float64, strip []float64, out *[panelRows * stripWidth]float64)

// correlate runs kern over every strip (outer loop, so a strip stays in
// cache) and every panel of rows; a short last panel is padded with a row of
// zeros, whose results are discarded.
func correlate(strips []float64, dim int, E, Z *mat.Dense, kern kernelFunc) {
	n, _ := E.Dims()
	zero := make([]float64, dim)
	var rows [panelRows][]float64
	var out [panelRows * stripWidth]float64
	for s := 0; s*stripWidth < dim; s++ {
		strip := strips[s*dim*stripWidth : (s+1)*dim*stripWidth]
		j0 := s * stripWidth
		cols := min(stripWidth, dim-j0)
		for i := 0; i < n; i += panelRows {
			for r := range rows {
				if i+r < n {
					rows[r] = E.RawRowView(i + r)
				} else {
					rows[r] = zero
				}
			}
			kern(dim, &rows, strip, &out)
			for r := 0; r < panelRows && i+r < n; r++ {
				copy(Z.RawRowView(i + r)[j0:j0+cols], out[r*stripWidth:r*stripWidth+cols])
			}
		}
	}
}

// kernelGo is the portable kernel: the 32 chains advance together, one k at
// a time, with math.FMA.
func kernelGo(dim int, rows *[panelRows][]float64, strip []float64, out *[panelRows * stripWidth]float64) {
	var acc [panelRows * stripWidth]float64
	r0, r1, r2, r3 := rows[0][:dim], rows[1][:dim], rows[2][:dim], rows[3][:dim]
	for k := range dim {
		f := (*[stripWidth]float64)(strip[k*stripWidth : (k+1)*stripWidth])
		e0, e1, e2, e3 := r0[k], r1[k], r2[k], r3[k]
		for q, v := range f {
			acc[q] = math.FMA(e0, v, acc[q])
			acc[stripWidth+q] = math.FMA(e1, v, acc[stripWidth+q])
			acc[2*stripWidth+q] = math.FMA(e2, v, acc[2*stripWidth+q])
			acc[3*stripWidth+q] = math.FMA(e3, v, acc[3*stripWidth+q])
		}
	}
	*out = acc
}
