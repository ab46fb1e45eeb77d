package sgd

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/envs/linreg"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
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

// TestSingleStepHand: X = [[1,2],[1,0]], y = [1,3], w0 = [0,1], LR 0.5, B 2:
// r = Xw − y = [1, −3]; Xᵀr = [−2, 2]; g = [−1, 1]; w = [0.5, 0.5];
// train_loss = (½·1 + ½·9)/2 = 2.5.
func TestSingleStepHand(t *testing.T) {
	p := fixed{mat.NewDense(2, 2, []float64{1, 2, 1, 0}), []float64{1, 3}}
	s := New(Config{LR: 0.5, Batch: 2}, p, []float64{0, 1}, stream.New(1, "t", nil))
	st, err := s.Step(1)
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Params(); w[0] != 0.5 || w[1] != 0.5 {
		t.Errorf("w = %v, want [0.5 0.5]", w)
	}
	if st.Samples != 2 || len(st.Metrics) != 1 || st.Metrics[0].Name != "train_loss" || st.Metrics[0].Value != 2.5 {
		t.Errorf("stat = %+v", st)
	}
}

// noiseless draws x = [1, N(0, I_d)] and y = x·w* with no noise.
type noiseless struct{ wstar []float64 }

func (p noiseless) Dim() int { return len(p.wstar) }
func (p noiseless) Batch(rng *rand.Rand, X *mat.Dense, y []float64) {
	n, _ := X.Dims()
	for i := 0; i < n; i++ {
		row := X.RawRowView(i)
		row[0] = 1
		y[i] = p.wstar[0]
		for j := 1; j < len(row); j++ {
			row[j] = rng.NormFloat64()
			y[i] += row[j] * p.wstar[j]
		}
	}
}

// TestConvergesNoiseless: on noiseless, well-conditioned data SGD converges
// linearly to w* (every batch is fitted exactly by w*).
func TestConvergesNoiseless(t *testing.T) {
	p := noiseless{[]float64{0.3, -1, 0.5, 2, 0}}
	s := New(Config{LR: 0.1, Batch: 16}, p, make([]float64, 5), stream.New(3, "t", nil))
	tr, err := algos.Run(context.Background(), s, algos.Budget{Samples: 16 * 500}, algos.Schedule{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := tr.Points[len(tr.Points)-1].Params
	for j := range w {
		if math.Abs(w[j]-p.wstar[j]) > 1e-8 {
			t.Errorf("w[%d] = %v, want %v", j, w[j], p.wstar[j])
		}
	}
}

// TestTrainLossMatchesLinreg: the metric equals linreg.Loss on the same batch
// bit for bit, and the run improves on the population loss.
func TestTrainLossMatchesLinreg(t *testing.T) {
	src := stream.New(5488, "test/sgd", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	s := New(Config{LR: 0.1, Batch: 64}, in, w0, src)
	st, _ := s.Step(1)
	X, y := in.NewBatch(src.Rand("batch", 1), 64)
	if got, want := st.Metrics[0].Value, linreg.Loss(w0, X, y); got != want {
		t.Errorf("train_loss %v, linreg.Loss %v", got, want)
	}
	for it := int64(2); it <= 300; it++ {
		s.Step(it)
	}
	if a, b := in.PopulationLoss(w0), in.PopulationLoss(s.Params()); !(b < a/10) {
		t.Errorf("population loss %v → %v after 300 iterations", a, b)
	}
}

// TestResume: interrupted and resumed runs give identical trajectories.
func TestResume(t *testing.T) {
	src := stream.New(7151, "test/sgd/resume", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	newM := func() algos.Method { return New(Config{LR: 0.1, Batch: 64}, in, w0, src) }
	algostest.CheckResume(t, newM, algos.Budget{Samples: 64 * 100}, algos.Schedule{PerDecade: 5}, []int64{1, 2, 17, 60, 97})
}

func TestConfig(t *testing.T) {
	err := Config{LR: math.NaN(), Batch: 0}.Validate()
	if !errors.Is(err, ErrConfig) {
		t.Fatal(err)
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 2 {
		t.Errorf("%d errors reported, want 2", n)
	}
	if err := (Config{LR: 0.1, Batch: 64}).Validate(); err != nil {
		t.Error(err)
	}
	s := New(Config{LR: 0.1, Batch: 1}, noiseless{[]float64{1, 2}}, []float64{0, 0}, stream.New(1, "t", nil))
	if err := s.UnmarshalState([]byte("ZSGD\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")); !errors.Is(err, blob.ErrFormat) {
		t.Errorf("wrong-length state: %v", err)
	}
}
