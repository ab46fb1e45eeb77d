package ars

import (
	"fmt"

	"zorepro/algos"
	"zorepro/algos/episodic"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// V1Config holds ARS V1's hyperparameters, those of episodic.Config (spec
// §4.5, §5.4): an iteration runs 2N episodes. There are no defaults: every
// field must be set. It is a type of its own so that trajectories name the
// method (Header).
type V1Config episodic.Config

// V1 is ARS V1's state on one environment. It implements algos.Method and
// algos.Parallelizer.
type V1 struct {
	cfg  episodic.Config
	env  episodic.Episodic
	conv episodic.Converger // nil when env has no stop rule
	src  stream.Source
	par  episodic.Parallel
	pol  *episodic.Policy // W and its ES-Adam

	// scratch, reused across iterations
	dirs          [][]float64 // ε_k
	pols          [][]float64 // W + νε_k at 2k, W − νε_k at 2k+1
	rPlus, rMinus []float64
	g             []float64
}

var _ algos.Method = (*V1)(nil)

// NewV1 returns ARS V1 at W = 0 (ActDim×ObsDim) with a fresh ES-Adam. It returns
// an episodic.ErrConfig error for invalid hyperparameters and panics if the
// environment has a non-positive dimension or horizon.
func NewV1(cfg V1Config, env episodic.Episodic, src stream.Source, opt episodic.Options) (*V1, error) {
	c := episodic.Config(cfg)
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("ars: %w", err)
	}
	p, n, h := env.ActDim(), env.ObsDim(), env.Horizon()
	if p < 1 || n < 1 || h < 1 {
		panic(fmt.Sprintf("ars: environment with p = %d, n = %d, H = %d", p, n, h))
	}
	dim, N := p*n, c.Directions
	a := &V1{
		cfg: c, env: env, src: src, par: opt.Parallel,
		pol:  episodic.NewPolicy(dim, c.Alpha),
		dirs: make([][]float64, N), pols: make([][]float64, 2*N),
		rPlus: make([]float64, N), rMinus: make([]float64, N),
		g: make([]float64, dim),
	}
	a.conv, _ = env.(episodic.Converger)
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
func (a *V1) Step(it int64) (algos.Stat, error) {
	N, nu := a.cfg.Directions, a.cfg.Nu
	for k, d := range a.dirs {
		rng := a.src.Rand("directions", uint64(it), uint64(k))
		for j := range d {
			d[j] = rng.NormFloat64()
		}
		Perturb(a.pols[2*k], a.pols[2*k+1], a.pol.W, d, nu)
	}
	err := a.par.Run(2*N, func(i int) error {
		k, sign := i/2, i%2
		r, err := a.env.Rollout(a.src.Rand("episodes", uint64(it), uint64(k), uint64(sign)), a.pols[i], -1, nil, nil)
		if err != nil {
			return fmt.Errorf("ars: direction %d, %s episode: %w", k, [2]string{"+", "−"}[sign], err)
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
	sigma := v1RewardStd(a.rPlus, a.rMinus)
	Gradient(a.g, a.dirs, a.rPlus, a.rMinus, sigma)
	a.pol.Ascend(a.g)
	st := algos.Stat{
		Samples: 2 * int64(N) * int64(a.env.Horizon()),
		Metrics: []task.Metric{{Name: "train_return", Value: sum / float64(2*N)}},
	}
	if a.conv != nil {
		done, ms, err := a.conv.Converged(a.pol.W, a.src.Rand("converged", uint64(it)), a.cfg.Diagnostics(it))
		if err != nil {
			return algos.Stat{}, fmt.Errorf("ars: convergence check: %w", err)
		}
		st.Done = done
		st.Metrics = append(st.Metrics, ms...)
	}
	return st, nil
}

// Perturb sets plus = w + ν·dir and minus = w − ν·dir, per coordinate
// d = ν·dir_j, plus_j = w_j + d, minus_j = w_j − d. It panics on mismatched
// lengths.
func Perturb(plus, minus, w, dir []float64, nu float64) {
	if len(plus) != len(w) || len(minus) != len(w) || len(dir) != len(w) {
		panic(fmt.Sprintf("ars: Perturb: lengths %d, %d, %d, %d", len(plus), len(minus), len(w), len(dir)))
	}
	for j, wj := range w {
		d := nu * dir[j]
		plus[j] = wj + d
		minus[j] = wj - d
	}
}

// v1RewardStd returns σ of ARS V1: the population standard deviation
// (RewardStd) of all 2N returns, taken in the order R⁺_0, R⁻_0, R⁺_1, ...,
// or 1 when N = 1 (the normalization applies only when N > 1, spec §4.2).
// It panics unless len(rPlus) = len(rMinus) ≥ 1.
func v1RewardStd(rPlus, rMinus []float64) float64 {
	n := len(rPlus)
	if len(rMinus) != n || n < 1 {
		panic(fmt.Sprintf("ars: v1RewardStd: %d and %d returns", len(rPlus), len(rMinus)))
	}
	if n == 1 {
		return 1
	}
	all := make([]int, n)
	for k := range all {
		all[k] = k
	}
	return RewardStd(rPlus, rMinus, all)
}

// Gradient sets g = (1/N) Σ_k ((R⁺_k − R⁻_k)/σ)·dirs[k]: g is zeroed, the
// terms are added in index order k = 0..N−1 with coefficient
// (R⁺_k − R⁻_k)/σ, and each coordinate is finally divided by N. It panics on
// mismatched lengths.
func Gradient(g []float64, dirs [][]float64, rPlus, rMinus []float64, sigma float64) {
	if len(dirs) != len(rPlus) || len(rMinus) != len(rPlus) || len(dirs) < 1 {
		panic(fmt.Sprintf("ars: Gradient: %d directions, %d and %d returns", len(dirs), len(rPlus), len(rMinus)))
	}
	clear(g)
	for k, d := range dirs {
		if len(d) != len(g) {
			panic(fmt.Sprintf("ars: Gradient: direction %d has length %d, want %d", k, len(d), len(g)))
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
func (a *V1) Params() []float64 { return a.pol.W }

// Snapshot returns W: evaluation needs only the policy.
func (a *V1) Snapshot() []float64 { return a.pol.W }

const (
	v1StateMagic   = "ZAV1"
	v1StateVersion = 1
)

// MarshalState encodes W and the ES-Adam state ("ZAV1", version 1;
// episodic.Policy.MarshalState).
func (a *V1) MarshalState() ([]byte, error) {
	return a.pol.MarshalState(v1StateMagic, v1StateVersion)
}

// UnmarshalState restores a MarshalState blob whose dimensions match the
// environment's. On error the receiver is unchanged.
func (a *V1) UnmarshalState(b []byte) error {
	if err := a.pol.UnmarshalState(b, v1StateMagic, v1StateVersion); err != nil {
		return fmt.Errorf("ars: %w", err)
	}
	return nil
}

// SetParallel implements algos.Parallelizer.
func (a *V1) SetParallel(par func(n int, fn func(i int) error) error) { a.par = par }

var _ algos.Parallelizer = (*V1)(nil)
