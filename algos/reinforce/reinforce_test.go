package reinforce

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// bandit is a fake problem whose policy's estimate is g_j = θ_j − target_j
// plus noise from the stream "explore"[it] (scaled by noise), with mean
// reward −½‖θ − target‖².
type bandit struct {
	target []float64
	noise  float64
	refuse bool // NewPolicy refuses every β
}

type banditPolicy struct{ b bandit }

var errRefused = errors.New("refused")

func (b bandit) Dim() int                                { return len(b.target) }
func (b bandit) InitialWeights(rng *rand.Rand) []float64 { return make([]float64, len(b.target)) }
func (b bandit) NewPolicy(n int, beta float64) (*banditPolicy, error) {
	if b.refuse {
		return nil, errRefused
	}
	return &banditPolicy{b}, nil
}

func (p *banditPolicy) Gradient(g, theta []float64, src stream.Source, it int64) (float64, error) {
	rng := src.Rand("explore", uint64(it))
	var r float64
	for j := range g {
		d := theta[j] - p.b.target[j]
		g[j] = d + p.b.noise*rng.NormFloat64()
		r -= 0.5 * d * d
	}
	return r, nil
}

var _ Problem[*banditPolicy] = bandit{}

func mustNew(t testing.TB, cfg Config, b bandit, w0 []float64) *REINFORCE[*banditPolicy] {
	t.Helper()
	return algostest.Must(t, New[*banditPolicy], cfg, Problem[*banditPolicy](b), w0, stream.New(3, "test/reinforce", nil))
}

// TestESAdamStepSubtracts: the first ES-Adam step SUBTRACTS (ĝ is a loss
// gradient): with m = v = 0, mhat = ĝ and vhat = ĝ², so
// w1_j = w0_j − lr·ĝ_j/(|ĝ_j| + 10⁻⁸) ≈ w0_j − lr·sign(ĝ_j). Tolerance
// 10⁻¹⁵ absolute: the bias corrections 1 − 0.9 and 1 − 0.999 cancel to
// within a few ulps.
func TestESAdamStepSubtracts(t *testing.T) {
	const lr = 0.1
	b := bandit{target: []float64{0.5, -2, 0.25}}
	w0 := []float64{0, 1, 0}
	r := mustNew(t, Config{LR: lr, Batch: 2, Optimizer: ESAdam}, b, w0)
	st, err := r.Step(1)
	if err != nil {
		t.Fatal(err)
	}
	for j, w := range r.Params() {
		g := w0[j] - b.target[j]
		want := w0[j] - lr*g/(math.Abs(g)+1e-8)
		if math.Abs(w-want) > 1e-15 || math.Abs(w-w0[j]+lr*math.Copysign(1, g)) > 2*lr*1e-8/math.Abs(g) {
			t.Errorf("w1[%d] = %.17g, want %.17g (ĝ = %v)", j, w, want, g)
		}
	}
	if st.Samples != 2 || len(st.Metrics) != 1 || st.Metrics[0].Name != "train_reward" || st.Metrics[0].Value != -0.5*(0.25+9+0.0625) {
		t.Errorf("stat = %+v", st)
	}
}

// TestAdamStep: with optimizer adam, two Steps equal two algos.AdamStep
// calls on the policy's estimates, bit for bit.
func TestAdamStep(t *testing.T) {
	b := bandit{target: []float64{0.5, -2, 0.25}, noise: 0.1}
	r := mustNew(t, Config{LR: 1e-3, Batch: 4, Optimizer: Adam}, b, []float64{0, 1, 0})
	p, _ := b.NewPolicy(4, 0)
	theta, m, v, g := []float64{0, 1, 0}, make([]float64, 3), make([]float64, 3), make([]float64, 3)
	src := stream.New(3, "test/reinforce", nil)
	for it := int64(1); it <= 2; it++ {
		if _, err := r.Step(it); err != nil {
			t.Fatal(err)
		}
		p.Gradient(g, theta, src, it)
		algos.AdamStep(theta, m, v, g, it, 1e-3)
		if !slices.Equal(r.Params(), theta) {
			t.Fatalf("iteration %d: θ = %v, want %v", it, r.Params(), theta)
		}
	}
}

// TestResume: interrupted and resumed runs give identical trajectories (the
// checkpoint carries w and the optimizer's moments and step count), with
// either optimizer.
func TestResume(t *testing.T) {
	b := bandit{target: []float64{0.5, -2, 0.25, 1}, noise: 0.3}
	for _, opt := range []string{ESAdam, Adam} {
		newM := func() algos.Method {
			return mustNew(t, Config{LR: 0.05, Batch: 8, Optimizer: opt}, b, []float64{1, 1, 1, 1})
		}
		algostest.CheckResume(t, newM, algos.Budget{Samples: 8 * 40}, algos.Schedule{PerDecade: 5}, []int64{1, 2, 17, 30})
	}
}

func TestConfig(t *testing.T) {
	err := Config{LR: math.Inf(1), Batch: 0, Beta: -1, Optimizer: "sgd"}.Validate()
	if !errors.Is(err, ErrConfig) || len(err.(interface{ Unwrap() []error }).Unwrap()) != 4 {
		t.Errorf("four invalid fields: %v", err)
	}
	var f Factory[bandit, *banditPolicy]
	p := task.NewParams("dag.yaml", "train", map[string]any{"lr": 0.08, "batch": 512, "beta": 0.5, "optimizer": "esadam"})
	cfg := f.Decode(p)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if want := (Config{LR: 0.08, Batch: 512, Beta: 0.5, Optimizer: ESAdam}); cfg != want || cfg.Validate() != nil {
		t.Errorf("Decode = %+v, want %+v", cfg, want)
	}
	if got, want := p.Resolved(), []string{"batch 512", "beta 0.5", "lr 0.08", `optimizer "esadam"`}; !slices.Equal(got, want) {
		t.Errorf("resolved %q, want %q", got, want)
	}
	if h := cfg.Header(); h != (trajectory.Header{Method: "reinforce", Layout: trajectory.Raw, EvalBatch: 512}) {
		t.Errorf("Header = %+v", h)
	}
	if h := f.Hyper(); !slices.Equal(h, []string{"lr"}) {
		t.Errorf("Hyper = %v", h)
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{"lr": 0.001, "batch": 256, "optimizer": "adam"})
	if c := f.Decode(p); p.Err() != nil || c != (Config{LR: 0.001, Batch: 256, Optimizer: Adam}) {
		t.Errorf("without beta: %+v, %v", c, p.Err())
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{"beta": -1, "optimizer": "rmsprop"})
	f.Decode(p)
	if err := p.Err(); err == nil || len(err.(interface{ Unwrap() []error }).Unwrap()) != 4 {
		t.Errorf("missing lr and batch, beta −1, an unknown optimizer: %v", err)
	}
	src := stream.New(1, "t", nil)
	b := bandit{target: []float64{1, 2}}
	m, err := f.New(cfg, b, src)
	if err != nil {
		t.Fatal(err)
	}
	if w0 := b.InitialWeights(src.Rand("init")); !slices.Equal(m.Params(), w0) {
		t.Errorf("initial weights %v, want %v from the stream \"init\"", m.Params(), w0)
	}
	if _, err := f.New(Config{}, b, src); !errors.Is(err, ErrConfig) {
		t.Errorf("New with a zero Config: %v", err)
	}
	if _, err := f.New(cfg, bandit{target: []float64{1}, refuse: true}, src); !errors.Is(err, errRefused) {
		t.Errorf("a problem refusing the policy: %v", err)
	}
}

// TestStateErrors: a state of the wrong dimension (weights or optimizer
// moments) or of the other optimizer is rejected with ErrFormat and leaves
// the method unchanged.
func TestStateErrors(t *testing.T) {
	b := bandit{target: []float64{1, 2, 3, 4}, noise: 0.1}
	cfg := Config{LR: 0.1, Batch: 4, Optimizer: ESAdam}
	r := mustNew(t, cfg, b, make([]float64, 4))
	r.Step(1)
	good, err := r.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(r.Params())
	other := mustNew(t, cfg, bandit{target: make([]float64, 5)}, make([]float64, 5))
	bad, _ := other.MarshalState()
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(make([]float64, 4))
	adam, _ := algos.NewESAdam(5, 0.1).MarshalBinary()
	e.Blob(adam)
	torch := mustNew(t, Config{LR: 0.1, Batch: 4, Optimizer: Adam}, b, make([]float64, 4))
	wrongOpt, _ := torch.MarshalState()
	for name, state := range map[string][]byte{"other problem": bad, "adam dimension": e.Data(), "truncated": good[:len(good)-1], "other optimizer": wrongOpt} {
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
