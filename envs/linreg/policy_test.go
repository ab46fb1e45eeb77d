package linreg

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"zorepro/pipeline/blob/blobtest"
	"zorepro/pipeline/stream"
)

// newPolicy returns the Gaussian policy of in for batches of n with β.
func newPolicy(t *testing.T, in *Instance, n int, beta float64) *GaussianPolicy {
	t.Helper()
	p, err := in.NewPolicy(n, beta)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGaussianGradientHand: X = [[1,2],[1,−1]], y = [1,0], w = [0,1],
// β = 0.5, n = [1,−2]:
//   - example 0: μ = 2, ŷ = 2.5, r = −½·1.5² = −1.125, r·(ŷ−μ) = −0.5625;
//   - example 1: μ = −1, ŷ = −2, r = −½·2² = −2, r·(ŷ−μ) = −2·(−1) = 2;
//   - Xᵀc = [1.4375, −3.125], ĝ = −½·Xᵀc = [−0.71875, 1.5625];
//   - mean reward (−1.125 − 2)/2 = −1.5625.
//
// Every value is a short binary fraction, so the comparison is exact.
func TestGaussianGradientHand(t *testing.T) {
	b := newPolicy(t, &Instance{D: 1}, 2, 0.5)
	b.X.Copy(mat.NewDense(2, 2, []float64{1, 2, 1, -1}))
	copy(b.Y, []float64{1, 0})
	copy(b.Noise, []float64{1, -2})
	g := make([]float64, 2)
	if r := b.estimate(g, []float64{0, 1}); r != -1.5625 || g[0] != -0.71875 || g[1] != 1.5625 {
		t.Errorf("ĝ = %v, mean reward %v; want [−0.71875 1.5625], −1.5625", g, r)
	}
}

// TestGradientDrawsItsStreams: Gradient equals the estimate on the batch
// of "batch"[it] (Batch) and the noise of "explore"[it], bit for bit.
func TestGradientDrawsItsStreams(t *testing.T) {
	src := stream.New(5488, "test/linreg/policy", nil)
	in := Generate(4, src.Rand("instance"))
	w := in.InitialWeights(src.Rand("w"))
	p := newPolicy(t, in, 8, 0.5)
	g := make([]float64, in.Dim())
	r, err := p.Gradient(g, w, src, 3)
	if err != nil {
		t.Fatal(err)
	}
	q := newPolicy(t, in, 8, 0.5)
	in.Batch(src.Rand("batch", 3), q.X, q.Y)
	rng := src.Rand("explore", 3)
	for i := range q.Noise {
		q.Noise[i] = rng.NormFloat64()
	}
	want := make([]float64, in.Dim())
	if wr := q.estimate(want, w); wr != r || !blobtest.SameBits(g, want) {
		t.Errorf("Gradient differs from the estimate on its streams' batch")
	}
}

// TestNewPolicyNeedsBeta: the Gaussian policy refuses a missing β.
func TestNewPolicyNeedsBeta(t *testing.T) {
	if _, err := (&Instance{D: 1}).NewPolicy(4, 0); !errors.Is(err, ErrPolicy) {
		t.Errorf("β = 0: %v", err)
	}
}

// TestFisher: F = (1/B)XᵀX against plain loops, to 10⁻¹⁵ relative per
// entry (the same products, summed in a possibly different order).
func TestFisher(t *testing.T) {
	p := newPolicy(t, &Instance{D: 1}, 3, 0.5)
	p.X.Copy(mat.NewDense(3, 2, []float64{1, 2, 1, -1, 1, 0.5}))
	F := mat.NewSymDense(2, nil)
	p.Fisher(F)
	want := [2][2]float64{{3.0 / 3, 1.5 / 3}, {1.5 / 3, 5.25 / 3}}
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			if math.Abs(F.At(i, j)-want[i][j]) > 1e-15*math.Abs(want[i][j]) {
				t.Errorf("F[%d][%d] = %.17g, want %.17g", i, j, F.At(i, j), want[i][j])
			}
		}
	}
}

// meanSE returns the per-coordinate mean and standard error (sample std
// with K−1, over √K) of the rows of samples.
func meanSE(samples [][]float64) (mean, se []float64) {
	K, dim := len(samples), len(samples[0])
	mean, se = make([]float64, dim), make([]float64, dim)
	for _, s := range samples {
		for j, v := range s {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(K)
	}
	for _, s := range samples {
		for j, v := range s {
			d := v - mean[j]
			se[j] += d * d
		}
	}
	for j := range se {
		se[j] = math.Sqrt(se[j]/float64(K-1)) / math.Sqrt(float64(K))
	}
	return mean, se
}

// checkMean requires |mean_j − want_j| ≤ 5·SE_j for every coordinate, and,
// to show the test can tell the β² factor apart, |mean_j − want_j/β²| >
// 5·SE_j for at least one coordinate.
func checkMean(t *testing.T, what string, mean, se, want []float64, beta float64) {
	t.Helper()
	distinguishes := false
	for j := range mean {
		t.Logf("%s: coordinate %d: mean %.6g ± %.2g (SE), β²·∇ %.6g (%.2f SE), ∇ %.6g (%.1f SE)", what, j, mean[j], se[j],
			want[j], (mean[j]-want[j])/se[j], want[j]/(beta*beta), (mean[j]-want[j]/(beta*beta))/se[j])
		if d := math.Abs(mean[j] - want[j]); !(d <= 5*se[j]) {
			t.Errorf("%s: coordinate %d: mean ĝ %.6g, want β²·∇ = %.6g (|Δ| = %.2f SE)", what, j, mean[j], want[j], d/se[j])
		}
		if math.Abs(mean[j]-want[j]/(beta*beta)) > 5*se[j] {
			distinguishes = true
		}
	}
	if !distinguishes {
		t.Errorf("%s: too few samples to tell β²·∇ from ∇ (SE %v)", what, se)
	}
}

// The Monte Carlo tests check the mean of ĝ against its expectation.
// With e_i = μ_i − y_i and ŷ_i − μ_i = β·n_i,
//
//	ĝ = −(1/B)·Σ r_i·(ŷ_i − μ_i)·x_i = (1/B)·Σ ½(e_i + β·n_i)²·β·n_i·x_i,
//
// and for n ~ N(0, 1) (E[n] = E[n³] = 0, E[n²] = 1)
//
//	E_n[½(e + βn)²·βn] = ½(e²·β·E[n] + 2eβ²·E[n²] + β³·E[n³]) = β²·e,
//
// so E_n[ĝ | X, y] = β²·(1/B)·Xᵀ(Xw − y). The Gaussian-smoothed batch loss
// (the expected negative reward) is
//
//	L(w) = E_n[(1/B)·Σ ½(μ_i + β·n_i − y_i)²] = (1/B)·Σ ½(e_i² + β²),
//
// whose gradient is (1/B)·Xᵀ(Xw − y): E_n[ĝ] = β²·∇L, the score-function
// gradient without its 1/β² factor. Averaging also over batches of the
// linreg generator (x independent of the shared noise ξ, E[ξ] = 0):
// E[x·(x·w − x·w* − ξ)] = Σ_x·(w − w*), so E[ĝ] = β²·Σ_x·(w − w*) =
// β²·∇(PopulationLoss(w) + ½β²).
//
// Tolerance: 5 standard errors per coordinate (the SE estimated from the
// samples themselves); with fixed streams the test is deterministic, and a
// correct estimator would fail a coordinate with probability 6·10⁻⁷.

// TestGradientUnbiasedGivenBatch: one fixed batch, K = 4000 independent
// noise vectors.
func TestGradientUnbiasedGivenBatch(t *testing.T) {
	src := stream.New(5488, "test/reinforce/mc-batch", nil)
	in := Generate(3, src.Rand("instance"))
	w := in.InitialWeights(src.Rand("w"))
	const B, K, beta = 64, 4000, 0.5
	b := newPolicy(t, in, B, beta)
	in.Batch(src.Rand("batch"), b.X, b.Y)
	// ∇L = (1/B)·Xᵀ(Xw − y), computed with plain loops.
	want := make([]float64, in.Dim())
	for i := 0; i < B; i++ {
		x := b.X.RawRowView(i)
		var e float64
		for j := range x {
			e += x[j] * w[j]
		}
		e -= b.Y[i]
		for j := range x {
			want[j] += beta * beta * e * x[j] / B
		}
	}
	samples := make([][]float64, K)
	for k := range samples {
		rng := src.Rand("noise", uint64(k))
		for i := range b.Noise {
			b.Noise[i] = rng.NormFloat64()
		}
		samples[k] = make([]float64, in.Dim())
		b.estimate(samples[k], w)
	}
	mean, se := meanSE(samples)
	checkMean(t, "fixed batch", mean, se, want, beta)
}

// TestGradientUnbiased: K = 2000 batches of B = 512 drawn through Gradient
// (the method's streams), against β²·Σ_x·(w − w*).
func TestGradientUnbiased(t *testing.T) {
	src := stream.New(7151, "test/reinforce/mc", nil)
	in := Generate(3, src.Rand("instance"))
	w := in.InitialWeights(src.Rand("w"))
	const K, beta = 2000, 0.5
	dim := in.Dim()
	e := make([]float64, dim)
	for j := range e {
		e[j] = w[j] - in.WStar[j]
	}
	want := make([]float64, dim)
	mat.NewVecDense(dim, want).MulVec(in.SigmaX(), mat.NewVecDense(dim, e))
	for j := range want {
		want[j] *= beta * beta
	}
	b := newPolicy(t, in, 512, beta)
	samples := make([][]float64, K)
	for k := range samples {
		samples[k] = make([]float64, dim)
		if _, err := b.Gradient(samples[k], w, src, int64(k+1)); err != nil {
			t.Fatal(err)
		}
	}
	mean, se := meanSE(samples)
	checkMean(t, "linreg batches", mean, se, want, beta)
}
