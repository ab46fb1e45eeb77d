package mnistsgd

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/envs/mnist/mnisttest"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

func testSource(name string) stream.Source { return stream.New(5488, "test/mnistsgd/"+name, nil) }

// TestMomentumStepHand: PyTorch SGD with momentum 0.5 and lr 0.25 on a
// three-vector (dyadic values, so every operation is exact):
//
//	step 1, g = [0.5, −1, 0]:  buf = g = [0.5, −1, 0]
//	                           θ = [1, 2, 3] − 0.25·buf = [0.875, 2.25, 3]
//	step 2, g = [1, 1, −2]:    buf = 0.5·[0.5, −1, 0] + g = [1.25, 0.5, −2]
//	                           θ = θ − 0.25·buf = [0.5625, 2.125, 3.5]
//
// Without momentum step 2 would give [0.625, 2, 3.5]; with a dampened
// buffer ((1−μ)·g) step 1 would give [0.9375, 2.125, 3].
func TestMomentumStepHand(t *testing.T) {
	theta, buf := []float64{1, 2, 3}, []float64{7, 7, 7} // buf is ignored on the first step
	MomentumStep(theta, buf, []float64{0.5, -1, 0}, 0.25, 0.5, true)
	if want := []float64{0.875, 2.25, 3}; !slices.Equal(theta, want) || !slices.Equal(buf, []float64{0.5, -1, 0}) {
		t.Fatalf("step 1: θ = %v, buf = %v; want θ = %v", theta, buf, want)
	}
	MomentumStep(theta, buf, []float64{1, 1, -2}, 0.25, 0.5, false)
	if want := []float64{0.5625, 2.125, 3.5}; !slices.Equal(theta, want) || !slices.Equal(buf, []float64{1.25, 0.5, -2}) {
		t.Fatalf("step 2: θ = %v, buf = %v; want θ = %v", theta, buf, want)
	}
}

// TestStepMatchesManual: two Steps equal, bit for bit, the composition of
// the documented pieces: indices from "batch"[it] (rng.IntN), raw pixels,
// Forward in Train mode with "dropout"[it], CrossEntropy, Backward, then
// buf = g (step 1) or 0.5·buf + g (step 2) and θ −= lr·buf.
func TestStepMatchesManual(t *testing.T) {
	in := mnisttest.TwoClasses(1, 50, 10)
	src := testSource("manual")
	theta0 := lenet.NewParams(src.Rand("init"))
	cfg := Config{LR: 0.01, Momentum: 0.5, Batch: 5}
	s, err := New(cfg, in, theta0, src)
	if err != nil {
		t.Fatal(err)
	}
	theta, buf := slices.Clone(theta0), make([]float64, lenet.NumParams)
	net := lenet.New(5)
	for it := int64(1); it <= 2; it++ {
		st, err := s.Step(it)
		if err != nil {
			t.Fatal(err)
		}
		rng := src.Rand("batch", uint64(it))
		idx := make([]int, 5)
		for i := range idx {
			idx[i] = rng.IntN(50)
		}
		x, y := make([]float64, 5*mnist.Pixels), make([]int, 5)
		in.TrainBatch(idx, x, y)
		logits := net.Forward(theta, x, lenet.Train, src.Rand("dropout", uint64(it)))
		dl, g := make([]float64, 5*lenet.Classes), make([]float64, lenet.NumParams)
		loss := lenet.CrossEntropy(logits, y, dl)
		net.Backward(dl, g)
		for j := range theta {
			if it == 1 {
				buf[j] = g[j]
			} else {
				buf[j] = 0.5*buf[j] + g[j]
			}
			theta[j] -= 0.01 * buf[j]
		}
		if st.Samples != 5 || len(st.Metrics) != 1 || st.Metrics[0].Name != "train_loss" || st.Metrics[0].Value != loss {
			t.Errorf("iteration %d: stat %+v, want 5 samples and train_loss %v", it, st, loss)
		}
		if !slices.Equal(s.Params(), theta) {
			t.Fatalf("iteration %d: θ differs from the manual computation", it)
		}
	}
	if s.Steps() != 2 {
		t.Errorf("Steps() = %d", s.Steps())
	}
}

// TestLearnsTwoClasses: with the paper's lr 0.01 and momentum 0.5, SGD on
// raw pixels separates the two classes within 60 iterations of 16 images.
func TestLearnsTwoClasses(t *testing.T) {
	in := mnisttest.TwoClasses(2, 400, 200)
	src := testSource("learn")
	m, err := Factory{}.New(Config{LR: 0.01, Momentum: 0.5, Batch: 16}, in, src)
	if err != nil {
		t.Fatal(err)
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

// TestResume: interrupted and resumed runs reproduce the uninterrupted run
// bit for bit (θ, momentum buffer and step count are restored; the first
// step's buf = g is not repeated).
func TestResume(t *testing.T) {
	in := mnisttest.TwoClasses(3, 60, 10)
	src := testSource("resume")
	newM := func() algos.Method {
		m, err := Factory{}.New(Config{LR: 0.01, Momentum: 0.5, Batch: 4}, in, src)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	algostest.CheckResume(t, newM, algos.Budget{Samples: 4 * 10}, algos.Schedule{Every: 3}, []int64{1, 4})
}

func TestConfigure(t *testing.T) {
	p := task.NewParams("dag.yaml", "train", map[string]any{"lr": 0.01})
	c := Factory{}.Decode(p)
	if err := p.Err(); err != nil || c != (Config{LR: 0.01, Momentum: 0.5, Batch: 64}) || c.Validate() != nil {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	if h := c.Header(); h != (trajectory.Header{Method: "sgd", Layout: trajectory.Raw}) {
		t.Errorf("Header = %+v", h)
	}
	if h := (Factory{}).Hyper(); !slices.Equal(h, []string{"lr"}) {
		t.Errorf("Hyper() = %v", h)
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{"momentum": 1, "batch": 0})
	Factory{}.Decode(p)
	var pe *task.Error
	if err := p.Err(); !errors.As(err, &pe) || len(err.(interface{ Unwrap() []error }).Unwrap()) != 3 {
		t.Errorf("want 3 problems (lr missing, momentum, batch): %v", err)
	}
	err := Config{LR: math.Inf(1), Momentum: -0.1, Batch: 0}.Validate()
	if !errors.Is(err, ErrConfig) || len(err.(interface{ Unwrap() []error }).Unwrap()) != 3 {
		t.Errorf("Validate: %v", err)
	}
}

func TestFactoryNew(t *testing.T) {
	in := mnisttest.TwoClasses(4, 5, 5)
	src := testSource("factory")
	m, err := Factory{}.New(Config{LR: 0.01, Momentum: 0.5, Batch: 2}, in, src)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Params(), lenet.NewParams(src.Rand("init"))) {
		t.Error("initial θ is not lenet.NewParams(src.Rand(\"init\"))")
	}
	if _, err := (Factory{}).New(Config{LR: 0, Momentum: 0.5, Batch: 2}, in, src); !errors.Is(err, ErrConfig) {
		t.Errorf("lr 0: %v", err)
	}
	if _, err := (Factory{}).New(Config{LR: 0.1, Momentum: 0.5, Batch: 2}, &mnist.Instance{}, src); !errors.Is(err, ErrInstance) {
		t.Errorf("empty instance: %v", err)
	}
}

func TestUnmarshalStateErrors(t *testing.T) {
	in := mnisttest.TwoClasses(5, 5, 5)
	s, err := New(Config{LR: 0.01, Momentum: 0.5, Batch: 2}, in, make([]float64, lenet.NumParams), testSource("state"))
	if err != nil {
		t.Fatal(err)
	}
	good, _ := s.MarshalState()
	short := blob.NewEncoder(stateMagic, stateVersion)
	short.Floats([]float64{1, 2})
	short.Floats([]float64{1, 2})
	short.Int64(1)
	neg := blob.NewEncoder(stateMagic, stateVersion)
	neg.Floats(make([]float64, lenet.NumParams))
	neg.Floats(make([]float64, lenet.NumParams))
	neg.Int64(-1)
	for name, b := range map[string][]byte{"short": short.Data(), "negative steps": neg.Data(), "truncated": good[:len(good)-1], "trailing": append(slices.Clone(good), 0)} {
		if err := s.UnmarshalState(b); !errors.Is(err, blob.ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := s.UnmarshalState(good); err != nil {
		t.Error(err)
	}
}

// realMNIST loads the verified MNIST from the repository's .data/mnist, or
// skips the test when it is absent (make data fetches it).
func realMNIST(t testing.TB) *mnist.Instance {
	dir := filepath.Join("..", "..", ".data", "mnist")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no MNIST data in %s (make data)", dir)
	}
	in, err := mnist.ReadDir(dir, mnist.RecordedDigests())
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestRealMNIST: on the real data, 100 iterations of the paper's SGD
// (6,400 samples) reach well above chance on the first 1,000 test images
// (the original's curve passes 80% near 10⁴ samples).
func TestRealMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	in := realMNIST(t)
	sub := *in
	sub.TestImages, sub.TestLabels = in.TestImages[:1000*mnist.Pixels], in.TestLabels[:1000]
	m, err := Factory{}.New(Config{LR: 0.01, Momentum: 0.5, Batch: 64}, in, stream.New(5488, "test/mnistsgd/real", nil))
	if err != nil {
		t.Fatal(err)
	}
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
