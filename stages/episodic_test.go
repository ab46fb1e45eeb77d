package stages_test

import (
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/algos/ars"
	"zorepro/algos/episodic"
	"zorepro/algos/episodic/episodictest"
	"zorepro/algos/exact"
	"zorepro/envs/lqr"
	"zorepro/pipeline/stream"
)

// Known answers of the two episodic methods, ARS V1 and ExAct, on the LQR
// (their own tests in algos/ars and algos/exact use a fake episodic
// environment). What both share is checked here, once for each; each
// method's estimator test is in its own file.

func v1Source() stream.Source    { return stream.New(53307867, "test/algos/arsv1", nil) }
func exactSource() stream.Source { return stream.New(97554704, "test/algos/exact", nil) }

// episodicMethod is one episodic method under test: its streams, how many
// rollouts of H steps one iteration takes per direction (2 for ARS V1's
// ± pair, 1 for ExAct), its constructor on the LQR with Options{Parallel:
// par} (failing t on error), and its factory's New.
type episodicMethod struct {
	name    string
	src     func() stream.Source
	perDir  int64
	iters   int // iterations of the parallel-equals-serial check
	new     func(t testing.TB, cfg episodic.Config, env episodic.Episodic, par episodic.Parallel) algos.Method
	factory func(cfg episodic.Config, env *lqr.Instance) (algos.Method, error)
}

var episodicMethods = []episodicMethod{
	episodicMethodOf("arsv1", v1Source, 2, 5, func(c episodic.Config) ars.V1Config { return ars.V1Config(c) },
		ars.NewV1, ars.V1Factory[*lqr.Instance]{}),
	episodicMethodOf("exact", exactSource, 1, 8, func(c episodic.Config) exact.Config { return exact.Config{Config: c, Variant: exact.OneStep} },
		exact.New, exact.Factory[*lqr.Instance]{}),
}

// episodicMethodOf builds an episodicMethod from the method's
// configuration type C (a named copy of episodic.Config, reached by conv),
// its constructor and its factory.
func episodicMethodOf[C any, M algos.Method](name string, src func() stream.Source, perDir int64, iters int,
	conv func(episodic.Config) C, newMethod func(C, episodic.Episodic, stream.Source, episodic.Options) (M, error),
	f interface {
		New(C, *lqr.Instance, stream.Source) (algos.Method, error)
	}) episodicMethod {
	return episodicMethod{
		name: name, src: src, perDir: perDir, iters: iters,
		new: func(t testing.TB, cfg episodic.Config, env episodic.Episodic, par episodic.Parallel) algos.Method {
			t.Helper()
			return episodictest.Must(t, newMethod, conv(cfg), env, src(), par)
		},
		factory: func(cfg episodic.Config, env *lqr.Instance) (algos.Method, error) {
			return f.New(conv(cfg), env, src())
		},
	}
}

// lqrEnv is a small LQR instance, x₀* from src; tol decides whether the stationarity
// stop can fire.
func lqrEnv(t testing.TB, n, h int, c, tol float64, src stream.Source) *lqr.Instance {
	t.Helper()
	in, err := lqr.Generate(n, h, c, tol, src.Rand("x0star"))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestEpisodicFactory: each factory builds its method on the LQR at W = 0
// (n = 100).
func TestEpisodicFactory(t *testing.T) {
	for _, m := range episodicMethods {
		cfg := episodic.Config{Alpha: 0.003, Directions: 10, Nu: 0.05, DiagnosticsEvery: 10}
		got, err := m.factory(cfg, lqrEnv(t, 100, 100, 0.01, 0.05, m.src()))
		if err != nil || len(got.Params()) != 100 {
			t.Fatalf("%s: New: %v", m.name, err)
		}
	}
}

// TestEpisodicParallelSameBits: serial and goroutine-parallel rollouts give
// the same events (digests of W and metrics) bit for bit, over 5 iterations
// for ARS V1 and 8 for ExAct (on the LQR, n = H = 100, N = 10); run with
// -cpu=1,4.
func TestEpisodicParallelSameBits(t *testing.T) {
	for _, m := range episodicMethods {
		t.Run(m.name, func(t *testing.T) {
			env := lqrEnv(t, 100, 100, 0.01, 1e-12, m.src())
			cfg := episodic.Config{Alpha: 3e-3, Directions: 10, Nu: 0.05}
			episodictest.CheckParallelSameBits(t, func(par episodic.Parallel) algos.Method {
				return m.new(t, cfg, env, par)
			}, algos.Budget{Samples: int64(m.iters) * m.perDir * 10 * 100}, m.iters)
		})
	}
}

// TestEpisodicResume: interrupting and resuming from checkpoints reproduces
// the uninterrupted run bit for bit (LQR, n = 10, H = 20, N = 3, 15
// iterations).
func TestEpisodicResume(t *testing.T) {
	for _, m := range episodicMethods {
		t.Run(m.name, func(t *testing.T) {
			env := lqrEnv(t, 10, 20, 0.05, 1e-12, m.src())
			cfg := episodic.Config{Alpha: 0.01, Directions: 3, Nu: 0.05}
			newMethod := func() algos.Method {
				return m.new(t, cfg, env, episodictest.Goroutines)
			}
			_, events := algostest.CheckResume(t, newMethod, algos.Budget{Samples: 15 * m.perDir * 3 * 20}, algos.Schedule{Every: 4}, []int64{1, 6, 12})
			if len(events) != 15 {
				t.Fatalf("%d iterations, want 15", len(events))
			}
		})
	}
}

// BenchmarkEpisodicIterationLQR is one iteration on the paper's LQR
// (n = H = 100, N = 10: 2000 environment steps for ARS V1, 1000 for ExAct,
// plus the stationarity check), serial and with goroutine-parallel
// rollouts.
func BenchmarkEpisodicIterationLQR(b *testing.B) {
	for _, m := range episodicMethods {
		for _, par := range []struct {
			name string
			par  episodic.Parallel
		}{{"serial", nil}, {"parallel", episodictest.Goroutines}} {
			b.Run(m.name+"/"+par.name, func(b *testing.B) {
				env := lqrEnv(b, 100, 100, 0.01, 1e-12, m.src())
				a := m.new(b, episodic.Config{Alpha: 3e-3, Directions: 10, Nu: 0.05}, env, par.par)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := a.Step(int64(i + 1)); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(int64(b.N)*m.perDir*10*100)/b.Elapsed().Seconds(), "steps/s")
			})
		}
	}
}
