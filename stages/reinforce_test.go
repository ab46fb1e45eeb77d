package stages_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/algos/reinforce"
	"zorepro/envs/linreg"
	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/envs/mnist/mnisttest"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/trajectory"
)

// Known answers of REINFORCE on the real environments (the algorithm's own
// tests in algos/reinforce use a fake problem).

func newREINFORCE[P reinforce.Policy](t testing.TB, cfg reinforce.Config, p reinforce.Problem[P], w0 []float64, src stream.Source) *reinforce.REINFORCE[P] {
	t.Helper()
	return algostest.Must(t, reinforce.New[P], cfg, p, w0, src)
}

// checkCutsLoss runs Steps from..to of m, a method on in started at w0,
// and fails t unless they cut the population loss by more than 10×.
func checkCutsLoss(t *testing.T, in *linreg.Instance, w0 []float64, m algos.Method, from, to int64) {
	t.Helper()
	for it := from; it <= to; it++ {
		if _, err := m.Step(it); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := in.PopulationLoss(w0), in.PopulationLoss(m.Params()); !(b < a/10) {
		t.Errorf("population loss %v → %v after %d iterations", a, b, to)
	}
}

// linregREINFORCE is the paper's linear-regression configuration (§3.5).
func linregREINFORCE(lr float64) reinforce.Config {
	return reinforce.Config{LR: lr, Batch: 512, Beta: 0.5, Optimizer: reinforce.ESAdam}
}

// TestREINFORCELinregFirstStep: the first ES-Adam step on linear regression
// SUBTRACTS ĝ's direction: w1_j = w0_j − lr·ĝ_j/(|ĝ_j| + 10⁻⁸), with ĝ
// recomputed here with plain loops from the documented streams ("batch"[1]
// through Batch, "explore"[1]). Tolerance: roundoff of the two sums.
func TestREINFORCELinregFirstStep(t *testing.T) {
	const lr, beta, B = 0.1, 0.5, 4
	src := stream.New(3, "test/reinforce/step", nil)
	in := linreg.Generate(2, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	r := newREINFORCE[*linreg.GaussianPolicy](t, reinforce.Config{LR: lr, Batch: B, Beta: beta, Optimizer: reinforce.ESAdam}, in, w0, src)
	st, err := r.Step(1)
	if err != nil {
		t.Fatal(err)
	}
	X, y := in.NewBatch(src.Rand("batch", 1), B)
	rng := src.Rand("explore", 1)
	g := make([]float64, in.Dim())
	var reward float64
	for i := 0; i < B; i++ {
		x := X.RawRowView(i)
		var mu float64
		for j := range x {
			mu += x[j] * w0[j]
		}
		n := rng.NormFloat64()
		ri := -0.5 * (mu + beta*n - y[i]) * (mu + beta*n - y[i])
		reward += ri / B
		for j := range g {
			g[j] -= ri * beta * n * x[j] / B
		}
	}
	for j, w := range r.Params() {
		want := w0[j] - lr*g[j]/(math.Abs(g[j])+1e-8)
		if math.Abs(w-want) > 1e-12 {
			t.Errorf("w1[%d] = %.17g, want %.17g (ĝ = %v)", j, w, want, g)
		}
	}
	if st.Samples != B || st.Metrics[0].Name != "train_reward" || math.Abs(st.Metrics[0].Value-reward) > 1e-12 {
		t.Errorf("stat = %+v, want %d samples and train_reward %v", st, B, reward)
	}
}

// TestREINFORCELinregLearns: at d = 10 with the tuned lr 0.08 (§3.5), 100
// iterations (51,200 samples) cut the population loss by more than 10×.
func TestREINFORCELinregLearns(t *testing.T) {
	src := stream.New(5488, "test/reinforce/learn", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	checkCutsLoss(t, in, w0, newREINFORCE[*linreg.GaussianPolicy](t, linregREINFORCE(0.08), in, w0, src), 1, 100)
}

// TestREINFORCELinregResume: interrupted and resumed runs give identical
// trajectories (the checkpoint carries w and the ES-Adam moments and step
// count).
func TestREINFORCELinregResume(t *testing.T) {
	src := stream.New(7151, "test/reinforce/resume", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	newM := func() algos.Method {
		return newREINFORCE[*linreg.GaussianPolicy](t, linregREINFORCE(0.08), in, w0, src)
	}
	algostest.CheckResume(t, newM, algos.Budget{Samples: 512 * 40}, algos.Schedule{PerDecade: 5}, []int64{1, 2, 17, 30})
}

// TestREINFORCEMNISTStepMatchesManual: one Step equals, bit for bit, the
// policy's estimate (its own test checks it against a manual computation)
// followed by the first PyTorch Adam step θ −= (lr·√0.001/0.1)·m/(√v + ε)
// with m = 0.1·g, v = 0.001·g².
func TestREINFORCEMNISTStepMatchesManual(t *testing.T) {
	const B, lr = 6, 1e-3
	in := mnisttest.TwoClasses(1, 40, 10)
	src := stream.New(7151, "test/mnistreinforce/manual", nil)
	theta0 := lenet.NewParams(src.Rand("init"))
	r := newREINFORCE[*mnist.SoftmaxPolicy](t, reinforce.Config{LR: lr, Batch: B, Optimizer: reinforce.Adam}, in, theta0, src)
	st, err := r.Step(1)
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := in.NewPolicy(B, 0)
	g := make([]float64, lenet.NumParams)
	reward, _ := pol.Gradient(g, theta0, src, 1)
	theta := slices.Clone(theta0)
	a := lr * math.Sqrt(1-math.Pow(0.999, 1)) / (1 - math.Pow(0.9, 1))
	for j, gj := range g {
		m, v := 0.1*gj, 0.001*gj*gj
		theta[j] -= a * m / (math.Sqrt(v) + 1e-8)
	}
	if !slices.Equal(r.Params(), theta) {
		t.Fatal("θ differs from the manual computation")
	}
	if st.Samples != B || len(st.Metrics) != 1 || st.Metrics[0].Name != "train_reward" || st.Metrics[0].Value != reward {
		t.Errorf("stat %+v, want %d samples and train_reward %v", st, B, reward)
	}
}

// TestREINFORCEMNISTLearnsTwoClasses: with the paper's Adam lr 1e-3,
// REINFORCE learns the two classes from ±1 feedback alone within 100
// iterations of 32 images; the initial θ is lenet.NewParams of "init".
func TestREINFORCEMNISTLearnsTwoClasses(t *testing.T) {
	in := mnisttest.TwoClasses(2, 400, 200)
	src := stream.New(7151, "test/mnistreinforce/learn", nil)
	m, err := reinforce.Factory[*mnist.Instance, *mnist.SoftmaxPolicy]{}.New(reinforce.Config{LR: 1e-3, Batch: 32, Optimizer: reinforce.Adam}, in, src)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Params(), lenet.NewParams(src.Rand("init"))) {
		t.Error("initial θ is not lenet.NewParams(src.Rand(\"init\"))")
	}
	before, _ := in.Accuracy(trajectory.Raw, m.Snapshot())
	var first, last float64
	for it := int64(1); it <= 100; it++ {
		st, err := m.Step(it)
		if err != nil {
			t.Fatal(err)
		}
		if it <= 10 {
			first += st.Metrics[0].Value / 10
		}
		if it > 90 {
			last += st.Metrics[0].Value / 10
		}
	}
	after, _ := in.Accuracy(trajectory.Raw, m.Snapshot())
	t.Logf("test accuracy %.3f → %.3f; mean train reward %.3f → %.3f", before, after, first, last)
	if !(after >= 0.95 && after > before+0.3 && last > first+0.5) {
		t.Errorf("test accuracy %.3f → %.3f, train reward %.3f → %.3f after 100 iterations", before, after, first, last)
	}
}

// TestREINFORCEMNISTResume: interrupted and resumed runs reproduce the
// uninterrupted run bit for bit (θ, m, v and t are restored).
func TestREINFORCEMNISTResume(t *testing.T) {
	in := mnisttest.TwoClasses(3, 60, 10)
	src := stream.New(7151, "test/mnistreinforce/resume", nil)
	newM := func() algos.Method {
		return newREINFORCE[*mnist.SoftmaxPolicy](t, reinforce.Config{LR: 1e-3, Batch: 4, Optimizer: reinforce.Adam}, in, lenet.NewParams(src.Rand("init")), src)
	}
	algostest.CheckResume(t, newM, algos.Budget{Samples: 4 * 10}, algos.Schedule{Every: 3}, []int64{1, 4})
}

// TestREINFORCEMNISTNonFinite: a NaN parameter makes every logit NaN; Step
// reports mnist.ErrNonFinite and changes nothing.
func TestREINFORCEMNISTNonFinite(t *testing.T) {
	in := mnisttest.TwoClasses(4, 10, 5)
	theta := lenet.NewParams(rand.New(rand.NewPCG(1, 1)))
	theta[lenet.OffFC2B] = math.NaN()
	r := newREINFORCE[*mnist.SoftmaxPolicy](t, reinforce.Config{LR: 1e-3, Batch: 3, Optimizer: reinforce.Adam}, in, theta, stream.New(7151, "test/mnistreinforce/nan", nil))
	checkRefusesNonFinite(t, r)
}

// checkRefusesNonFinite: m's first Step fails with mnist.ErrNonFinite and
// leaves m's state as it was.
func checkRefusesNonFinite(t *testing.T, m algos.Method) {
	t.Helper()
	before, _ := m.MarshalState()
	if _, err := m.Step(1); !errors.Is(err, mnist.ErrNonFinite) {
		t.Fatalf("Step: %v", err)
	}
	if after, _ := m.MarshalState(); !slices.Equal(before, after) {
		t.Error("state changed")
	}
}

// TestREINFORCEPolicyScale: each policy refuses the wrong exploration
// scale through New: linear regression's Gaussian needs β, MNIST's softmax
// has none.
func TestREINFORCEPolicyScale(t *testing.T) {
	src := stream.New(1, "t", nil)
	lin := linreg.Generate(2, src.Rand("instance"))
	if _, err := reinforce.New[*linreg.GaussianPolicy](reinforce.Config{LR: 0.1, Batch: 2, Optimizer: reinforce.ESAdam}, lin, make([]float64, 3), src); !errors.Is(err, linreg.ErrPolicy) {
		t.Errorf("linreg without β: %v", err)
	}
	img := mnisttest.TwoClasses(5, 5, 5)
	if _, err := reinforce.New[*mnist.SoftmaxPolicy](reinforce.Config{LR: 1e-3, Batch: 2, Beta: 0.5, Optimizer: reinforce.Adam}, img, make([]float64, lenet.NumParams), src); !errors.Is(err, mnist.ErrPolicy) {
		t.Errorf("MNIST with β: %v", err)
	}
}

// BenchmarkREINFORCEStepD1000 measures REINFORCE iterations at d = 1000
// with B = 512 (batch generation included).
func BenchmarkREINFORCEStepD1000(b *testing.B) {
	src := stream.New(5488, "bench/reinforce", nil)
	in := linreg.Generate(1000, src.Rand("instance"))
	benchSteps(b, newREINFORCE[*linreg.GaussianPolicy](b, linregREINFORCE(0.01), in, in.InitialWeights(src.Rand("w0")), src))
}

// BenchmarkREINFORCEMNISTIteration measures one REINFORCE iteration at the
// code's batch 256 on the full-size LeNet (synthetic images).
func BenchmarkREINFORCEMNISTIteration(b *testing.B) {
	in := mnisttest.TwoClasses(9, 1000, 10)
	src := stream.New(1, "bench", nil)
	benchSteps(b, newREINFORCE[*mnist.SoftmaxPolicy](b, reinforce.Config{LR: 1e-3, Batch: 256, Optimizer: reinforce.Adam}, in, lenet.NewParams(src.Rand("init")), src))
}
