package mnist_test

import (
	"errors"
	"slices"
	"testing"

	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/envs/mnist/mnisttest"
	"zorepro/pipeline/stream"
)

// TestCrossEntropyGradient: Gradient equals, bit for bit, the composition of
// the documented pieces: indices from "batch"[it] (rng.IntN), raw pixels,
// Forward in Train mode with "dropout"[it], CrossEntropy, Backward.
func TestCrossEntropyGradient(t *testing.T) {
	in := mnisttest.TwoClasses(1, 50, 10)
	src := stream.New(5488, "test/mnist/loss", nil)
	theta := in.InitialWeights(src.Rand("init"))
	if !slices.Equal(theta, lenet.NewParams(src.Rand("init"))) || in.Dim() != lenet.NumParams {
		t.Fatal("InitialWeights is not lenet.NewParams")
	}
	l, err := in.NewLoss(5)
	if err != nil {
		t.Fatal(err)
	}
	g := make([]float64, lenet.NumParams)
	for it := int64(1); it <= 2; it++ {
		loss, err := l.Gradient(g, theta, src, it)
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
		net := lenet.New(5)
		logits := net.Forward(theta, x, lenet.Train, src.Rand("dropout", uint64(it)))
		dl, want := make([]float64, 5*lenet.Classes), make([]float64, lenet.NumParams)
		wantLoss := lenet.CrossEntropy(logits, y, dl)
		net.Backward(dl, want)
		if loss != wantLoss || !slices.Equal(g, want) {
			t.Fatalf("iteration %d: loss %v (want %v), gradient equal: %v", it, loss, wantLoss, slices.Equal(g, want))
		}
	}
	if _, err := (&mnist.Instance{}).NewLoss(2); !errors.Is(err, mnist.ErrNoTraining) {
		t.Errorf("empty instance: %v", err)
	}
}
