package episodic

import (
	"math/rand/v2"

	"zorepro/algos"
	"zorepro/pipeline/task"
)

// Episodic is a finite-horizon episodic environment driven by a linear
// policy. envs/lqr.Instance and envs/mujoco.Instance satisfy it.
type Episodic interface {
	// ObsDim is n, the observation dimension.
	ObsDim() int
	// ActDim is p, the action dimension.
	ActDim() int
	// Horizon is H, the number of steps of every episode (no early
	// termination).
	Horizon() int
	// Rollout runs one episode of Horizon() steps from a fresh reset drawn
	// from rng (with any other randomness of the episode, e.g. dynamics
	// noise, also drawn from rng) under the policy a_t = W·s_t, where W is
	// p×n row-major (W[i·n+j]) and actions are not clipped, and returns the
	// undiscounted return Σ_t r_t.
	//
	// If delta is non-nil (length p), the action executed at step t
	// (0 ≤ t < H) is W·s_t + delta instead, and s_t (the observation before
	// acting) is copied into obs if obs is non-nil (length n); t is ignored
	// when delta is nil.
	//
	// Rollout must not modify W or delta and must be safe for concurrent
	// calls with distinct rng and obs. It returns an error when the episode
	// cannot be completed (e.g. an unstable simulation); a numerically
	// diverging but completed episode may instead return ±Inf or NaN.
	// Dimension mismatches may panic.
	Rollout(rng *rand.Rand, W []float64, t int, delta, obs []float64) (float64, error)
}

// Perturber is implemented by environments that run episodes perturbed at
// several steps (ExAct's all-steps variant) and report each step's reward
// (its reward-to-go variant). Episode runs an episode as Rollout does,
// except that the action at each listed step (strictly increasing, in
// [0, H)) is W·s_t + delta[j·p:(j+1)·p], s_t is copied to obs[j·n:(j+1)·n]
// when obs is not nil, and, when rewards is not nil (length H), r_t is
// written to rewards[t]. It returns the return Σ_t r_t, summed as Rollout
// sums it: Rollout(rng, W, t, delta, obs) is Episode(rng, W, []int{t},
// delta, obs, nil), bit for bit. The same contract as Rollout otherwise.
type Perturber interface {
	Episode(rng *rand.Rand, W []float64, steps []int, delta, obs, rewards []float64) (float64, error)
}

// Converger is implemented by environments with their own stop rule (the LQR
// stationarity test, spec §5.2). Converged is called after every iteration
// with the updated W and a stream of that iteration; it reports whether the
// run should stop, with metrics recorded in the iteration's event.
type Converger interface {
	// diagnostics asks for extra, costlier metrics that never affect
	// the result (LQR: the exact expected gradient).
	Converged(W []float64, rng *rand.Rand, diagnostics bool) (done bool, metrics []task.Metric, err error)
}

// Parallel calls fn(0), ..., fn(n−1), possibly concurrently, and returns the
// error of the lowest failing index (or any of them). fn writes only to
// index-owned slots. task.Env.Parallel, bound to a context, is one.
type Parallel func(n int, fn func(i int) error) error

// Run calls fn(0), ..., fn(n−1) through p or, when p is nil, in index order
// on the calling goroutine, stopping at the first error.
func (p Parallel) Run(n int, fn func(i int) error) error {
	if p != nil {
		return p(n, fn)
	}
	for i := 0; i < n; i++ {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

// Options are execution options that do not affect results.
type Options struct {
	// Parallel runs the rollouts of an iteration; nil runs them in index
	// order on the calling goroutine.
	Parallel Parallel
}

// Config holds the hyperparameters (spec §4.5, §5.4). There are no
// defaults: every field must be set.
type Config struct {
	// Alpha is the ES-Adam step size α > 0.
	Alpha float64 `json:"alpha"`
	// Directions is N ≥ 1 (ARS V1 runs 2N episodes an iteration, ExAct N).
	Directions int `json:"directions"`
	// Nu is the perturbation scale ν > 0.
	Nu float64 `json:"nu"`
	// DiagnosticsEvery asks the environment's Converger for its
	// diagnostics every so many iterations (0: never). They are logged
	// only; training never reads them.
	DiagnosticsEvery int `json:"diagnostics_every"`
}

// Validate reports every invalid field at once, each as an ErrConfig error.
func (c Config) Validate() error {
	ch := algos.NewChecks(ErrConfig)
	ch.Positive("Alpha", c.Alpha)
	ch.Positive("Nu", c.Nu)
	ch.Count("Directions", c.Directions)
	return ch.Err()
}

// Diagnostics reports whether iteration it asks the Converger for its
// diagnostics: DiagnosticsEvery > 0 and it is a multiple of it.
func (c Config) Diagnostics(it int64) bool {
	return c.DiagnosticsEvery > 0 && it%int64(c.DiagnosticsEvery) == 0
}

// Hyper lists the tunable hyperparameters for algos.Algorithm.Hyper: α × N ×
// ν, the loop order of the original tuning scripts (spec §4.4, §5.4).
func Hyper() []string { return []string{"alpha", "directions", "nu"} }

// Decode reads alpha (> 0), directions (>= 1), nu (> 0) and
// diagnostics_every (>= 0, default 10) for algos.Algorithm.Decode,
// reporting problems through p.
func Decode(p *task.Params) Config {
	return Config{
		Alpha:      p.Float("alpha", task.Required(), task.Above(0)),
		Directions: int(p.Int("directions", task.Required(), task.Min(1), task.Max(algos.MaxPerIteration))),
		Nu:         p.Float("nu", task.Required(), task.Above(0)),
		// The environment's diagnostics (e.g. LQR's exact expected
		// gradient) every so many iterations; 0 turns them off.
		DiagnosticsEvery: int(p.Int("diagnostics_every", task.Default(int64(10)), task.Min(0))),
	}
}
