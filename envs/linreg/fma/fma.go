package fma

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Kernel shape: panelRows rows of the left factor times stripWidth columns
// of the product per call.
const (
	panelRows  = 4
	stripWidth = 8
)

// Packed is a matrix F (m×k) laid out for the kernels as Fᵀ in strips of
// stripWidth columns: strip s holds F[s·8+q][j] at index (s·k + j)·8 + q,
// for j < k and q < 8, with zeros past the last row of F. It is read-only
// after Pack and safe for concurrent use.
type Packed struct {
	m, k   int
	strips []float64
}

// Pack packs F. F must have at least one row and one column.
func Pack(F *mat.Dense) *Packed {
	m, k := F.Dims()
	if m < 1 || k < 1 {
		panic(fmt.Sprintf("fma: Pack: F is %d×%d", m, k))
	}
	p := &Packed{m: m, k: k, strips: make([]float64, (m+stripWidth-1)/stripWidth*k*stripWidth)}
	for i := 0; i < m; i++ {
		strip := p.strips[i/stripWidth*k*stripWidth:]
		q := i % stripWidth
		for j, v := range F.RawRowView(i) {
			strip[j*stripWidth+q] = v
		}
	}
	return p
}

// MulT sets Z = E·Fᵀ: Z[i][j] is the chain over l < k of E[i][l]·F[j][l].
// E is n×k and Z is n×m; they must not share memory. It panics on
// mismatched dimensions.
func (p *Packed) MulT(E, Z *mat.Dense) {
	n, k := E.Dims()
	zn, zm := Z.Dims()
	if k != p.k || zn != n || zm != p.m {
		panic(fmt.Sprintf("fma: MulT: E is %d×%d and Z is %d×%d, F is %d×%d", n, k, zn, zm, p.m, p.k))
	}
	p.run(kernel, n, E.RawRowView, func(i, j int, v float64) { Z.RawRowView(i)[j] = v }, nil)
}

// GramAdd adds SᵀS to the upper triangle of G: G[i][j] += the chain over
// rounds r < n of S[r][i]·S[r][j], for i ≤ j (one rounding for the sum).
// S is n×b and G is b×b. It panics on mismatched dimensions.
func GramAdd(G *mat.SymDense, S *mat.Dense) {
	n, b := S.Dims()
	if G.SymmetricDim() != b {
		panic(fmt.Sprintf("fma: GramAdd: S is %d×%d and G is %d×%d", n, b, G.SymmetricDim(), G.SymmetricDim()))
	}
	if n == 0 {
		return
	}
	st := mat.DenseCopyOf(S.T()) // b×n: row i is column i of S
	g := G.RawSymmetric()
	Pack(st).run(kernel, b, st.RawRowView, func(i, j int, v float64) { g.Data[i*g.Stride+j] += v },
		func(i, j int) bool { return i <= j })
}

// kernelFunc computes the panelRows×stripWidth block out[r·8+q] = the chain
// over l < k of rows[r][l]·strip[l·8+q].
type kernelFunc func(k int, rows *[panelRows][]float64, strip []float64, out *[panelRows * stripWidth]float64)

// run computes the chains of the product of the n rows given by row (each of
// length p.k) with Fᵀ, and hands each element (i, j) to put, skipping
// panels in which want (if not nil) holds for no element. It loops over
// strips outside (a strip stays in cache) and panels of rows inside; a short
// last panel is padded with a row of zeros, whose results are discarded.
func (p *Packed) run(kern kernelFunc, n int, row func(i int) []float64, put func(i, j int, v float64), want func(i, j int) bool) {
	zero := make([]float64, p.k)
	var rows [panelRows][]float64
	var out [panelRows * stripWidth]float64
	for s := 0; s*stripWidth < p.m; s++ {
		strip := p.strips[s*p.k*stripWidth : (s+1)*p.k*stripWidth]
		j0 := s * stripWidth
		cols := min(stripWidth, p.m-j0)
		for i0 := 0; i0 < n; i0 += panelRows {
			if want != nil && !want(i0, j0+cols-1) {
				continue
			}
			for r := range rows {
				if i0+r < n {
					rows[r] = row(i0 + r)
				} else {
					rows[r] = zero
				}
			}
			kern(p.k, &rows, strip, &out)
			for r := 0; r < panelRows && i0+r < n; r++ {
				for q := 0; q < cols; q++ {
					if want == nil || want(i0+r, j0+q) {
						put(i0+r, j0+q, out[r*stripWidth+q])
					}
				}
			}
		}
	}
}

// kernelGo is the portable kernel: the 32 chains advance together, one l at
// a time, with math.FMA.
func kernelGo(k int, rows *[panelRows][]float64, strip []float64, out *[panelRows * stripWidth]float64) {
	var acc [panelRows * stripWidth]float64
	r0, r1, r2, r3 := rows[0][:k], rows[1][:k], rows[2][:k], rows[3][:k]
	for l := range k {
		f := (*[stripWidth]float64)(strip[l*stripWidth : (l+1)*stripWidth])
		e0, e1, e2, e3 := r0[l], r1[l], r2[l], r3[l]
		for q, v := range f {
			acc[q] = math.FMA(e0, v, acc[q])
			acc[stripWidth+q] = math.FMA(e1, v, acc[stripWidth+q])
			acc[2*stripWidth+q] = math.FMA(e2, v, acc[2*stripWidth+q])
			acc[3*stripWidth+q] = math.FMA(e3, v, acc[3*stripWidth+q])
		}
	}
	*out = acc
}
