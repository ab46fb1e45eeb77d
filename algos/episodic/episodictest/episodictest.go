// Package episodictest provides test helpers for the methods that train on
// episodic.Episodic environments (ARS V1 in algos/ars, algos/exact): a
// constructor that fails the test, a tiny fake environment, a goroutine
// Parallel, a Converger wrapper, and checkers of the behaviour both methods
// share (the factory, the first step, one step against its hand
// composition, the Converger hook, rollout errors, parallel-equals-serial,
// state restoring).
package episodictest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/algos/episodic"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Must is newMethod(cfg, env, src, Options{Parallel: par}), failing t on
// error: newMethod is ars.NewV1 or exact.New.
func Must[C, M any](t testing.TB, newMethod func(C, episodic.Episodic, stream.Source, episodic.Options) (M, error),
	cfg C, env episodic.Episodic, src stream.Source, par episodic.Parallel) M {
	t.Helper()
	m, err := newMethod(cfg, env, src, episodic.Options{Parallel: par})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Fake is a tiny episodic environment with a P×N policy and horizon H: the
// reset s_0 is N normals from rng and s_t = s_0 + t; the return is
// Σ_ij W_ij·(i+2j+1) + Σ_i delta_i·(t+1) plus one more normal. A rollout
// fails when Fail(W) is true.
type Fake struct {
	P, N, H int
	Fail    func(W []float64) bool
}

var _ episodic.Episodic = (*Fake)(nil)

// ObsDim implements episodic.Episodic.
func (f *Fake) ObsDim() int { return f.N }

// ActDim implements episodic.Episodic.
func (f *Fake) ActDim() int { return f.P }

// Horizon implements episodic.Episodic.
func (f *Fake) Horizon() int { return f.H }

// Rollout implements episodic.Episodic; with delta it writes s_t to obs.
func (f *Fake) Rollout(rng *rand.Rand, W []float64, t int, delta, obs []float64) (float64, error) {
	if f.Fail != nil && f.Fail(W) {
		return 0, errors.New("simulation unstable")
	}
	s0 := make([]float64, f.N)
	for j := range s0 {
		s0[j] = rng.NormFloat64()
	}
	var r float64
	for i := 0; i < f.P; i++ {
		for j := 0; j < f.N; j++ {
			r += W[i*f.N+j] * float64(i+2*j+1)
		}
	}
	if delta != nil {
		if t < 0 || t >= f.H {
			panic("perturbed step out of range")
		}
		for _, d := range delta {
			r += d * float64(t+1)
		}
		for j := range obs {
			obs[j] = s0[j] + float64(t)
		}
	}
	return r + rng.NormFloat64(), nil
}

var _ episodic.Parallel = Goroutines

// Goroutines is an episodic.Parallel that runs every index on its own
// goroutine and returns the error of the lowest failing index.
func Goroutines(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Stopper adds an episodic.Converger to an environment: done at the StopAt-th
// call (counted in Calls), reporting the metric "probe", the first Float64
// of the rng it was given.
type Stopper struct {
	episodic.Episodic
	Calls, StopAt int
}

var _ episodic.Converger = (*Stopper)(nil)

// Converged implements episodic.Converger.
func (s *Stopper) Converged(W []float64, rng *rand.Rand, diagnostics bool) (bool, []task.Metric, error) {
	s.Calls++
	return s.Calls == s.StopAt, []task.Metric{{Name: "probe", Value: rng.Float64()}}, nil
}

// CheckConverger runs m, a fresh method with streams src on a *Stopper,
// under algos.Run (a budget of 10⁶ samples, every iteration recorded) and
// checks that the Stopper ends the run after iters iterations and samples
// samples, and that the hook got src.Rand("converged", it) in every
// iteration it: the event's second metric is its probe.
func CheckConverger(t *testing.T, m algos.Method, src stream.Source, iters int, samples int64) {
	t.Helper()
	rec := &algostest.MemRecorder{}
	traj, err := algos.Run(context.Background(), m, algos.Budget{Samples: 1e6}, algos.Schedule{Every: 1}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(traj.Points); n != iters || traj.Points[n-1].Samples != samples {
		t.Fatalf("run stopped after %d points (%+v), want %d iterations, %d samples", n, traj.Points[n-1], iters, samples)
	}
	for _, ev := range rec.Events {
		want := src.Rand("converged", uint64(ev.Iteration)).Float64()
		if len(ev.Metrics) != 2 || ev.Metrics[1] != (task.Metric{Name: "probe", Value: want}) {
			t.Fatalf("iteration %d metrics %v, want probe %v", ev.Iteration, ev.Metrics, want)
		}
	}
}

// CheckRolloutError checks, serially (par nil) and with Goroutines, that
// the first Step of newMethod(par), a fresh method on an environment whose
// episodes fail, returns an error and leaves Params equal to w0.
func CheckRolloutError(t *testing.T, newMethod func(par episodic.Parallel) algos.Method, w0 []float64) {
	t.Helper()
	for _, par := range []episodic.Parallel{nil, Goroutines} {
		m := newMethod(par)
		_, err := m.Step(1)
		if err == nil || !slices.Equal(m.Params(), w0) {
			t.Fatalf("err = %v, W = %v", err, m.Params())
		}
		t.Log(err)
	}
}

// CheckParallelSameBits runs newMethod(nil) (serial rollouts) and
// newMethod(Goroutines) under algos.Run with budget b, recording every
// iteration, and checks that both record iters events, equal bit for bit
// (digests of W and metrics). Run it with -cpu=1,4.
func CheckParallelSameBits(t *testing.T, newMethod func(par episodic.Parallel) algos.Method, b algos.Budget, iters int) {
	t.Helper()
	run := func(par episodic.Parallel) []task.Iter {
		rec := &algostest.MemRecorder{}
		if _, err := algos.Run(context.Background(), newMethod(par), b, algos.Schedule{Every: 1}, rec); err != nil {
			t.Fatal(err)
		}
		return rec.Events
	}
	serial, par := run(nil), run(Goroutines)
	if len(serial) != iters || !algostest.SameEvents(serial, par) {
		t.Fatalf("parallel events differ from serial:\n%v\n%v", serial, par)
	}
}

// CheckStateErrors checks the restoring of a method's state (W and its
// ES-Adam, encoded with magic and version): a, b and other are fresh
// methods, a and b on the same environment, other on one of another
// dimension. After a.Step(1), other refuses a's state (blob.ErrFormat), b
// refuses a blob with the right W length but an ES-Adam over adamDim ≠
// len(W) coordinates (blob.ErrFormat) and every truncation of a's state,
// all without changing its W = 0; then b restores a's state and has a's W.
func CheckStateErrors(t *testing.T, a, b, other algos.Method, magic string, version uint32, adamDim int) {
	t.Helper()
	if _, err := a.Step(1); err != nil {
		t.Fatal(err)
	}
	st, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	if err := other.UnmarshalState(st); !errors.Is(err, blob.ErrFormat) {
		t.Errorf("other dimension: err = %v", err)
	}
	dim := len(b.Params())
	if adamDim == dim {
		t.Fatalf("ES-Adam of dimension %d is not another dimension", adamDim)
	}
	bad := blob.NewEncoder(magic, version)
	bad.Floats(make([]float64, dim))
	state, _ := algos.NewESAdam(adamDim, 0.01).MarshalBinary()
	bad.Blob(state)
	if err := b.UnmarshalState(bad.Data()); !errors.Is(err, blob.ErrFormat) {
		t.Errorf("ES-Adam dimension: err = %v", err)
	}
	for i := 0; i < len(st); i++ {
		if err := b.UnmarshalState(st[:i]); err == nil {
			t.Fatalf("truncated at %d accepted", i)
		}
	}
	if !slices.Equal(b.Params(), make([]float64, dim)) {
		t.Fatal("failed restores changed W")
	}
	if err := b.UnmarshalState(st); err != nil || !slices.Equal(b.Params(), a.Params()) {
		t.Fatalf("restore: %v", err)
	}
}

// CheckFirstStepAlpha checks that the first Step of m, a fresh method
// starting from W = 0, moves every coordinate by ±alpha to a relative 1e-6:
// ES-Adam's first step is α·g/(|g| + 1e-8) coordinate by coordinate.
func CheckFirstStepAlpha(t *testing.T, m algos.Method, alpha float64) {
	t.Helper()
	if _, err := m.Step(1); err != nil {
		t.Fatal(err)
	}
	for j, v := range m.Params() {
		if math.Abs(math.Abs(v)-alpha) > alpha*1e-6 {
			t.Errorf("W[%d] = %v, want ±%v", j, v, alpha)
		}
	}
}

// CheckStep runs m.Step(it) and checks its result against the composition
// a test computed by hand: W equal to w bit for bit, samples samples, not
// done, and the one metric train_return equal to trainReturn.
func CheckStep(t *testing.T, m algos.Method, it int64, w []float64, samples int64, trainReturn float64) {
	t.Helper()
	st, err := m.Step(it)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Params(), w) {
		t.Fatalf("it %d: W = %v, want %v", it, m.Params(), w)
	}
	if st.Samples != samples || st.Done || len(st.Metrics) != 1 || st.Metrics[0] != (task.Metric{Name: "train_return", Value: trainReturn}) {
		t.Fatalf("it %d: stat %+v", it, st)
	}
}

// Factory is what the episodic methods' factories offer (ars.V1Factory
// and exact.Factory instantiated on episodic.Episodic).
type Factory[C any] interface {
	Hyper() []string
	Decode(p *task.Params) C
	New(cfg C, env episodic.Episodic, src stream.Source) (algos.Method, error)
}

// Config is what their configurations offer: the named copies of
// episodic.Config.
type Config interface {
	comparable
	Validate() error
	Header() trajectory.Header
}

// CheckFactory checks an episodic method's factory: its hyperparameters
// are alpha, directions and nu; α = 0.003, N = 10, ν = 0.05 decode to want
// (diagnostics every 10 iterations), which validates and whose header
// names method; the parameters invalid (out of range) are rejected; New
// builds a method with a 2×5 W on a Fake environment.
func CheckFactory[C Config](t *testing.T, f Factory[C], src stream.Source, want C, method string, invalid map[string]any) {
	t.Helper()
	if !slices.Equal(f.Hyper(), []string{"alpha", "directions", "nu"}) {
		t.Fatalf("Hyper = %v", f.Hyper())
	}
	p := task.NewParams("dag.yaml", "train/lqr", map[string]any{"alpha": 0.003, "directions": 10, "nu": 0.05})
	cfg := f.Decode(p)
	if err := p.Err(); err != nil || cfg != want || cfg.Validate() != nil || cfg.Header().Method != method {
		t.Fatalf("Decode = %+v, %v", cfg, err)
	}
	p = task.NewParams("dag.yaml", "train/lqr", invalid)
	f.Decode(p)
	if err := p.Err(); err == nil {
		t.Fatalf("invalid parameters %v accepted", invalid)
	}
	m, err := f.New(cfg, &Fake{P: 2, N: 5, H: 3}, src)
	if err != nil || len(m.Params()) != 10 {
		t.Fatalf("New: %v", err)
	}
}
