package arsv1

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"zorepro/algos"
	"zorepro/pipeline/stream"
)

// Episodic is a finite-horizon episodic environment driven by a linear
// policy. algos/exact declares the same interface; envs/lqr.Instance
// satisfies both, and so should a MuJoCo environment.
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

// Converger is implemented by environments with their own stop rule (the LQR
// stationarity test, spec §5.2). Converged is called after every iteration
// with the updated W and a stream of that iteration; it reports whether the
// run should stop, with metrics recorded in the iteration's event.
type Converger interface {
	// diagnostics asks for extra, costlier metrics that never affect
	// the result (LQR: the exact expected gradient).
	Converged(W []float64, rng *rand.Rand, diagnostics bool) (done bool, metrics []algos.Metric, err error)
}

// Parallel calls fn(0), ..., fn(n−1), possibly concurrently, and returns the
// error of the lowest failing index (or any of them). fn writes only to
// index-owned slots. task.Env.Parallel, bound to a context, is one.
type Parallel func(n int, fn func(i int) error) error

// Options are execution options that do not affect results.
type Options struct {
	// Parallel runs the 2N rollouts of an iteration; nil runs them in index
	// order on the calling goroutine.
	Parallel Parallel
}

// Config holds the hyperparameters (spec §4.5, §5.4). There are no
// defaults: every field must be set.
type Config struct {
	// Alpha is the ES-Adam step size α > 0.
	Alpha float64
	// Directions is N ≥ 1; an iteration runs 2N episodes.
	Directions int
	// Nu is the perturbation scale ν > 0.
	Nu float64
	// DiagnosticsEvery asks the environment's Converger for its
	// diagnostics every so many iterations (0: never). They are logged
	// only; training never reads them.
	DiagnosticsEvery int
}

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	var errs []error
	pos := func(name string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%w: %s = %v, want finite > 0", ErrConfig, name, v))
		}
	}
	pos("Alpha", c.Alpha)
	pos("Nu", c.Nu)
	if c.Directions < 1 {
		errs = append(errs, fmt.Errorf("%w: Directions = %d, want ≥ 1", ErrConfig, c.Directions))
	}
	return errors.Join(errs...)
}

// ARS is the optimizer state on one environment. It implements algos.Method.
type ARS struct {
	cfg  Config
	env  Episodic
	conv Converger // nil when env has no stop rule
	src  stream.Source
	par  Parallel
	w    []float64
	adam *algos.ESAdam

	// scratch, reused across iterations
	dirs          [][]float64 // ε_k
	pols          [][]float64 // W + νε_k at 2k, W − νε_k at 2k+1
	rPlus, rMinus []float64
	g             []float64
}

var _ algos.Method = (*ARS)(nil)

// New returns ARS at W = 0 (ActDim×ObsDim) with a fresh ES-Adam. It returns
// an ErrConfig error for invalid hyperparameters and panics if the
// environment has a non-positive dimension or horizon.
func New(cfg Config, env Episodic, src stream.Source, opt Options) (*ARS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, n, h := env.ActDim(), env.ObsDim(), env.Horizon()
	if p < 1 || n < 1 || h < 1 {
		panic(fmt.Sprintf("arsv1: environment with p = %d, n = %d, H = %d", p, n, h))
	}
	dim, N := p*n, cfg.Directions
	a := &ARS{
		cfg: cfg, env: env, src: src, par: opt.Parallel,
		w:    make([]float64, dim),
		adam: algos.NewESAdam(dim, cfg.Alpha),
		dirs: make([][]float64, N), pols: make([][]float64, 2*N),
		rPlus: make([]float64, N), rMinus: make([]float64, N),
		g: make([]float64, dim),
	}
	a.conv, _ = env.(Converger)
	for k := range a.dirs {
		a.dirs[k] = make([]float64, dim)
	}
	for i := range a.pols {
		a.pols[i] = make([]float64, dim)
	}
	return a, nil
}

// Step runs iteration it (see the package documentation for the streams
// and the update). It consumes 2·N·H samples and reports "train_return", the
// mean of the 2N returns (summed R⁺_0, R⁻_0, R⁺_1, ... in order), then the
// Converger's metrics, if any. A rollout or Converger error ends the
// iteration with that error (W unchanged if a rollout failed).
func (a *ARS) Step(it int64) (algos.Stat, error) {
	N, nu := a.cfg.Directions, a.cfg.Nu
	for k, d := range a.dirs {
		rng := a.src.Rand("directions", uint64(it), uint64(k))
		for j := range d {
			d[j] = rng.NormFloat64()
		}
		Perturb(a.pols[2*k], a.pols[2*k+1], a.w, d, nu)
	}
	err := a.run(2*N, func(i int) error {
		k, sign := i/2, i%2
		r, err := a.env.Rollout(a.src.Rand("episodes", uint64(it), uint64(k), uint64(sign)), a.pols[i], -1, nil, nil)
		if err != nil {
			return fmt.Errorf("arsv1: direction %d, %s episode: %w", k, [2]string{"+", "−"}[sign], err)
		}
		if sign == 0 {
			a.rPlus[k] = r
		} else {
			a.rMinus[k] = r
		}
		return nil
	})
	if err != nil {
		return algos.Stat{}, err
	}
	var sum float64
	for k := range a.rPlus {
		sum += a.rPlus[k]
		sum += a.rMinus[k]
	}
	sigma := RewardStd(a.rPlus, a.rMinus)
	Gradient(a.g, a.dirs, a.rPlus, a.rMinus, sigma)
	for j, s := range a.adam.Step(a.g) {
		a.w[j] += s
	}
	st := algos.Stat{
		Samples: 2 * int64(N) * int64(a.env.Horizon()),
		Metrics: []algos.Metric{{Name: "train_return", Value: sum / float64(2*N)}},
	}
	if a.conv != nil {
		done, ms, err := a.conv.Converged(a.w, a.src.Rand("converged", uint64(it)), a.cfg.DiagnosticsEvery > 0 && it%int64(a.cfg.DiagnosticsEvery) == 0)
		if err != nil {
			return algos.Stat{}, fmt.Errorf("arsv1: convergence check: %w", err)
		}
		st.Done = done
		st.Metrics = append(st.Metrics, ms...)
	}
	return st, nil
}

func (a *ARS) run(n int, fn func(i int) error) error {
	if a.par != nil {
		return a.par(n, fn)
	}
	for i := 0; i < n; i++ {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

// Perturb sets plus = w + ν·dir and minus = w − ν·dir, per coordinate
// d = ν·dir_j, plus_j = w_j + d, minus_j = w_j − d. It panics on mismatched
// lengths.
func Perturb(plus, minus, w, dir []float64, nu float64) {
	if len(plus) != len(w) || len(minus) != len(w) || len(dir) != len(w) {
		panic(fmt.Sprintf("arsv1: Perturb: lengths %d, %d, %d, %d", len(plus), len(minus), len(w), len(dir)))
	}
	for j, wj := range w {
		d := nu * dir[j]
		plus[j] = wj + d
		minus[j] = wj - d
	}
}

// RewardStd returns σ, the population standard deviation (divide by the
// count) of the 2N returns taken in the order R⁺_0, R⁻_0, R⁺_1, ...: mean =
// sum/2N, σ = √(Σ(R − mean)²/2N). It returns 1 when N = 1 (the
// normalization applies only when N > 1, spec §4.2) and when σ = 0. A NaN
// return makes σ NaN. It panics unless len(rPlus) = len(rMinus) ≥ 1.
func RewardStd(rPlus, rMinus []float64) float64 {
	n := len(rPlus)
	if len(rMinus) != n || n < 1 {
		panic(fmt.Sprintf("arsv1: RewardStd: %d and %d returns", len(rPlus), len(rMinus)))
	}
	if n == 1 {
		return 1
	}
	var sum float64
	for k := range rPlus {
		sum += rPlus[k]
		sum += rMinus[k]
	}
	cnt := float64(2 * n)
	mean := sum / cnt
	var ss float64
	for k := range rPlus {
		dp, dm := rPlus[k]-mean, rMinus[k]-mean
		ss += dp * dp
		ss += dm * dm
	}
	sd := math.Sqrt(ss / cnt)
	if sd == 0 {
		return 1
	}
	return sd
}

// Gradient sets g = (1/N) Σ_k ((R⁺_k − R⁻_k)/σ)·dirs[k]: g is zeroed, the
// terms are added in index order k = 0..N−1 with coefficient
// (R⁺_k − R⁻_k)/σ, and each coordinate is finally divided by N. It panics on
// mismatched lengths.
func Gradient(g []float64, dirs [][]float64, rPlus, rMinus []float64, sigma float64) {
	if len(dirs) != len(rPlus) || len(rMinus) != len(rPlus) || len(dirs) < 1 {
		panic(fmt.Sprintf("arsv1: Gradient: %d directions, %d and %d returns", len(dirs), len(rPlus), len(rMinus)))
	}
	clear(g)
	for k, d := range dirs {
		if len(d) != len(g) {
			panic(fmt.Sprintf("arsv1: Gradient: direction %d has length %d, want %d", k, len(d), len(g)))
		}
		c := (rPlus[k] - rMinus[k]) / sigma
		for j, dj := range d {
			g[j] += c * dj
		}
	}
	n := float64(len(dirs))
	for j := range g {
		g[j] /= n
	}
}

// Params returns W (read-only view), p×n row-major.
func (a *ARS) Params() []float64 { return a.w }

// Snapshot returns W: evaluation needs only the policy.
func (a *ARS) Snapshot() []float64 { return a.w }

const (
	stateMagic   = "ZAV1"
	stateVersion = 1
)

// MarshalState encodes W and the ES-Adam state ("ZAV1", version 1).
func (a *ARS) MarshalState() ([]byte, error) {
	adam, err := a.adam.MarshalBinary()
	if err != nil {
		return nil, err
	}
	e := algos.NewEncoder(stateMagic, stateVersion)
	e.Floats(a.w)
	e.Blob(adam)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob whose dimensions match the
// environment's. On error the receiver is unchanged.
func (a *ARS) UnmarshalState(b []byte) error {
	d := algos.NewDecoder(b, stateMagic, stateVersion)
	w := d.Floats()
	blob := d.Blob()
	if err := d.Finish(); err != nil {
		return fmt.Errorf("arsv1: %w", err)
	}
	if len(w) != len(a.w) {
		return fmt.Errorf("arsv1: %w: state has %d weights, want %d", algos.ErrFormat, len(w), len(a.w))
	}
	adam, err := restoreAdam(blob, len(a.w), a.cfg.Alpha)
	if err != nil {
		return fmt.Errorf("arsv1: %w", err)
	}
	copy(a.w, w)
	a.adam = adam
	return nil
}

// restoreAdam decodes an ESAdam blob and checks its dimension: ESAdam's
// encoding has a fixed size for a given dimension, so a blob over dim
// coordinates re-encodes to the length of a fresh ESAdam of dim.
func restoreAdam(blob []byte, dim int, alpha float64) (*algos.ESAdam, error) {
	adam := algos.NewESAdam(dim, alpha)
	if err := adam.UnmarshalBinary(blob); err != nil {
		return nil, err
	}
	if adam.Dim() != dim {
		return nil, fmt.Errorf("%w: ES-Adam state of another dimension (want %d)", algos.ErrFormat, dim)
	}
	return adam, nil
}

// SetParallel implements algos.Parallelizer.
func (a *ARS) SetParallel(par func(n int, fn func(i int) error) error) { a.par = par }

var _ algos.Parallelizer = (*ARS)(nil)
