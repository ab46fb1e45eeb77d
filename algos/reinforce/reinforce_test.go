package reinforce

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/envs/linreg"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

var _ Problem = (*linreg.Instance)(nil)

// fixed returns the same batch every time.
type fixed struct {
	X *mat.Dense
	y []float64
}

func (f fixed) Dim() int { _, c := f.X.Dims(); return c }
func (f fixed) Batch(_ *rand.Rand, X *mat.Dense, y []float64) {
	X.Copy(f.X)
	copy(y, f.y)
}

// TestGradientHand: X = [[1,2],[1,−1]], y = [1,0], w = [0,1], β = 0.5,
// n = [1,−2]:
//   - example 0: μ = 2, ŷ = 2.5, r = −½·1.5² = −1.125, r·(ŷ−μ) = −0.5625;
//   - example 1: μ = −1, ŷ = −2, r = −½·2² = −2, r·(ŷ−μ) = −2·(−1) = 2;
//   - Xᵀc = [1.4375, −3.125], ĝ = −½·Xᵀc = [−0.71875, 1.5625];
//   - mean reward (−1.125 − 2)/2 = −1.5625.
//
// Every value is a short binary fraction, so the comparison is exact.
func TestGradientHand(t *testing.T) {
	b := NewBatch(2, 2)
	b.X.Copy(mat.NewDense(2, 2, []float64{1, 2, 1, -1}))
	copy(b.Y, []float64{1, 0})
	copy(b.Noise, []float64{1, -2})
	g := make([]float64, 2)
	if r := b.Gradient(g, []float64{0, 1}, 0.5); r != -1.5625 || g[0] != -0.71875 || g[1] != 1.5625 {
		t.Errorf("ĝ = %v, mean reward %v; want [−0.71875 1.5625], −1.5625", g, r)
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
	in := linreg.Generate(3, src.Rand("instance"))
	w := in.InitialWeights(src.Rand("w"))
	const B, K, beta = 64, 4000, 0.5
	b := NewBatch(B, in.Dim())
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
		b.Gradient(samples[k], w, beta)
	}
	mean, se := meanSE(samples)
	checkMean(t, "fixed batch", mean, se, want, beta)
}

// TestGradientUnbiased: K = 2000 batches of B = 512 drawn through
// Batch.Draw (the method's streams), against β²·Σ_x·(w − w*).
func TestGradientUnbiased(t *testing.T) {
	src := stream.New(7151, "test/reinforce/mc", nil)
	in := linreg.Generate(3, src.Rand("instance"))
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
	b := NewBatch(DefaultBatch, dim)
	samples := make([][]float64, K)
	for k := range samples {
		b.Draw(in, src, int64(k+1))
		samples[k] = make([]float64, dim)
		b.Gradient(samples[k], w, beta)
	}
	mean, se := meanSE(samples)
	checkMean(t, "linreg batches", mean, se, want, beta)
}

// TestFirstStepDescends: the first ES-Adam step SUBTRACTS (ĝ is a loss
// gradient): with m = v = 0, mhat = ĝ and vhat = ĝ², so
// w1_j = w0_j − lr·ĝ_j/(|ĝ_j| + 10⁻⁸) ≈ w0_j − lr·sign(ĝ_j). The batch is the
// fixed hand batch of TestGradientHand and the noise is the documented
// stream src.Rand("explore", 1); ĝ is recomputed here with plain loops.
// Tolerance 10⁻¹⁵ absolute: the bias corrections 1 − 0.9 and 1 − 0.999
// cancel to within a few ulps.
func TestFirstStepDescends(t *testing.T) {
	X := mat.NewDense(2, 2, []float64{1, 2, 1, -1})
	y := []float64{1, 0}
	w0 := []float64{0, 1}
	const lr, beta = 0.1, 0.5
	src := stream.New(3, "test/reinforce/step", nil)
	r := New(Config{LR: lr, Batch: 2, Beta: beta}, fixed{X, y}, w0, src)
	st, err := r.Step(1)
	if err != nil {
		t.Fatal(err)
	}
	rng := src.Rand("explore", 1)
	g := make([]float64, 2)
	var reward float64
	for i := 0; i < 2; i++ {
		x := X.RawRowView(i)
		mu := x[0]*w0[0] + x[1]*w0[1]
		n := rng.NormFloat64()
		ri := -0.5 * (mu + beta*n - y[i]) * (mu + beta*n - y[i])
		reward += ri / 2
		for j := range g {
			g[j] -= ri * beta * n * x[j] / 2
		}
	}
	for j, w := range r.Params() {
		want := w0[j] - lr*g[j]/(math.Abs(g[j])+1e-8)
		// |step| = lr·|ĝ|/(|ĝ| + 10⁻⁸) falls short of lr by lr·10⁻⁸/|ĝ_j|.
		if math.Abs(w-want) > 1e-15 || math.Abs(w-w0[j]+lr*math.Copysign(1, g[j])) > 2*lr*1e-8/math.Abs(g[j]) {
			t.Errorf("w1[%d] = %.17g, want %.17g (ĝ = %v)", j, w, want, g)
		}
	}
	if st.Samples != 2 || len(st.Metrics) != 1 || st.Metrics[0].Name != "train_reward" || math.Abs(st.Metrics[0].Value-reward) > 1e-15 {
		t.Errorf("stat = %+v, want 2 samples and train_reward %v", st, reward)
	}
}

// TestLearnsLinreg: at d = 10 with the tuned lr 0.08 (§3.5), 100
// iterations (51,200 samples) cut the population loss by more than 10×.
func TestLearnsLinreg(t *testing.T) {
	src := stream.New(5488, "test/reinforce/learn", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	r := New(Config{LR: 0.08, Batch: DefaultBatch, Beta: DefaultBeta}, in, w0, src)
	for it := int64(1); it <= 100; it++ {
		if _, err := r.Step(it); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := in.PopulationLoss(w0), in.PopulationLoss(r.Params()); !(b < a/10) {
		t.Errorf("population loss %v → %v after 100 iterations", a, b)
	}
}

// TestResume: interrupted and resumed runs give identical trajectories
// (the checkpoint carries w and the ES-Adam moments and step count).
func TestResume(t *testing.T) {
	src := stream.New(7151, "test/reinforce/resume", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	newM := func() algos.Method {
		return New(Config{LR: 0.08, Batch: DefaultBatch, Beta: DefaultBeta}, in, w0, src)
	}
	algostest.CheckResume(t, newM, algos.Budget{Samples: DefaultBatch * 40}, algos.Schedule{PerDecade: 5}, []int64{1, 2, 17, 30})
}

func TestConfig(t *testing.T) {
	err := Config{LR: math.Inf(1), Batch: 0, Beta: 0}.Validate()
	if !errors.Is(err, ErrConfig) || len(err.(interface{ Unwrap() []error }).Unwrap()) != 3 {
		t.Errorf("three invalid fields: %v", err)
	}
	var f Factory[*linreg.Instance]
	p := task.NewParams("dag.yaml", "train", map[string]any{"lr": 0.08})
	cfg := f.Decode(p)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if want := (Config{LR: 0.08, Batch: 512, Beta: 0.5}); cfg != want || cfg.Validate() != nil {
		t.Errorf("Decode = %+v, want %+v", cfg, want)
	}
	if got, want := p.Resolved(), []string{"batch 512", "beta 0.5", "lr 0.08"}; !slices.Equal(got, want) {
		t.Errorf("resolved %q, want %q", got, want)
	}
	if h := cfg.Header(); h != (trajectory.Header{Method: "reinforce", Layout: trajectory.Raw, EvalBatch: 512}) {
		t.Errorf("Header = %+v", h)
	}
	if h := f.Hyper(); !slices.Equal(h, []string{"lr"}) {
		t.Errorf("Hyper = %v", h)
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{"beta": -1})
	f.Decode(p)
	if err := p.Err(); err == nil || len(err.(interface{ Unwrap() []error }).Unwrap()) != 2 {
		t.Errorf("missing lr and beta −1: %v", err)
	}
	src := stream.New(1, "t", nil)
	in := linreg.Generate(3, src.Rand("instance"))
	m, err := f.New(cfg, in, src)
	if err != nil {
		t.Fatal(err)
	}
	if w0 := in.InitialWeights(src.Rand("init")); !slices.Equal(m.Params(), w0) {
		t.Errorf("initial weights %v, want %v from the stream \"init\"", m.Params(), w0)
	}
	if _, err := f.New(Config{}, in, src); !errors.Is(err, ErrConfig) {
		t.Errorf("New with a zero Config: %v", err)
	}
}

// TestStateErrors: a state of the wrong dimension (weights or ES-Adam
// moments) is rejected with ErrFormat and leaves the method unchanged.
func TestStateErrors(t *testing.T) {
	src := stream.New(1, "t", nil)
	in := linreg.Generate(3, src.Rand("instance"))
	cfg := Config{LR: 0.1, Batch: 4, Beta: 0.5}
	r := New(cfg, in, make([]float64, 4), src)
	r.Step(1)
	good, err := r.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(r.Params())
	other := New(cfg, linreg.Generate(4, src.Rand("other")), make([]float64, 5), src)
	bad, _ := other.MarshalState()
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(make([]float64, 4))
	adam, _ := algos.NewESAdam(5, 0.1).MarshalBinary()
	e.Blob(adam)
	for name, state := range map[string][]byte{"other problem": bad, "adam dimension": e.Data(), "truncated": good[:len(good)-1]} {
		if err := r.UnmarshalState(state); !errors.Is(err, blob.ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
		if !slices.Equal(r.Params(), before) {
			t.Errorf("%s: weights changed", name)
		}
	}
	if err := r.UnmarshalState(good); err != nil {
		t.Error(err)
	}
}

// BenchmarkStepD1000 measures REINFORCE iterations at d = 1000 with
// B = 512 (batch generation included).
func BenchmarkStepD1000(b *testing.B) {
	src := stream.New(5488, "bench/reinforce", nil)
	in := linreg.Generate(1000, src.Rand("instance"))
	r := New(Config{LR: 0.01, Batch: DefaultBatch, Beta: DefaultBeta}, in, in.InitialWeights(src.Rand("w0")), src)
	var samples int64
	it := int64(0)
	for b.Loop() {
		it++
		st, err := r.Step(it)
		if err != nil {
			b.Fatal(err)
		}
		samples += st.Samples
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}
