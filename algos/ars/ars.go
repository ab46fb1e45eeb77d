package ars

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"zorepro/algos"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Problem is a contextual bandit that one-step ARS V2-t learns on: a model
// with Dim parameters whose inputs the method standardizes with running
// statistics of Features raw features, and queries that score a perturbed
// parameter vector on one example. *linreg.Instance (a linear prediction,
// reward −½ squared error) and *mnist.Instance (LeNet, a ±1 reward for the
// sampled label) satisfy it, with their own Queries types.
type Problem[Q Queries] interface {
	// Dim is the number of parameters.
	Dim() int
	// InitialWeights draws the initial parameters from rng.
	InitialWeights(rng *rand.Rand) []float64
	// Features is the number of raw features of an example that the running
	// statistics cover.
	Features() int
	// NewQueries returns the queries of batches of n ≥ 1 examples, with
	// scratch of their own, or an error if the problem cannot draw
	// examples.
	NewQueries(n int) (Q, error)
}

// Queries is one method's batch of examples and the queries on them.
type Queries interface {
	// Draw draws iteration it's examples from src (the problem names the
	// streams, e.g. "batch"[it]).
	Draw(src stream.Source, it int64)
	// Features returns example k's raw features (Features() values, read
	// only).
	Features(k int) []float64
	// Rewards returns the rewards of θ + ν·Δ and θ − ν·Δ on example k, its
	// features standardized with μ and s, the + query first; the problem
	// may draw from src's streams indexed by (it, k) (e.g. "queries"[it,
	// k]). Calls with distinct k may run concurrently.
	Rewards(k int, theta, dir []float64, nu float64, mu, s []float64, src stream.Source, it int64) (plus, minus float64, err error)
}

// Config holds the hyperparameters of ARS V2-t (spec §3.7 table and §3.8
// grid for linear regression; §2.6, §2.7 for MNIST). There are no defaults:
// every field must be set.
type Config struct {
	// Alpha is the step size α > 0.
	Alpha float64 `json:"alpha"`
	// Directions is N ≥ 1, the number of directions (and examples) per
	// iteration; an iteration consumes 2N samples.
	Directions int `json:"directions"`
	// Top is b, the number of best directions kept, 1 ≤ b ≤ N.
	Top int `json:"top"`
	// Nu is the perturbation length ν > 0.
	Nu float64 `json:"nu"`
}

// DrawKey implements algos.DrawKeyer: an iteration draws N directions and
// N examples, whatever the other hyperparameters.
func (c Config) DrawKey() string { return fmt.Sprintf("directions=%d", c.Directions) }

// Validate reports every invalid field at once, each as an ErrConfig error.
func (c Config) Validate() error {
	ch := algos.NewChecks(ErrConfig)
	ch.Positive("Alpha", c.Alpha)
	ch.Positive("Nu", c.Nu)
	ch.Count("Directions", c.Directions)
	if c.Top < 1 || c.Top > c.Directions {
		ch.Failf("Top = %d, want 0 < Top ≤ Directions = %d", c.Top, c.Directions)
	}
	return ch.Err()
}

// ARS is ARS V2-t's state on one problem. It implements algos.Method and
// algos.Parallelizer.
type ARS[Q Queries] struct {
	cfg   Config
	q     Q
	src   stream.Source
	par   func(n int, fn func(i int) error) error
	theta []float64
	stats *algos.RunningStat

	// scratch, reused across iterations
	dirs          [][]float64
	mu, s         []float64 // the statistics before this iteration's pushes
	rPlus, rMinus []float64
	u             []float64 // Σ (r+ − r−)·Δ over the kept directions
	snap          []float64
}

var (
	_ algos.Method       = (*ARS[Queries])(nil)
	_ algos.Parallelizer = (*ARS[Queries])(nil)
)

// New returns ARS starting at a copy of theta0 with empty statistics (μ = 0,
// s = 1, so the first iteration sees raw features). It returns an ErrConfig
// error for invalid hyperparameters and the problem's error if it cannot
// draw examples; it panics if len(theta0) != p.Dim(). Directions run
// serially until SetParallel provides a pool.
func New[Q Queries](cfg Config, p Problem[Q], theta0 []float64, src stream.Source) (*ARS[Q], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(theta0) != p.Dim() {
		panic(fmt.Sprintf("ars: len(theta0) = %d, problem dimension %d", len(theta0), p.Dim()))
	}
	q, err := p.NewQueries(cfg.Directions)
	if err != nil {
		return nil, err
	}
	N, d, f := cfg.Directions, len(theta0), p.Features()
	a := &ARS[Q]{
		cfg: cfg, q: q, src: src,
		theta: slices.Clone(theta0), stats: algos.NewRunningStat(f),
		dirs: make([][]float64, N), mu: make([]float64, f), s: make([]float64, f),
		rPlus: make([]float64, N), rMinus: make([]float64, N),
		u: make([]float64, d), snap: make([]float64, d+2*f),
	}
	for k := range a.dirs {
		a.dirs[k] = make([]float64, d)
	}
	return a, nil
}

// SetParallel implements algos.Parallelizer: par runs the N direction units
// of each iteration. Results do not depend on it.
func (a *ARS[Q]) SetParallel(par func(n int, fn func(i int) error) error) { a.par = par }

func (a *ARS[Q]) run(n int, fn func(i int) error) error {
	if a.par != nil {
		return a.par(n, fn)
	}
	for i := range n {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

// Step runs iteration it (see the package documentation). A failed query
// ends the iteration before the statistics or θ change.
func (a *ARS[Q]) Step(it int64) (algos.Stat, error) {
	N := a.cfg.Directions
	a.q.Draw(a.src, it)
	a.stats.Mean(a.mu)
	a.stats.Std(a.s)
	err := a.run(N, func(k int) error {
		Direction(a.dirs[k], a.src.PCG("directions", uint64(it), uint64(k)))
		var err error
		a.rPlus[k], a.rMinus[k], err = a.q.Rewards(k, a.theta, a.dirs[k], a.cfg.Nu, a.mu, a.s, a.src, it)
		if err != nil {
			return fmt.Errorf("direction %d: %w", k, err)
		}
		return nil
	})
	if err != nil {
		return algos.Stat{}, err
	}
	for k := range N {
		a.stats.Push(a.q.Features(k))
	}
	var sum float64
	for k := range N {
		sum += a.rPlus[k]
		sum += a.rMinus[k]
	}
	kept := Select(a.rPlus, a.rMinus, a.cfg.Top)
	sigma := RewardStd(a.rPlus, a.rMinus, kept)
	Update(a.theta, a.u, a.dirs, a.rPlus, a.rMinus, kept, a.cfg.Alpha/(float64(a.cfg.Top)*sigma))
	return algos.Stat{
		Samples: 2 * int64(N),
		Metrics: []task.Metric{{Name: "train_reward", Value: sum / float64(2*N)}},
	}, nil
}

// Update adds coef·u to theta, where u (scratch of len(theta), overwritten)
// is Σ_{k ∈ kept, in the given order} (r+_k − r−_k)·dirs[k], accumulated
// direction by direction from u = 0; Step passes coef = α/(b·σ). Directions
// with r+_k = r−_k are skipped: their terms are ±0, and adding ±0 to a sum
// that starts at +0 and never becomes −0 (a round-to-nearest sum is −0 only
// if both addends are) changes no bit. It panics on mismatched lengths.
func Update(theta, u []float64, dirs [][]float64, rPlus, rMinus []float64, kept []int, coef float64) {
	if len(u) != len(theta) {
		panic(fmt.Sprintf("ars: Update: len(u) = %d, len(theta) = %d", len(u), len(theta)))
	}
	clear(u)
	for _, k := range kept {
		if len(dirs[k]) != len(theta) {
			panic(fmt.Sprintf("ars: Update: direction %d has length %d, want %d", k, len(dirs[k]), len(theta)))
		}
		diff := rPlus[k] - rMinus[k]
		if diff == 0 {
			continue
		}
		for j, dj := range dirs[k] {
			u[j] += diff * dj
		}
	}
	for j := range theta {
		theta[j] += coef * u[j]
	}
}

// Params returns θ (read-only view).
func (a *ARS[Q]) Params() []float64 { return a.theta }

// Snapshot returns θ ‖ μ ‖ s (layout normalized) with the CURRENT
// statistics (after the last iteration's pushes), in a buffer that the next
// Snapshot overwrites.
func (a *ARS[Q]) Snapshot() []float64 {
	d, f := len(a.theta), a.stats.Dim()
	copy(a.snap, a.theta)
	a.stats.Mean(a.snap[d : d+f])
	a.stats.Std(a.snap[d+f:])
	return a.snap
}

const (
	stateMagic   = "ZARS"
	stateVersion = 1
)

// MarshalState encodes θ and the running statistics ("ZARS", version 1).
func (a *ARS[Q]) MarshalState() ([]byte, error) {
	st, err := a.stats.MarshalBinary()
	if err != nil {
		return nil, err
	}
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(a.theta)
	e.Blob(st)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob; its dimensions must match the
// problem's. On error the receiver is unchanged.
func (a *ARS[Q]) UnmarshalState(b []byte) error {
	d := blob.NewDecoder(b, stateMagic, stateVersion)
	theta := d.Floats()
	state := d.Blob()
	if err := d.Finish(); err != nil {
		return fmt.Errorf("ars: %w", err)
	}
	if len(theta) != len(a.theta) {
		return fmt.Errorf("ars: %w: state has %d parameters, problem dimension %d", blob.ErrFormat, len(theta), len(a.theta))
	}
	var st algos.RunningStat
	if err := st.UnmarshalBinary(state); err != nil {
		return fmt.Errorf("ars: statistics: %w", err)
	}
	if st.Dim() != a.stats.Dim() {
		return fmt.Errorf("ars: %w: statistics over %d features, want %d", blob.ErrFormat, st.Dim(), a.stats.Dim())
	}
	copy(a.theta, theta)
	*a.stats = st
	return nil
}
