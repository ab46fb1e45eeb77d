package mnistreinforce

import (
	"errors"
	"math"
	"math/rand/v2"
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

func testSource(name string) stream.Source {
	return stream.New(7151, "test/mnistreinforce/"+name, nil)
}

// TestAdamStepHand: two Adam steps (lr 0.01) on θ = [1, −1, 0.5] with
// g₁ = [2, −0.5, 0] and g₂ = [1, 1, 1]. The expected values were computed
// from the formulas of AdamStep at 40 digits (mpmath):
//
//	step 1: m = 0.1·g₁, v = 0.001·g₁², a = 0.01·√0.001/0.1, so
//	        Δθ_j = −0.01·√0.001·g_j/(√0.001·|g_j| + 1e-8) ≈ −0.01·sign(g_j)
//	step 2: m = 0.9·m + 0.1·g₂, v = 0.999·v + 0.001·g₂², a = 0.01·√0.001999/0.19
//
// The third coordinate shows that a zero gradient does not move θ on the
// first step but its moments do on the second. Textbook Adam (ε added to
// √v̂) gives step-1 values that differ by ≈ 1.5e-7·0.01, which the
// tolerance rejects.
func TestAdamStepHand(t *testing.T) {
	theta := []float64{1, -1, 0.5}
	m, v := make([]float64, 3), make([]float64, 3)
	check := func(step int, want []float64) {
		t.Helper()
		for j := range want {
			if math.Abs(theta[j]-want[j]) > 1e-15 {
				t.Errorf("step %d: θ[%d] = %.20g, want %.20g", step, j, theta[j], want[j])
			}
		}
	}
	AdamStep(theta, m, v, []float64{2, -0.5, 0}, 1, 0.01)
	check(1, []float64{0.99000000158113858008, -0.99000000632455132034, 0.5})
	if m[0] != 0.1*2 || v[1] != 0.001*0.5*0.5 {
		t.Errorf("moments after step 1: m = %v, v = %v", m, v)
	}
	AdamStep(theta, m, v, []float64{1, 1, 1}, 2, 0.01)
	check(2, []float64{0.98067820651185302802, -0.99366104055930935735, 0.4925586341174966357})
}

// TestSampleHand: one-hot rows force the actions; the reward is +1 exactly
// when the action is the label.
func TestSampleHand(t *testing.T) {
	p := make([]float64, 3*lenet.Classes)
	p[0*lenet.Classes+3], p[1*lenet.Classes+5], p[2*lenet.Classes+9] = 1, 1, 1
	actions, rewards := make([]int, 3), make([]float64, 3)
	mean := Sample(actions, rewards, p, []int{3, 4, 9}, rand.New(rand.NewPCG(1, 2)))
	if !slices.Equal(actions, []int{3, 5, 9}) || !slices.Equal(rewards, []float64{1, -1, 1}) || mean != 1.0/3 {
		t.Errorf("actions %v, rewards %v, mean %v", actions, rewards, mean)
	}
}

// TestStepMatchesManual: one Step equals, bit for bit, a manual computation
// of the documented iteration: batch from "batch"[1], Forward in Train mode
// with "dropout"[1], p = softmax, a_i = SampleAction(p_i, "actions"[1]),
// r_i = ±1, ∂L/∂z_ij = (r_i/B)·(p_ij − 1[j = a_i]) (the gradient of
// (1/B)Σ r_i·(−log p_i[a_i]), written out here rather than taken from
// lenet.ReinforceLoss), Backward, then the first Adam step
// θ −= (lr·√0.001/0.1)·m/(√v + ε) with m = 0.1·g, v = 0.001·g².
func TestStepMatchesManual(t *testing.T) {
	const B, lr = 6, 1e-3
	in := mnisttest.TwoClasses(1, 40, 10)
	src := testSource("manual")
	theta0 := lenet.NewParams(src.Rand("init"))
	r, err := New(Config{LR: lr, Batch: B}, in, theta0, src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.Step(1)
	if err != nil {
		t.Fatal(err)
	}

	rng := src.Rand("batch", 1)
	idx := make([]int, B)
	for i := range idx {
		idx[i] = rng.IntN(40)
	}
	x, y := make([]float64, B*mnist.Pixels), make([]int, B)
	in.TrainBatch(idx, x, y)
	net := lenet.New(B)
	logits := net.Forward(theta0, x, lenet.Train, src.Rand("dropout", 1))
	p := make([]float64, B*lenet.Classes)
	lenet.Softmax(p, logits)
	arng := src.Rand("actions", 1)
	dl := make([]float64, B*lenet.Classes)
	var sum float64
	for i := range B {
		row := p[i*lenet.Classes : (i+1)*lenet.Classes]
		a := lenet.SampleAction(row, arng)
		ri := -1.0
		if a == y[i] {
			ri = 1
		}
		sum += ri
		for j, pj := range row {
			if j == a {
				pj -= 1
			}
			dl[i*lenet.Classes+j] = (ri / B) * pj
		}
	}
	g := make([]float64, lenet.NumParams)
	net.Backward(dl, g)
	theta := slices.Clone(theta0)
	a := lr * math.Sqrt(1-math.Pow(0.999, 1)) / (1 - math.Pow(0.9, 1))
	for j, gj := range g {
		m, v := 0.1*gj, 0.001*gj*gj
		theta[j] -= a * m / (math.Sqrt(v) + 1e-8)
	}
	if !slices.Equal(r.Params(), theta) {
		var diff int
		for j := range theta {
			if r.Params()[j] != theta[j] {
				diff++
			}
		}
		t.Fatalf("θ differs from the manual computation in %d coordinates", diff)
	}
	if st.Samples != B || len(st.Metrics) != 1 || st.Metrics[0].Name != "train_reward" || st.Metrics[0].Value != sum/B {
		t.Errorf("stat %+v, want %d samples and train_reward %v", st, B, sum/B)
	}
}

// TestLearnsTwoClasses: with the paper's Adam lr 1e-3, REINFORCE learns the
// two classes from ±1 feedback alone within 100 iterations of 32 images.
func TestLearnsTwoClasses(t *testing.T) {
	in := mnisttest.TwoClasses(2, 400, 200)
	src := testSource("learn")
	m, err := Factory{}.New(Config{LR: 1e-3, Batch: 32}, in, src)
	if err != nil {
		t.Fatal(err)
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

// TestResume: interrupted and resumed runs reproduce the uninterrupted run
// bit for bit (θ, m, v and t are restored).
func TestResume(t *testing.T) {
	in := mnisttest.TwoClasses(3, 60, 10)
	src := testSource("resume")
	newM := func() algos.Method {
		m, err := Factory{}.New(Config{LR: 1e-3, Batch: 4}, in, src)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	algostest.CheckResume(t, newM, algos.Budget{Samples: 4 * 10}, algos.Schedule{Every: 3}, []int64{1, 4})
}

// TestNonFinite: a NaN parameter makes every logit NaN; Step reports
// ErrNonFinite and changes nothing.
func TestNonFinite(t *testing.T) {
	in := mnisttest.TwoClasses(4, 10, 5)
	theta := lenet.NewParams(rand.New(rand.NewPCG(1, 1)))
	theta[lenet.OffFC2B] = math.NaN()
	r, err := New(Config{LR: 1e-3, Batch: 3}, in, theta, testSource("nan"))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := r.MarshalState()
	if _, err := r.Step(1); !errors.Is(err, ErrNonFinite) {
		t.Fatalf("Step: %v", err)
	}
	if after, _ := r.MarshalState(); !slices.Equal(before, after) {
		t.Error("state changed")
	}
}

func TestConfigure(t *testing.T) {
	p := task.NewParams("dag.yaml", "train", map[string]any{"lr": 0.001})
	c := Factory{}.Decode(p)
	if err := p.Err(); err != nil || c != (Config{LR: 0.001, Batch: 256}) || c.Validate() != nil {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{"lr": 0.001, "batch": 512})
	if c := (Factory{}).Decode(p); p.Err() != nil || c.Batch != 512 {
		t.Errorf("paper-text batch: %+v, %v", c, p.Err())
	}
	if h := c.Header(); h != (trajectory.Header{Method: "reinforce", Layout: trajectory.Raw}) {
		t.Errorf("Header = %+v", h)
	}
	if h := (Factory{}).Hyper(); !slices.Equal(h, []string{"lr"}) {
		t.Errorf("Hyper() = %v", h)
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{"batch": 0})
	Factory{}.Decode(p)
	if err := p.Err(); err == nil || len(err.(interface{ Unwrap() []error }).Unwrap()) != 2 {
		t.Errorf("want 2 problems (lr missing, batch): %v", err)
	}
	if c := (Config{LR: math.NaN(), Batch: 1}); (c.Validate() == nil) || !errors.Is(c.Validate(), ErrConfig) {
		t.Error("NaN lr accepted")
	}
}

func TestFactoryNew(t *testing.T) {
	in := mnisttest.TwoClasses(5, 5, 5)
	src := testSource("factory")
	m, err := Factory{}.New(Config{LR: 1e-3, Batch: 2}, in, src)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Params(), lenet.NewParams(src.Rand("init"))) {
		t.Error("initial θ is not lenet.NewParams(src.Rand(\"init\"))")
	}
	if _, err := (Factory{}).New(Config{LR: 1e-3, Batch: 2}, (*mnist.Instance)(nil), src); !errors.Is(err, ErrInstance) {
		t.Errorf("nil instance: %v", err)
	}
}

func TestUnmarshalStateErrors(t *testing.T) {
	r, err := New(Config{LR: 1e-3, Batch: 2}, mnisttest.TwoClasses(6, 5, 5), make([]float64, lenet.NumParams), testSource("state"))
	if err != nil {
		t.Fatal(err)
	}
	good, _ := r.MarshalState()
	neg := blob.NewEncoder(stateMagic, stateVersion)
	for range 3 {
		neg.Floats(make([]float64, lenet.NumParams))
	}
	neg.Int64(-1)
	short := blob.NewEncoder(stateMagic, stateVersion)
	short.Floats(make([]float64, lenet.NumParams))
	short.Floats(make([]float64, 3))
	short.Floats(make([]float64, lenet.NumParams))
	short.Int64(1)
	for name, b := range map[string][]byte{"negative t": neg.Data(), "short m": short.Data(), "truncated": good[:20], "trailing": append(slices.Clone(good), 1)} {
		if err := r.UnmarshalState(b); !errors.Is(err, blob.ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
