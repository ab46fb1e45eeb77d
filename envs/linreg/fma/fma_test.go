package fma

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func normals(rng *rand.Rand, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := range m.RawMatrix().Data {
		m.RawMatrix().Data[i] = rng.NormFloat64()
	}
	return m
}

// chain is the definition: acc = fma(a[l], b[l], acc) for l in index order,
// from +0.
func chain(k int, a, b func(l int) float64) float64 {
	var acc float64
	for l := 0; l < k; l++ {
		acc = math.FMA(a(l), b(l), acc)
	}
	return acc
}

func equalBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: element %d is %v, want %v (bits differ)", what, i, got[i], want[i])
		}
	}
}

// withKernel runs f with kern as the package kernel.
func withKernel(kern kernelFunc, f func()) {
	defer func(old kernelFunc) { kernel = old }(kernel)
	kernel = kern
	f()
}

type namedKernel struct {
	name string
	kern kernelFunc
}

// kernels are the kernel chosen at start-up and the portable one.
func kernels() []namedKernel {
	return []namedKernel{{"in use", kernel}, {"portable", kernelGo}}
}

// shapes around the panel (4) and strip (8) sizes.
var shapes = []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33}

// The kernel in use (AVX2 on most amd64 machines) and the portable kernel
// both give exactly the chains of the definition, for every shape around the
// panel and strip sizes, with negative zeros and subnormals in F.
func TestMulTMatchesDefinitionBitForBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range shapes {
		for _, k := range shapes {
			F := normals(rng, m, k)
			F.Set(0, 0, math.Copysign(0, -1))
			F.Set(m-1, k-1, 5e-320)
			p := Pack(F)
			for _, n := range []int{1, 3, 4, 5, 13} {
				E := normals(rng, n, k)
				E.Set(n-1, 0, math.Copysign(0, -1))
				want := mat.NewDense(n, m, nil)
				for i := 0; i < n; i++ {
					for j := 0; j < m; j++ {
						want.Set(i, j, chain(k, func(l int) float64 { return E.At(i, l) }, func(l int) float64 { return F.At(j, l) }))
					}
				}
				for _, kn := range kernels() {
					got := mat.NewDense(n, m, nil)
					withKernel(kn.kern, func() { p.MulT(E, got) })
					equalBits(t, "MulT, kernel "+kn.name+", "+strconv.Itoa(n)+"×"+strconv.Itoa(k)+" by "+strconv.Itoa(m), got.RawMatrix().Data, want.RawMatrix().Data)
				}
			}
		}
	}
}

// GramAdd adds exactly the chains of the definition to the upper triangle
// and leaves the strict lower triangle of the storage untouched.
func TestGramAddMatchesDefinitionBitForBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, b := range shapes {
		for _, n := range []int{1, 3, 4, 9, 40} {
			S := normals(rng, n, b)
			G0 := mat.NewSymDense(b, nil)
			for i := 0; i < b; i++ {
				for j := i; j < b; j++ {
					G0.SetSym(i, j, rng.NormFloat64())
				}
			}
			raw := G0.RawSymmetric()
			for i := 1; i < b; i++ {
				raw.Data[i*raw.Stride] = 7 // lower triangle: must stay
			}
			want := make([]float64, len(raw.Data))
			copy(want, raw.Data)
			for i := 0; i < b; i++ {
				for j := i; j < b; j++ {
					want[i*raw.Stride+j] += chain(n, func(l int) float64 { return S.At(l, i) }, func(l int) float64 { return S.At(l, j) })
				}
			}
			for _, kn := range kernels() {
				G := mat.NewSymDense(b, nil)
				copy(G.RawSymmetric().Data, raw.Data)
				withKernel(kn.kern, func() { GramAdd(G, S) })
				equalBits(t, "GramAdd, kernel "+kn.name+", b = "+strconv.Itoa(b)+", n = "+strconv.Itoa(n), G.RawSymmetric().Data, want)
			}
		}
	}
}

// Both are the matrix products: they agree with gonum's (differently
// rounded) Dgemm and Dsyrk to a few ulps of the norms involved.
func TestProductsAgreeWithGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	F, E := normals(rng, 301, 300), normals(rng, 37, 300)
	got := mat.NewDense(37, 301, nil)
	Pack(F).MulT(E, got)
	var want mat.Dense
	want.Mul(E, F.T())
	close := func(what string, a, b mat.Matrix, scale float64) {
		t.Helper()
		if !mat.EqualApprox(a, b, 1e-14*scale) {
			t.Fatalf("%s differs from gonum's by more than %g", what, 1e-14*scale)
		}
	}
	close("MulT", got, &want, mat.Norm(F, math.Inf(1))*mat.Norm(E, math.Inf(1)))
	S := normals(rng, 500, 101)
	G := mat.NewSymDense(101, nil)
	GramAdd(G, S)
	GramAdd(G, S)
	var wantG mat.SymDense
	wantG.SymOuterK(2, S.T())
	close("GramAdd", G, &wantG, 2*mat.Norm(S, 1)*mat.Norm(S, math.Inf(1)))
}

// The kernel in use must not depend on GOMAXPROCS or call order: running
// the same product twice, and from several goroutines at once, gives the
// same bits (the packed matrix is shared read-only).
func TestMulTConcurrentSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	F, E := normals(rng, 64, 50), normals(rng, 21, 50)
	p := Pack(F)
	want := mat.NewDense(21, 64, nil)
	p.MulT(E, want)
	done := make(chan *mat.Dense)
	for range 4 {
		go func() {
			z := mat.NewDense(21, 64, nil)
			p.MulT(E, z)
			done <- z
		}()
	}
	for range 4 {
		equalBits(t, "concurrent MulT", (<-done).RawMatrix().Data, want.RawMatrix().Data)
	}
}

// BenchmarkMulT compares MulT with gonum's Dgemm on linear regression's
// d = 1000 shapes (ARS N = 10 and 200, SGD batch 256); compare the ns/op of
// each pair, measured side by side (-cpu 1: the pipeline runs one task per
// core).
func BenchmarkMulT(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	F := normals(rng, 1001, 1001)
	p := Pack(F)
	for _, n := range []int{10, 200, 256} {
		E := normals(rng, n, 1001)
		Z := mat.NewDense(n, 1001, nil)
		b.Run("fma/n="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				p.MulT(E, Z)
			}
		})
		b.Run("gonum/n="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				Z.Mul(E, F.T())
			}
		})
		b.Run("portable/n="+strconv.Itoa(n), func(b *testing.B) {
			withKernel(kernelGo, func() {
				for b.Loop() {
					p.MulT(E, Z)
				}
			})
		})
	}
}

// BenchmarkGramAdd compares GramAdd with gonum's Dsyrk on the online-regret
// experiment's b = 1001 chunk of 1,000 rounds.
func BenchmarkGramAdd(b *testing.B) {
	S := normals(rand.New(rand.NewPCG(11, 12)), 1000, 1001)
	G := mat.NewSymDense(1001, nil)
	b.Run("fma", func(b *testing.B) {
		for b.Loop() {
			GramAdd(G, S)
		}
	})
	b.Run("gonum", func(b *testing.B) {
		for b.Loop() {
			G.SymRankK(G, 1, S.T())
		}
	})
}
