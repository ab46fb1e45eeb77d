package exact

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"zorepro/algos"
	"zorepro/pipeline/stream"
)

// Episodic is a finite-horizon episodic environment driven by a linear
// policy. It is the same interface as arsv1.Episodic (see there for the
// full contract); envs/lqr.Instance satisfies both.
type Episodic interface {
	// ObsDim is n, the observation dimension.
	ObsDim() int
	// ActDim is p, the action dimension.
	ActDim() int
	// Horizon is H, the number of steps of every episode.
	Horizon() int
	// Rollout runs one episode from a fresh reset drawn from rng under
	// a_t = W·s_t (W p×n row-major, unclipped) and returns its return. If
	// delta is non-nil (length p) the action at step t is W·s_t + delta and
	// s_t is copied into obs (length n, if non-nil). It must be safe for
	// concurrent calls with distinct rng and obs, and returns an error when
	// the episode cannot be completed.
	Rollout(rng *rand.Rand, W []float64, t int, delta, obs []float64) (float64, error)
}

// Converger is implemented by environments with their own stop rule (the LQR
// stationarity test, spec §5.2); see arsv1.Converger.
type Converger interface {
	// diagnostics asks for extra, costlier metrics that never affect
	// the result (LQR: the exact expected gradient).
	Converged(W []float64, rng *rand.Rand, diagnostics bool) (done bool, metrics []algos.Metric, err error)
}

// Parallel calls fn(0), ..., fn(n−1), possibly concurrently, and returns the
// error of the lowest failing index (or any of them). fn writes only to
// index-owned slots.
type Parallel func(n int, fn func(i int) error) error

// Options are execution options that do not affect results.
type Options struct {
	// Parallel runs the N rollouts of an iteration; nil runs them in index
	// order on the calling goroutine.
	Parallel Parallel
}

// Config holds the hyperparameters (spec §4.5, §5.4). There are no
// defaults: every field must be set.
type Config struct {
	// Alpha is the ES-Adam step size α > 0.
	Alpha float64
	// Directions is N ≥ 1; an iteration runs N episodes.
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

// ExAct is the optimizer state on one environment. It implements
// algos.Method.
type ExAct struct {
	cfg  Config
	env  Episodic
	conv Converger // nil when env has no stop rule
	src  stream.Source
	par  Parallel
	p, n int
	w    []float64
	adam *algos.ESAdam

	// scratch, reused across iterations
	eps, delta, obs [][]float64 // ε_k, ν·ε_k, s_k
	steps           []int       // t_k
	rets            []float64   // R_k
	g               []float64
}

var _ algos.Method = (*ExAct)(nil)

// New returns ExAct at W = 0 (ActDim×ObsDim) with a fresh ES-Adam. It
// returns an ErrConfig error for invalid hyperparameters and panics if the
// environment has a non-positive dimension or horizon.
func New(cfg Config, env Episodic, src stream.Source, opt Options) (*ExAct, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, n, h := env.ActDim(), env.ObsDim(), env.Horizon()
	if p < 1 || n < 1 || h < 1 {
		panic(fmt.Sprintf("exact: environment with p = %d, n = %d, H = %d", p, n, h))
	}
	N := cfg.Directions
	e := &ExAct{
		cfg: cfg, env: env, src: src, par: opt.Parallel, p: p, n: n,
		w:    make([]float64, p*n),
		adam: algos.NewESAdam(p*n, cfg.Alpha),
		eps:  make([][]float64, N), delta: make([][]float64, N), obs: make([][]float64, N),
		steps: make([]int, N), rets: make([]float64, N),
		g: make([]float64, p*n),
	}
	e.conv, _ = env.(Converger)
	for k := 0; k < N; k++ {
		e.eps[k] = make([]float64, p)
		e.delta[k] = make([]float64, p)
		e.obs[k] = make([]float64, n)
	}
	return e, nil
}

// Step runs iteration it (see the package documentation for the streams
// and the update). It consumes N·H samples and reports "train_return", the
// mean of the N returns (summed in index order), then the Converger's
// metrics, if any. A rollout or Converger error ends the iteration with that
// error (W unchanged if a rollout failed).
func (e *ExAct) Step(it int64) (algos.Stat, error) {
	N, h := e.cfg.Directions, e.env.Horizon()
	err := e.run(N, func(k int) error {
		e.steps[k] = e.src.Rand("timesteps", uint64(it), uint64(k)).IntN(h)
		rng := e.src.Rand("directions", uint64(it), uint64(k))
		for i := range e.eps[k] {
			e.eps[k][i] = rng.NormFloat64()
			e.delta[k][i] = e.cfg.Nu * e.eps[k][i]
		}
		r, err := e.env.Rollout(e.src.Rand("episodes", uint64(it), uint64(k)), e.w, e.steps[k], e.delta[k], e.obs[k])
		if err != nil {
			return fmt.Errorf("exact: direction %d (perturbed step %d): %w", k, e.steps[k], err)
		}
		e.rets[k] = r
		return nil
	})
	if err != nil {
		return algos.Stat{}, err
	}
	var sum float64
	for _, r := range e.rets {
		sum += r
	}
	sigma := RewardStd(e.rets)
	Gradient(e.g, e.eps, e.obs, e.rets, sigma)
	for j, s := range e.adam.Step(e.g) {
		e.w[j] += s
	}
	st := algos.Stat{
		Samples: int64(N) * int64(h),
		Metrics: []algos.Metric{{Name: "train_return", Value: sum / float64(N)}},
	}
	if e.conv != nil {
		done, ms, err := e.conv.Converged(e.w, e.src.Rand("converged", uint64(it)), e.cfg.DiagnosticsEvery > 0 && it%int64(e.cfg.DiagnosticsEvery) == 0)
		if err != nil {
			return algos.Stat{}, fmt.Errorf("exact: convergence check: %w", err)
		}
		st.Done = done
		st.Metrics = append(st.Metrics, ms...)
	}
	return st, nil
}

func (e *ExAct) run(n int, fn func(i int) error) error {
	if e.par != nil {
		return e.par(n, fn)
	}
	for i := 0; i < n; i++ {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

// RewardStd returns σ, the population standard deviation of the 2N numbers
// {R_1, ..., R_N, 0, ..., 0} (the N one-point placeholders count as zeros,
// spec §6.9): mean = (Σ_k R_k)/2N and σ = √((Σ_k (R_k − mean)² + N·mean²)/2N),
// sums in index order. It returns 1 when σ = 0 (all returns zero; then G = 0
// anyway). A NaN return makes σ NaN. It panics on an empty slice.
func RewardStd(rets []float64) float64 {
	n := len(rets)
	if n < 1 {
		panic("exact: RewardStd: no returns")
	}
	var sum float64
	for _, r := range rets {
		sum += r
	}
	cnt := float64(2 * n)
	mean := sum / cnt
	var ss float64
	for _, r := range rets {
		d := r - mean
		ss += d * d
	}
	ss += float64(n) * (mean * mean)
	sd := math.Sqrt(ss / cnt)
	if sd == 0 {
		return 1
	}
	return sd
}

// Gradient sets the p×n row-major G = (1/N) Σ_k (R_k/σ)·ε_k s_kᵀ: G is
// zeroed; for k = 0..N−1 in order, c = R_k/σ and G[i·n+j] += (c·ε_k[i])·s_k[j];
// finally every entry is divided by N. p = len(ε_k), n = len(s_k). It panics
// on mismatched lengths.
func Gradient(G []float64, eps, obs [][]float64, rets []float64, sigma float64) {
	N := len(rets)
	if N < 1 || len(eps) != N || len(obs) != N {
		panic(fmt.Sprintf("exact: Gradient: %d returns, %d directions, %d observations", N, len(eps), len(obs)))
	}
	p, n := len(eps[0]), len(obs[0])
	if p*n != len(G) {
		panic(fmt.Sprintf("exact: Gradient: len(G) = %d, want %d×%d", len(G), p, n))
	}
	clear(G)
	for k, r := range rets {
		if len(eps[k]) != p || len(obs[k]) != n {
			panic(fmt.Sprintf("exact: Gradient: direction %d has %d actions, %d observations", k, len(eps[k]), len(obs[k])))
		}
		c := r / sigma
		for i, ei := range eps[k] {
			ce := c * ei
			row := G[i*n : (i+1)*n]
			for j, sj := range obs[k] {
				row[j] += ce * sj
			}
		}
	}
	fn := float64(N)
	for j := range G {
		G[j] /= fn
	}
}

// Params returns W (read-only view), p×n row-major.
func (e *ExAct) Params() []float64 { return e.w }

// Snapshot returns W: evaluation needs only the policy.
func (e *ExAct) Snapshot() []float64 { return e.w }

const (
	stateMagic   = "ZEXA"
	stateVersion = 1
)

// MarshalState encodes W and the ES-Adam state ("ZEXA", version 1).
func (e *ExAct) MarshalState() ([]byte, error) {
	adam, err := e.adam.MarshalBinary()
	if err != nil {
		return nil, err
	}
	enc := algos.NewEncoder(stateMagic, stateVersion)
	enc.Floats(e.w)
	enc.Blob(adam)
	return enc.Data(), nil
}

// UnmarshalState restores a MarshalState blob whose dimensions match the
// environment's. On error the receiver is unchanged.
func (e *ExAct) UnmarshalState(b []byte) error {
	d := algos.NewDecoder(b, stateMagic, stateVersion)
	w := d.Floats()
	blob := d.Blob()
	if err := d.Finish(); err != nil {
		return fmt.Errorf("exact: %w", err)
	}
	if len(w) != len(e.w) {
		return fmt.Errorf("exact: %w: state has %d weights, want %d", algos.ErrFormat, len(w), len(e.w))
	}
	adam := algos.NewESAdam(len(e.w), e.cfg.Alpha)
	if err := adam.UnmarshalBinary(blob); err != nil {
		return fmt.Errorf("exact: %w", err)
	}
	if adam.Dim() != len(e.w) {
		return fmt.Errorf("exact: %w: ES-Adam state of another dimension (want %d)", algos.ErrFormat, len(e.w))
	}
	copy(e.w, w)
	e.adam = adam
	return nil
}

// SetParallel implements algos.Parallelizer.
func (e *ExAct) SetParallel(par func(n int, fn func(i int) error) error) { e.par = par }

var _ algos.Parallelizer = (*ExAct)(nil)
