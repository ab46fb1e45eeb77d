package linreg

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"zorepro/pipeline/blob/blobtest"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/trajectory"
)

func testSource() stream.Source { return stream.New(5488, "test/envs/linreg", nil) }

// TestCovarianceEigenvalues checks §3.1.2: the eigenvalues of
// C = Factor·Factorᵀ are those of C0 = MᵀM sorted descending, the first ⌊d/2⌋
// doubled and the rest halved. M is recomputed from the same stream using the
// documented draw order (w* first, then M row-major).
func TestCovarianceEigenvalues(t *testing.T) {
	const d = 10
	src := testSource()
	in := Generate(d, src.Rand("instance"))

	rng := src.Rand("instance")
	for i := 0; i < d+1; i++ {
		rng.NormFloat64() // w*
	}
	m := mat.NewDense(d+1, d+1, nil)
	for i := 0; i < d+1; i++ {
		for j := 0; j < d+1; j++ {
			m.Set(i, j, rng.NormFloat64())
		}
	}
	var c0 mat.Dense
	c0.Mul(m.T(), m) // general product, independent of the SymOuterK path
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(d+1, c0.RawMatrix().Data), false) {
		t.Fatal("eigendecomposition failed")
	}
	want := eig.Values(nil)
	slices.SortFunc(want, func(a, b float64) int { return cmp.Compare(b, a) })
	for j := range want {
		if j < d/2 {
			want[j] *= 2
		} else {
			want[j] /= 2
		}
	}

	var ce mat.EigenSym
	if !ce.Factorize(in.Covariance(), false) {
		t.Fatal("eigendecomposition of C failed")
	}
	got := ce.Values(nil)
	slices.SortFunc(got, func(a, b float64) int { return cmp.Compare(b, a) })
	tol := 1e-10 * want[0]
	for j := range want {
		if math.Abs(got[j]-want[j]) > tol {
			t.Errorf("eigenvalue %d of C: got %.15g, want %.15g", j, got[j], want[j])
		}
		if math.Abs(in.Lambda[j]-want[j]) > tol {
			t.Errorf("Lambda[%d] = %.15g, want %.15g", j, in.Lambda[j], want[j])
		}
	}
	// Factor's columns are orthogonal with squared norms λ′: FᵀF = diag(λ′).
	var ftf mat.Dense
	ftf.Mul(in.Factor.T(), in.Factor)
	for i := 0; i < d+1; i++ {
		for j := 0; j < d+1; j++ {
			w := 0.0
			if i == j {
				w = in.Lambda[i]
			}
			if math.Abs(ftf.At(i, j)-w) > tol {
				t.Errorf("(FᵀF)[%d][%d] = %g, want %g", i, j, ftf.At(i, j), w)
			}
		}
	}
}

// TestWStarScale checks the draw of w*: the first Dim normals of the stream
// divided by √Dim.
func TestWStarScale(t *testing.T) {
	src := testSource()
	in := Generate(4, src.Rand("instance"))
	rng := src.Rand("instance")
	for i, w := range in.WStar {
		if want := rng.NormFloat64() / math.Sqrt(5); w != want {
			t.Fatalf("w*[%d] = %v, want %v", i, w, want)
		}
	}
}

// TestEmpiricalSecondMoment samples 200,000 rows and compares (1/n)ΣxxᵀΣ with
// Σ_x. For Gaussian rows the standard error of an entry of the empirical
// second moment is √((Σ_ii·Σ_jj + Σ_ij²)/n) (Isserlis' theorem); we allow 5
// standard errors per entry.
func TestEmpiricalSecondMoment(t *testing.T) {
	const d, n = 10, 200000
	src := testSource()
	in := Generate(d, src.Rand("instance"))
	X, _ := in.NewBatch(src.Rand("batch", 0), n)
	var s mat.Dense
	s.Mul(X.T(), X)
	s.Scale(1/float64(n), &s)
	sig := in.SigmaX()
	for i := 0; i < in.Dim(); i++ {
		if X.At(i, 0) != 1 {
			t.Fatalf("row %d: bias = %v", i, X.At(i, 0))
		}
		for j := 0; j < in.Dim(); j++ {
			se := math.Sqrt((sig.At(i, i)*sig.At(j, j) + sig.At(i, j)*sig.At(i, j)) / n)
			if diff := math.Abs(s.At(i, j) - sig.At(i, j)); diff > 5*se {
				t.Errorf("E[x_%d x_%d]: empirical %.6g, Σ_x %.6g, |diff| %.3g > 5·SE %.3g", i, j, s.At(i, j), sig.At(i, j), diff, 5*se)
			}
		}
	}
}

// TestNormalEquationsRecoverWStar solves the normal equations XᵀXw = Xᵀy on a
// large batch. Because y = Xw* + ξ with one ξ per batch and x[0] = 1, the
// least-squares solution is exactly w* + ξ·e₀: non-bias weights match w* to
// roundoff and the bias is off by |ξ| (≤ 5·NoiseStd).
func TestNormalEquationsRecoverWStar(t *testing.T) {
	const d, n = 10, 20000
	src := testSource()
	in := Generate(d, src.Rand("instance"))
	X, y := in.NewBatch(src.Rand("batch", 1), n)
	var w mat.VecDense
	if err := w.SolveVec(X, mat.NewVecDense(n, y)); err != nil { // QR least squares
		t.Fatal(err)
	}
	if diff := math.Abs(w.AtVec(0) - in.WStar[0]); diff > 5*NoiseStd || diff == 0 {
		t.Errorf("bias: |w_ls − w*| = %g, want in (0, %g]", diff, 5*NoiseStd)
	}
	for j := 1; j < in.Dim(); j++ {
		if diff := math.Abs(w.AtVec(j) - in.WStar[j]); diff > 1e-8 {
			t.Errorf("w_ls[%d] − w*[%d] = %g", j, j, diff)
		}
	}
	if got := in.PopulationLoss(in.WStar); got != 0.5*1e-6 {
		t.Errorf("PopulationLoss(w*) = %v, want exactly %v", got, 0.5*1e-6)
	}
}

// TestPopulationLossMatchesMonteCarlo compares PopulationLoss with the mean of
// Loss over many fresh batches, and with the quadratic form through SigmaX.
func TestPopulationLossMatchesMonteCarlo(t *testing.T) {
	const d = 10
	src := testSource()
	in := Generate(d, src.Rand("instance"))
	w := in.InitialWeights(src.Rand("w0"))
	pop := in.PopulationLoss(w)

	e := make([]float64, in.Dim())
	for i := range e {
		e[i] = w[i] - in.WStar[i]
	}
	ev := mat.NewVecDense(in.Dim(), e)
	if q := 0.5*mat.Inner(ev, in.SigmaX(), ev) + 0.5*NoiseVar; math.Abs(q-pop) > 1e-12*pop {
		t.Errorf("PopulationLoss %v, ½eᵀΣ_xe + ½σ² %v", pop, q)
	}

	const batches, size = 2000, 64
	var sum, sum2 float64
	X := mat.NewDense(size, in.Dim(), nil)
	y := make([]float64, size)
	for b := 0; b < batches; b++ {
		in.Batch(src.Rand("batch", uint64(b)), X, y)
		l := Loss(w, X, y)
		sum += l
		sum2 += l * l
	}
	mean := sum / batches
	se := math.Sqrt((sum2/batches - mean*mean) / batches)
	if math.Abs(mean-pop) > 5*se {
		t.Errorf("Monte Carlo loss %v ± %v, PopulationLoss %v", mean, se, pop)
	}
}

// TestLossHandComputed: X = [[1,2,3],[1,−1,0.5]], w = [0.5,1,−1], y = [0,1]:
// predictions −0.5 and −1, residuals −0.5 and −2, ½r² = 0.125 and 2, mean
// 1.0625 (all exact in binary).
func TestLossHandComputed(t *testing.T) {
	X := mat.NewDense(2, 3, []float64{1, 2, 3, 1, -1, 0.5})
	if got := Loss([]float64{0.5, 1, -1}, X, []float64{0, 1}); got != 1.0625 {
		t.Fatalf("Loss = %v, want 1.0625", got)
	}
}

// TestSnapshotLayouts checks both layouts on a hand case and that the
// normalized layout's RawWeights mapping reproduces its predictions.
func TestSnapshotLayouts(t *testing.T) {
	in := &Instance{D: 2, WStar: []float64{0, 0, 0}, Factor: mat.NewDense(3, 3, nil), Lambda: make([]float64, 3)}
	X := mat.NewDense(2, 3, []float64{1, 2, 3, 1, -1, 0.5})
	y := []float64{0, 1}
	// raw: same as Loss.
	got, err := in.EvalSnapshot(trajectory.Raw, []float64{0.5, 1, -1}, X, y)
	if err != nil || got != 1.0625 {
		t.Fatalf("raw: %v, %v; want 1.0625", got, err)
	}
	// normalized: w = [−0.5, 2, −4], μ = [0, 1], s = [2, 4] gives
	// z = [1, 1, 0.5] and [1, −0.5, −0.125], predictions −0.5 and −1 as above.
	snap := []float64{-0.5, 2, -4, 0, 1, 2, 4}
	got, err = in.EvalSnapshot(trajectory.Normalized, snap, X, y)
	if err != nil || got != 1.0625 {
		t.Fatalf("normalized: %v, %v; want 1.0625", got, err)
	}
	raw, err := in.RawWeights(trajectory.Normalized, snap)
	if err != nil {
		t.Fatal(err)
	}
	// w̃ = [−0.5 − 2·0/2 − (−4)·1/4, 2/2, −4/4] = [0.5, 1, −1].
	if !blobtest.SameBits(raw, []float64{0.5, 1, -1}) {
		t.Fatalf("RawWeights = %v, want [0.5 1 -1]", raw)
	}
	if _, err := in.EvalSnapshot("bogus", snap, X, y); !errors.Is(err, ErrLayout) {
		t.Errorf("unknown layout: %v", err)
	}
	if _, err := in.EvalSnapshot(trajectory.Normalized, snap[:6], X, y); !errors.Is(err, ErrSnapshot) {
		t.Errorf("short snapshot: %v", err)
	}
	if _, err := in.PopulationLossSnapshot(trajectory.Raw, snap); !errors.Is(err, ErrSnapshot) {
		t.Errorf("long raw snapshot: %v", err)
	}
}

// TestPopulationLossNormalized: a normalized snapshot and its raw mapping have
// the same population loss, and their batch losses agree to roundoff.
func TestPopulationLossNormalized(t *testing.T) {
	src := testSource()
	in := Generate(6, src.Rand("instance"))
	rng := rand.New(rand.NewPCG(1, 2))
	snap := make([]float64, in.Dim()+2*in.D)
	for i := range snap {
		snap[i] = rng.NormFloat64()
	}
	for j := 0; j < in.D; j++ {
		snap[in.Dim()+in.D+j] = 0.5 + rng.Float64()
	}
	raw, _ := in.RawWeights(trajectory.Normalized, snap)
	p1, _ := in.PopulationLossSnapshot(trajectory.Normalized, snap)
	if p2 := in.PopulationLoss(raw); p1 != p2 {
		t.Errorf("PopulationLossSnapshot %v != PopulationLoss(RawWeights) %v", p1, p2)
	}
	X, y := in.NewBatch(src.Rand("test", 0), 50)
	l1, _ := in.EvalSnapshot(trajectory.Normalized, snap, X, y)
	if l2 := Loss(raw, X, y); math.Abs(l1-l2) > 1e-12*l1 {
		t.Errorf("normalized loss %v, raw-mapped loss %v", l1, l2)
	}
}

// TestBatchDeterminism: the same stream gives the same bits; another index
// gives other numbers; the label is x·w* plus one shared ξ.
func TestBatchDeterminism(t *testing.T) {
	src := testSource()
	in := Generate(10, src.Rand("instance"))
	X1, y1 := in.NewBatch(src.Rand("batch", 3), 17)
	X2, y2 := in.NewBatch(src.Rand("batch", 3), 17)
	if !blobtest.SameBits(X1.RawMatrix().Data, X2.RawMatrix().Data) || !blobtest.SameBits(y1, y2) {
		t.Fatal("same stream, different batch")
	}
	X3, _ := in.NewBatch(src.Rand("batch", 4), 17)
	if blobtest.SameBits(X1.RawMatrix().Data, X3.RawMatrix().Data) {
		t.Fatal("different streams, same batch")
	}
	var xi float64
	for i := range y1 {
		p := mat.Dot(X1.RowView(i), mat.NewVecDense(in.Dim(), in.WStar))
		if i == 0 {
			xi = y1[0] - p
		}
		if math.Abs(y1[i]-p-xi) > 1e-12 {
			t.Fatalf("row %d: noise %v differs from row 0's %v", i, y1[i]-p, xi)
		}
	}
	if xi == 0 || math.Abs(xi) > 5*NoiseStd {
		t.Fatalf("ξ = %v", xi)
	}
	if g1, g2 := Generate(10, src.Rand("instance")), in; !blobtest.SameBits(g1.Factor.RawMatrix().Data, g2.Factor.RawMatrix().Data) {
		t.Fatal("Generate is not deterministic")
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	src := testSource()
	for _, d := range []int{1, 2, 10} {
		in := Generate(d, src.Rand("instance", uint64(d)))
		out, _ := blobtest.RoundTrip(t, in)
		if out.D != in.D || !blobtest.SameBits(out.WStar, in.WStar) || !blobtest.SameBits(out.Lambda, in.Lambda) ||
			!blobtest.SameBits(out.Factor.RawMatrix().Data, in.Factor.RawMatrix().Data) {
			t.Fatalf("d=%d: round trip differs", d)
		}
		X1, y1 := in.NewBatch(src.Rand("batch"), 5)
		X2, y2 := out.NewBatch(src.Rand("batch"), 5)
		if !blobtest.SameBits(X1.RawMatrix().Data, X2.RawMatrix().Data) || !blobtest.SameBits(y1, y2) {
			t.Fatalf("d=%d: decoded instance draws different batches", d)
		}
	}
}

func TestUnmarshalErrors(t *testing.T) {
	in := Generate(3, testSource().Rand("instance"))
	good, _ := in.MarshalBinary()
	mut := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	cases := map[string]struct {
		data []byte
		want error
	}{
		"empty":     {nil, ErrFormat},
		"magic":     {mut(func(b []byte) []byte { b[0] = 'X'; return b }), ErrFormat},
		"version":   {mut(func(b []byte) []byte { b[4] = 9; return b }), ErrVersion},
		"truncated": {good[:len(good)-1], ErrFormat},
		"trailing":  {append(slices.Clone(good), 0), ErrFormat},
		"dim":       {mut(func(b []byte) []byte { b[16] = 7; return b }), ErrFormat},
		"huge d":    {mut(func(b []byte) []byte { b[15] = 0xff; return b }), ErrFormat},
		"nan": {mut(func(b []byte) []byte {
			for i := 0; i < 8; i++ {
				b[headerLen+i] = 0xff
			}
			return b
		}), ErrFormat},
		"negative lambda": {mut(func(b []byte) []byte { b[headerLen+8*4+7] |= 0x80; return b }), ErrFormat},
	}
	for name, c := range cases {
		out := Instance{D: 42}
		err := out.UnmarshalBinary(c.data)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
		if out.D != 42 {
			t.Errorf("%s: receiver modified on error", name)
		}
	}
}

func FuzzUnmarshalBinary(f *testing.F) {
	for _, d := range []int{1, 2} {
		b, _ := Generate(d, testSource().Rand("instance")).MarshalBinary()
		f.Add(b)
	}
	f.Add([]byte("ZLRI"))
	f.Fuzz(blobtest.Canonical[Instance])
}

func TestInitialWeightsScale(t *testing.T) {
	src := testSource()
	in := Generate(100, src.Rand("instance"))
	w := in.InitialWeights(src.Rand("w0"))
	rng := src.Rand("w0")
	for i := range w {
		if want := 5 * rng.NormFloat64() / math.Sqrt(101); w[i] != want {
			t.Fatalf("w0[%d] = %v, want %v", i, w[i], want)
		}
	}
	// ‖w0‖² ≈ 25 (five times the scale of w*, whose ‖w*‖² ≈ 1).
	if n2 := floatsDot(w, w); n2 < 15 || n2 > 35 {
		t.Errorf("‖w0‖² = %v", n2)
	}
}

func floatsDot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestBatchIsFactorTimesEps checks §3.1.3 against its definition: the rows
// of a batch are x = (Factor·ε)/√d with x[0] = 1, Factor·ε being one fused
// multiply–add chain per element in index order (package fma), for a
// generated instance, a decoded one and one built field by field.
func TestBatchIsFactorTimesEps(t *testing.T) {
	in := Generate(37, testSource().Rand("instance"))
	dec, _ := blobtest.RoundTrip(t, in)
	bare := &Instance{D: in.D, WStar: in.WStar, Factor: in.Factor, Lambda: in.Lambda}
	const n = 6
	// The draws of Batch: ε row-major, then ξ.
	rng := testSource().Rand("batch")
	eps := make([]float64, n*in.Dim())
	for i := range eps {
		eps[i] = rng.NormFloat64()
	}
	sqd := math.Sqrt(float64(in.D))
	for name, inst := range map[string]*Instance{"generated": in, "decoded": dec, "bare": bare} {
		X, _ := inst.NewBatch(testSource().Rand("batch"), n)
		for i := 0; i < n; i++ {
			for j := 1; j < in.Dim(); j++ {
				var acc float64
				for k := 0; k < in.Dim(); k++ {
					acc = math.FMA(eps[i*in.Dim()+k], in.Factor.At(j, k), acc)
				}
				if want := acc / sqd; math.Float64bits(X.At(i, j)) != math.Float64bits(want) {
					t.Fatalf("%s instance: x[%d][%d] = %v, want %v", name, i, j, X.At(i, j), want)
				}
			}
			if X.At(i, 0) != 1 {
				t.Fatalf("%s instance: bias x[%d][0] = %v", name, i, X.At(i, 0))
			}
		}
	}
}
