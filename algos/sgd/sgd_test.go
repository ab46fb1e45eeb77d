package sgd

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// lsq is a least-squares test problem: batches come from draw (fed the
// stream "batch"[it]) and the loss is the batch ½·MSE of a linear
// prediction, g = (1/B)·Xᵀ(Xw − y).
type lsq struct {
	dim  int
	draw func(rng *rand.Rand, X *mat.Dense, y []float64)
	bad  bool // NewLoss refuses
}

type lsqLoss struct {
	p    lsq
	X    *mat.Dense
	y, r []float64
}

var errRefused = errors.New("no batches")

func (p lsq) Dim() int { return p.dim }
func (p lsq) InitialWeights(rng *rand.Rand) []float64 {
	return []float64{rng.Float64(), rng.Float64()}[:p.dim]
}
func (p lsq) NewLoss(n int) (*lsqLoss, error) {
	if p.bad {
		return nil, errRefused
	}
	return &lsqLoss{p: p, X: mat.NewDense(n, p.dim, nil), y: make([]float64, n), r: make([]float64, n)}, nil
}

func (l *lsqLoss) Gradient(g, w []float64, src stream.Source, it int64) (float64, error) {
	l.p.draw(src.Rand("batch", uint64(it)), l.X, l.y)
	B, _ := l.X.Dims()
	var loss float64
	for i := range l.r {
		l.r[i] = mat.Dot(mat.NewVecDense(len(w), l.X.RawRowView(i)), mat.NewVecDense(len(w), w)) - l.y[i]
		loss += 0.5 * l.r[i] * l.r[i]
	}
	for j := range g {
		g[j] = 0
		for i := range l.r {
			g[j] += l.X.At(i, j) * l.r[i]
		}
		g[j] /= float64(B)
	}
	return loss / float64(B), nil
}

var _ Problem[*lsqLoss] = lsq{}

// fixed returns the same batch every time.
func fixed(X *mat.Dense, y []float64) lsq {
	_, c := X.Dims()
	return lsq{dim: c, draw: func(_ *rand.Rand, dst *mat.Dense, dy []float64) { dst.Copy(X); copy(dy, y) }}
}

// noiseless draws x = [1, N(0, I_d)] and y = x·w* with no noise.
func noiseless(wstar []float64) lsq {
	return lsq{dim: len(wstar), draw: func(rng *rand.Rand, X *mat.Dense, y []float64) {
		n, _ := X.Dims()
		for i := 0; i < n; i++ {
			row := X.RawRowView(i)
			row[0] = 1
			y[i] = wstar[0]
			for j := 1; j < len(row); j++ {
				row[j] = rng.NormFloat64()
				y[i] += row[j] * wstar[j]
			}
		}
	}}
}

func mustNew(t testing.TB, cfg Config, p lsq, w0 []float64) *SGD[*lsqLoss] {
	t.Helper()
	return algostest.Must(t, New[*lsqLoss], cfg, Problem[*lsqLoss](p), w0, stream.New(1, "t", nil))
}

// TestSingleStepHand: X = [[1,2],[1,0]], y = [1,3], w0 = [0,1], LR 0.5, B 2:
// r = Xw − y = [1, −3]; Xᵀr = [−2, 2]; g = [−1, 1]; w = [0.5, 0.5];
// train_loss = (½·1 + ½·9)/2 = 2.5.
func TestSingleStepHand(t *testing.T) {
	s := mustNew(t, Config{LR: 0.5, Batch: 2}, fixed(mat.NewDense(2, 2, []float64{1, 2, 1, 0}), []float64{1, 3}), []float64{0, 1})
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

// TestStepsWithMomentum: two Steps with μ = 0.5 on a fixed batch equal the
// hand composition: g from the problem, buf = g, then buf = 0.5·buf + g,
// θ −= lr·buf; without momentum, θ −= lr·g.
func TestStepsWithMomentum(t *testing.T) {
	p := fixed(mat.NewDense(2, 2, []float64{1, 2, 1, 0}), []float64{1, 3})
	s := mustNew(t, Config{LR: 0.5, Batch: 2, Momentum: 0.5}, p, []float64{0, 1})
	loss, _ := p.NewLoss(2)
	theta, buf, g := []float64{0, 1}, make([]float64, 2), make([]float64, 2)
	for it := int64(1); it <= 2; it++ {
		if _, err := s.Step(it); err != nil {
			t.Fatal(err)
		}
		loss.Gradient(g, theta, stream.New(1, "t", nil), it)
		MomentumStep(theta, buf, g, 0.5, 0.5, it == 1)
		if !slices.Equal(s.Params(), theta) {
			t.Fatalf("iteration %d: θ = %v, want %v", it, s.Params(), theta)
		}
	}
	if s.Steps() != 2 {
		t.Errorf("Steps() = %d", s.Steps())
	}
}

// TestConvergesNoiseless: on noiseless, well-conditioned data SGD converges
// linearly to w* (every batch is fitted exactly by w*).
func TestConvergesNoiseless(t *testing.T) {
	wstar := []float64{0.3, -1, 0.5, 2, 0}
	s, err := New(Config{LR: 0.1, Batch: 16}, noiseless(wstar), make([]float64, 5), stream.New(3, "t", nil))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := algos.Run(context.Background(), s, algos.Budget{Samples: 16 * 500}, algos.Schedule{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := tr.Points[len(tr.Points)-1].Params
	for j := range w {
		if math.Abs(w[j]-wstar[j]) > 1e-8 {
			t.Errorf("w[%d] = %v, want %v", j, w[j], wstar[j])
		}
	}
}

// TestResume: interrupted and resumed runs give identical trajectories,
// with and without a momentum buffer.
func TestResume(t *testing.T) {
	p := noiseless([]float64{0.3, -1, 0.5})
	for _, mom := range []float64{0, 0.5} {
		newM := func() algos.Method {
			s, err := New(Config{LR: 0.05, Batch: 8, Momentum: mom}, p, []float64{1, 1, 1}, stream.New(7151, "test/sgd/resume", nil))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		algostest.CheckResume(t, newM, algos.Budget{Samples: 8 * 100}, algos.Schedule{PerDecade: 5}, []int64{1, 2, 17, 60, 97})
	}
}

func TestConfig(t *testing.T) {
	err := Config{LR: math.NaN(), Batch: 0, Momentum: 1}.Validate()
	if !errors.Is(err, ErrConfig) {
		t.Fatal(err)
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 3 {
		t.Errorf("%d errors reported, want 3", n)
	}
	if err := (Config{LR: 0.1, Batch: 64}).Validate(); err != nil {
		t.Error(err)
	}
	if _, err := New(Config{LR: 0, Batch: 2}, noiseless([]float64{1, 2}), []float64{0, 0}, stream.New(1, "t", nil)); !errors.Is(err, ErrConfig) {
		t.Errorf("lr 0: %v", err)
	}
	if _, err := New(Config{LR: 0.1, Batch: 2}, lsq{dim: 2, bad: true}, []float64{0, 0}, stream.New(1, "t", nil)); !errors.Is(err, errRefused) {
		t.Errorf("a problem without batches: %v", err)
	}
}

func TestDecode(t *testing.T) {
	var f Factory[lsq, *lsqLoss]
	p := task.NewParams("dag.yaml", "train", map[string]any{"lr": 0.01, "batch": 64})
	c := f.Decode(p)
	if err := p.Err(); err != nil || c != (Config{LR: 0.01, Batch: 64}) || c.Validate() != nil {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	if h := c.Header(); h != (trajectory.Header{Method: "sgd", Layout: trajectory.Raw, EvalBatch: 64}) {
		t.Errorf("Header = %+v", h)
	}
	if h := f.Hyper(); !slices.Equal(h, []string{"lr", "batch"}) {
		t.Errorf("Hyper() = %v", h)
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{"momentum": 1, "batch": 0, "beta": 1})
	f.Decode(p)
	var pe *task.Error
	if err := p.Err(); !errors.As(err, &pe) || len(err.(interface{ Unwrap() []error }).Unwrap()) != 4 {
		t.Errorf("want 4 problems (lr missing, momentum, batch, unknown beta): %v", err)
	}
	src := stream.New(1, "t", nil)
	m, err := f.New(Config{LR: 0.1, Batch: 2}, noiseless([]float64{1, 2}), src)
	if err != nil {
		t.Fatal(err)
	}
	if want := noiseless([]float64{1, 2}).InitialWeights(src.Rand("init")); !slices.Equal(m.Params(), want) {
		t.Errorf("initial θ %v, want InitialWeights(src.Rand(\"init\")) = %v", m.Params(), want)
	}
}

func TestUnmarshalStateErrors(t *testing.T) {
	s := mustNew(t, Config{LR: 0.01, Momentum: 0.5, Batch: 2}, noiseless([]float64{1, 2}), []float64{0, 0})
	good, _ := s.MarshalState()
	short := blob.NewEncoder(stateMagic, stateVersion)
	short.Floats([]float64{1, 2})
	short.Floats([]float64{1})
	short.Int64(1)
	neg := blob.NewEncoder(stateMagic, stateVersion)
	neg.Floats([]float64{1, 2})
	neg.Floats([]float64{1, 2})
	neg.Int64(-1)
	for name, b := range map[string][]byte{"short buffer": short.Data(), "negative steps": neg.Data(), "truncated": good[:len(good)-1], "trailing": append(slices.Clone(good), 0)} {
		if err := s.UnmarshalState(b); !errors.Is(err, blob.ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := s.UnmarshalState(good); err != nil {
		t.Error(err)
	}
}
