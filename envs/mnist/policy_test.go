package mnist_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/envs/mnist/mnisttest"
	"zorepro/pipeline/stream"
)

// TestSampleHand: one-hot rows force the actions; the reward is +1 exactly
// when the action is the label.
func TestSampleHand(t *testing.T) {
	p := make([]float64, 3*lenet.Classes)
	p[0*lenet.Classes+3], p[1*lenet.Classes+5], p[2*lenet.Classes+9] = 1, 1, 1
	actions, rewards := make([]int, 3), make([]float64, 3)
	mean := mnist.Sample(actions, rewards, p, []int{3, 4, 9}, rand.New(rand.NewPCG(1, 2)))
	if !slices.Equal(actions, []int{3, 5, 9}) || !slices.Equal(rewards, []float64{1, -1, 1}) || mean != 1.0/3 {
		t.Errorf("actions %v, rewards %v, mean %v", actions, rewards, mean)
	}
}

// TestSoftmaxPolicyGradient: the estimate equals, bit for bit, a manual
// computation of the documented iteration: batch from "batch"[1], Forward
// in Train mode with "dropout"[1], p = softmax, a_i = SampleAction(p_i,
// "actions"[1]), r_i = ±1, ∂L/∂z_ij = (r_i/B)·(p_ij − 1[j = a_i]) (the
// gradient of (1/B)Σ r_i·(−log p_i[a_i]), written out here rather than
// taken from lenet.ReinforceLoss), Backward.
func TestSoftmaxPolicyGradient(t *testing.T) {
	const B = 6
	in := mnisttest.TwoClasses(1, 40, 10)
	src := stream.New(7151, "test/mnistreinforce/manual", nil)
	theta := lenet.NewParams(src.Rand("init"))
	pol, err := in.NewPolicy(B, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, lenet.NumParams)
	reward, err := pol.Gradient(got, theta, src, 1)
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
	logits := net.Forward(theta, x, lenet.Train, src.Rand("dropout", 1))
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
	want := make([]float64, lenet.NumParams)
	net.Backward(dl, want)
	if !slices.Equal(got, want) || reward != sum/B {
		t.Fatalf("estimate differs from the manual computation (reward %v, want %v)", reward, sum/B)
	}
}

// TestSoftmaxPolicyRefuses: a β, an instance without training images, and
// non-finite logits (a NaN parameter makes every logit NaN) are errors.
func TestSoftmaxPolicyRefuses(t *testing.T) {
	in := mnisttest.TwoClasses(4, 10, 5)
	if _, err := in.NewPolicy(3, 0.5); !errors.Is(err, mnist.ErrPolicy) {
		t.Errorf("β = 0.5: %v", err)
	}
	if _, err := (&mnist.Instance{}).NewPolicy(3, 0); !errors.Is(err, mnist.ErrNoTraining) {
		t.Errorf("empty instance: %v", err)
	}
	theta := lenet.NewParams(rand.New(rand.NewPCG(1, 1)))
	theta[lenet.OffFC2B] = math.NaN()
	pol, _ := in.NewPolicy(3, 0)
	if _, err := pol.Gradient(make([]float64, lenet.NumParams), theta, stream.New(1, "nan", nil), 1); !errors.Is(err, mnist.ErrNonFinite) {
		t.Errorf("NaN parameter: %v", err)
	}
}
