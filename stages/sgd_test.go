package stages_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/algos/sgd"
	"zorepro/envs/linreg"
	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/envs/mnist/mnisttest"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/trajectory"
)

// Known answers of SGD on the real environments (the algorithm's own tests
// in algos/sgd use fake problems).

func newSGD[L sgd.Loss](t testing.TB, cfg sgd.Config, p sgd.Problem[L], theta0 []float64, src stream.Source) *sgd.SGD[L] {
	t.Helper()
	return algostest.Must(t, sgd.New[L], cfg, p, theta0, src)
}

// TestSGDLinregTrainLoss: the metric equals linreg.Loss on the same batch
// bit for bit, and the run improves on the population loss.
func TestSGDLinregTrainLoss(t *testing.T) {
	src := stream.New(5488, "test/sgd", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	s := newSGD[*linreg.SquaredLoss](t, sgd.Config{LR: 0.1, Batch: 64}, in, w0, src)
	st, _ := s.Step(1)
	X, y := in.NewBatch(src.Rand("batch", 1), 64)
	if got, want := st.Metrics[0].Value, linreg.Loss(w0, X, y); got != want {
		t.Errorf("train_loss %v, linreg.Loss %v", got, want)
	}
	checkCutsLoss(t, in, w0, s, 2, 300)
}

// TestSGDLinregResume: interrupted and resumed runs give identical
// trajectories.
func TestSGDLinregResume(t *testing.T) {
	src := stream.New(7151, "test/sgd/resume", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	newM := func() algos.Method {
		return newSGD[*linreg.SquaredLoss](t, sgd.Config{LR: 0.1, Batch: 64}, in, w0, src)
	}
	algostest.CheckResume(t, newM, algos.Budget{Samples: 64 * 100}, algos.Schedule{PerDecade: 5}, []int64{1, 2, 17, 60, 97})
}

// TestSGDMNISTStepMatchesManual: two Steps equal, bit for bit, the
// environment's cross-entropy gradient of "batch"[it] with the dropout of
// "dropout"[it] (envs/mnist checks it against the network's pieces), then
// buf = g (step 1) or 0.5·buf + g (step 2) and θ −= lr·buf; train_loss is
// the batch loss before the step.
func TestSGDMNISTStepMatchesManual(t *testing.T) {
	in := mnisttest.TwoClasses(1, 50, 10)
	src := stream.New(5488, "test/mnistsgd/manual", nil)
	theta0 := lenet.NewParams(src.Rand("init"))
	s := newSGD[*mnist.CrossEntropyLoss](t, sgd.Config{LR: 0.01, Momentum: 0.5, Batch: 5}, in, theta0, src)
	loss, err := in.NewLoss(5)
	if err != nil {
		t.Fatal(err)
	}
	theta, buf, g := slices.Clone(theta0), make([]float64, lenet.NumParams), make([]float64, lenet.NumParams)
	for it := int64(1); it <= 2; it++ {
		st, err := s.Step(it)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := loss.Gradient(g, theta, src, it)
		for j := range theta {
			if it == 1 {
				buf[j] = g[j]
			} else {
				buf[j] = 0.5*buf[j] + g[j]
			}
			theta[j] -= 0.01 * buf[j]
		}
		if st.Samples != 5 || len(st.Metrics) != 1 || st.Metrics[0].Name != "train_loss" || st.Metrics[0].Value != l {
			t.Errorf("iteration %d: stat %+v, want 5 samples and train_loss %v", it, st, l)
		}
		if !slices.Equal(s.Params(), theta) {
			t.Fatalf("iteration %d: θ differs from the manual computation", it)
		}
	}
	if s.Steps() != 2 {
		t.Errorf("Steps() = %d", s.Steps())
	}
}

// TestSGDMNISTLearnsTwoClasses: with the paper's lr 0.01 and momentum 0.5,
// SGD on raw pixels separates the two classes within 60 iterations of 16
// images.
func TestSGDMNISTLearnsTwoClasses(t *testing.T) {
	in := mnisttest.TwoClasses(2, 400, 200)
	src := stream.New(5488, "test/mnistsgd/learn", nil)
	m, err := sgd.Factory[*mnist.Instance, *mnist.CrossEntropyLoss]{}.New(sgd.Config{LR: 0.01, Momentum: 0.5, Batch: 16}, in, src)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Params(), lenet.NewParams(src.Rand("init"))) {
		t.Error("initial θ is not lenet.NewParams(src.Rand(\"init\"))")
	}
	before, _ := in.Accuracy(trajectory.Raw, m.Snapshot())
	for it := int64(1); it <= 60; it++ {
		if _, err := m.Step(it); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := in.Accuracy(trajectory.Raw, m.Snapshot())
	t.Logf("test accuracy %.3f → %.3f", before, after)
	if !(after >= 0.95 && after > before+0.3) {
		t.Errorf("test accuracy %.3f → %.3f after 60 iterations", before, after)
	}
}

// TestSGDMNISTResume: interrupted and resumed runs reproduce the
// uninterrupted run bit for bit (θ, momentum buffer and step count are
// restored; the first step's buf = g is not repeated).
func TestSGDMNISTResume(t *testing.T) {
	in := mnisttest.TwoClasses(3, 60, 10)
	src := stream.New(5488, "test/mnistsgd/resume", nil)
	newM := func() algos.Method {
		return newSGD[*mnist.CrossEntropyLoss](t, sgd.Config{LR: 0.01, Momentum: 0.5, Batch: 4}, in, lenet.NewParams(src.Rand("init")), src)
	}
	algostest.CheckResume(t, newM, algos.Budget{Samples: 4 * 10}, algos.Schedule{Every: 3}, []int64{1, 4})
}

// realMNIST loads the verified MNIST from the repository's .data/mnist, or
// skips the test when it is absent (make data fetches it).
func realMNIST(t testing.TB) *mnist.Instance {
	dir := filepath.Join("..", ".data", "mnist")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no MNIST data in %s (make data)", dir)
	}
	in, err := mnist.ReadDir(dir, mnist.RecordedDigests())
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestSGDRealMNIST: on the real data, 100 iterations of the paper's SGD
// (6,400 samples) reach well above chance on the first 1,000 test images
// (the original's curve passes 80% near 10⁴ samples).
func TestSGDRealMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	in := realMNIST(t)
	sub := *in
	sub.TestImages, sub.TestLabels = in.TestImages[:1000*mnist.Pixels], in.TestLabels[:1000]
	src := stream.New(5488, "test/mnistsgd/real", nil)
	m := newSGD[*mnist.CrossEntropyLoss](t, sgd.Config{LR: 0.01, Momentum: 0.5, Batch: 64}, in, lenet.NewParams(src.Rand("init")), src)
	for it := int64(1); it <= 100; it++ {
		if _, err := m.Step(it); err != nil {
			t.Fatal(err)
		}
	}
	acc, err := sub.Accuracy(trajectory.Raw, m.Snapshot())
	t.Logf("test accuracy after 100 iterations: %.3f", acc)
	if err != nil || acc < 0.75 {
		t.Errorf("accuracy %.3f (%v)", acc, err)
	}
}

// BenchmarkSGDStepD1000 measures samples per second at d = 1000 with the
// figure's settings (lr 0.01, batch 256); batches go through the
// precomputed covariance factor.
func BenchmarkSGDStepD1000(b *testing.B) {
	src := stream.New(5488, "bench/sgd", nil)
	in := linreg.Generate(1000, src.Rand("instance"))
	s := newSGD[*linreg.SquaredLoss](b, sgd.Config{LR: 0.01, Batch: 256}, in, in.InitialWeights(src.Rand("w0")), src)
	benchSteps(b, s)
}

// BenchmarkSGDMNISTIteration measures one SGD iteration at the paper's
// batch 64 on the full-size LeNet (synthetic images).
func BenchmarkSGDMNISTIteration(b *testing.B) {
	in := mnisttest.TwoClasses(9, 1000, 10)
	src := stream.New(1, "bench", nil)
	benchSteps(b, newSGD[*mnist.CrossEntropyLoss](b, sgd.Config{LR: 0.01, Momentum: 0.5, Batch: 64}, in, lenet.NewParams(src.Rand("init")), src))
}

// benchSteps steps m b.N times and reports samples per second.
func benchSteps(b *testing.B, m algos.Method) {
	var samples int64
	it := int64(0)
	for b.Loop() {
		it++
		st, err := m.Step(it)
		if err != nil {
			b.Fatal(err)
		}
		samples += st.Samples
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}
