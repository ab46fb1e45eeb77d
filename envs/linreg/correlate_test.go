package linreg

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"zorepro/pipeline/stream"
)

// correlateNaive is the definition in correlate.go, one element at a time.
func correlateNaive(f, E *mat.Dense) *mat.Dense {
	n, dim := E.Dims()
	Z := mat.NewDense(n, dim, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < dim; j++ {
			var acc float64
			for k := 0; k < dim; k++ {
				acc = math.FMA(E.At(i, k), f.At(j, k), acc)
			}
			Z.Set(i, j, acc)
		}
	}
	return Z
}

func normals(rng *rand.Rand, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := range m.RawMatrix().Data {
		m.RawMatrix().Data[i] = rng.NormFloat64()
	}
	return m
}

func equalBits(t *testing.T, what string, got, want *mat.Dense) {
	t.Helper()
	g, w := got.RawMatrix().Data, want.RawMatrix().Data
	for i := range w {
		if math.Float64bits(g[i]) != math.Float64bits(w[i]) {
			t.Fatalf("%s: element %d is %v, want %v (bits differ)", what, i, g[i], w[i])
		}
	}
}

// The kernel in use (AVX2 on most amd64 machines) and the portable kernel
// both give exactly the fused multiply–add chains of the definition, for
// every shape around the panel and strip sizes, including d = 1 and a
// Factor with negative zeros and subnormals.
func TestCorrelateMatchesDefinitionBitForBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 2, 6, 7, 8, 9, 15, 16, 17, 33, 100} {
		in := Generate(d, rng)
		f := in.Factor.RawMatrix().Data
		f[0], f[len(f)-1] = math.Copysign(0, -1), 5e-320
		in.strips = packFactor(in.Factor)
		for _, n := range []int{1, 3, 4, 5, 8, 13} {
			E := normals(rng, n, in.Dim())
			want := correlateNaive(in.Factor, E)
			got := mat.NewDense(n, in.Dim(), nil)
			in.Correlate(E, got)
			equalBits(t, "kernel in use", got, want)
			port := mat.NewDense(n, in.Dim(), nil)
			correlate(in.strips, in.Dim(), E, port, kernelGo)
			equalBits(t, "portable kernel", port, want)
		}
	}
}

// Correlate is a matrix product: it agrees with gonum's (differently
// rounded) product to a few ulps of the row norms, and an Instance built
// field by field (no packed strips) gives the same bits as a generated one.
func TestCorrelateIsTheProduct(t *testing.T) {
	in := Generate(300, stream.New(5488, "test", nil).Rand("instance"))
	E := normals(rand.New(rand.NewPCG(3, 4)), 37, in.Dim())
	got := mat.NewDense(37, in.Dim(), nil)
	in.Correlate(E, got)
	var want mat.Dense
	want.Mul(E, in.Factor.T())
	scale := mat.Norm(in.Factor, math.Inf(1)) * mat.Norm(E, math.Inf(1))
	for i := 0; i < 37; i++ {
		for j := 0; j < in.Dim(); j++ {
			if diff := math.Abs(got.At(i, j) - want.At(i, j)); diff > 1e-13*scale {
				t.Fatalf("Z[%d][%d] = %v, gonum gives %v (|diff| %g > %g)", i, j, got.At(i, j), want.At(i, j), diff, 1e-13*scale)
			}
		}
	}
	bare := &Instance{D: in.D, WStar: in.WStar, Factor: in.Factor, Lambda: in.Lambda}
	again := mat.NewDense(37, in.Dim(), nil)
	bare.Correlate(E, again)
	equalBits(t, "instance without packed strips", again, got)
}

// BenchmarkCorrelate compares Correlate with gonum's Dgemm on the d = 1000
// shapes of ARS (N = 10, 200) and SGD (batch 256). Compare the ns/op of the
// pairs, measured side by side.
func BenchmarkCorrelate(b *testing.B) {
	in := Generate(1000, stream.New(1, "bench", nil).Rand("instance"))
	for _, n := range []int{10, 200, 256} {
		E := normals(rand.New(rand.NewPCG(5, 6)), n, in.Dim())
		Z := mat.NewDense(n, in.Dim(), nil)
		b.Run("fma/n="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				in.Correlate(E, Z)
			}
		})
		b.Run("gonum/n="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				Z.Mul(E, in.Factor.T())
			}
		})
		b.Run("portable/n="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				correlate(in.strips, in.Dim(), E, Z, kernelGo)
			}
		})
	}
}
