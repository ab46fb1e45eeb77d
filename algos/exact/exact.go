package exact

import (
	"fmt"
	"math"

	"zorepro/algos"
	"zorepro/algos/episodic"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Config holds the hyperparameters, those of episodic.Config (spec §4.5,
// §5.4): an iteration runs N episodes. There are no defaults: every field
// must be set. It is a type of its own so that trajectories name the method
// (Meta). Variant selects the estimator.
type Config struct {
	episodic.Config
	Variant string `json:"variant"`
}

// The variants of the estimator (see the package documentation).
const (
	// OneStep perturbs one random step of each episode and scores it by
	// the whole episode's return: the plotted ExAct (spec §4.3).
	OneStep = "one-step"
	// RewardToGo perturbs one random step and scores it by the return from
	// that step on (the ablation of spec §6 item 8).
	RewardToGo = "reward-to-go"
	// AllSteps perturbs every step of each episode and scores the whole
	// episode's return against every step's perturbation (the authors'
	// earlier "all-timestep" ExAct, spec §4.3).
	AllSteps = "all-steps"
)

// Variants lists the variants.
var Variants = []string{OneStep, RewardToGo, AllSteps}

// ExAct is the optimizer state on one environment. It implements
// algos.Method.
type ExAct struct {
	cfg     episodic.Config
	variant string
	env     episodic.Episodic
	pert    episodic.Perturber // the reward-to-go and all-steps variants' episodes
	conv    episodic.Converger // nil when env has no stop rule
	src     stream.Source
	par     episodic.Parallel
	p, n    int
	pol     *episodic.Policy // W and its ES-Adam

	// scratch, reused across iterations
	eps, delta, obs [][]float64 // ε_k, ν·ε_k, s_k (all-steps: H of each, step-major)
	steps           []int       // t_k
	rets            []float64   // R_k
	rewards         [][]float64 // reward-to-go: direction k's H rewards
	all             []int       // all-steps: 0..H−1
	g               []float64
}

var _ algos.Method = (*ExAct)(nil)

// New returns ExAct at W = 0 (ActDim×ObsDim) with a fresh ES-Adam. It
// returns an episodic.ErrConfig error for invalid hyperparameters and panics
// if the environment has a non-positive dimension or horizon.
func New(cfg Config, env episodic.Episodic, src stream.Source, opt episodic.Options) (*ExAct, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("exact: %w", err)
	}
	c := cfg.Config
	p, n, h := env.ActDim(), env.ObsDim(), env.Horizon()
	if p < 1 || n < 1 || h < 1 {
		panic(fmt.Sprintf("exact: environment with p = %d, n = %d, H = %d", p, n, h))
	}
	N := c.Directions
	e := &ExAct{
		cfg: c, variant: cfg.Variant, env: env, src: src, par: opt.Parallel, p: p, n: n,
		pol: episodic.NewPolicy(p*n, c.Alpha),
		eps: make([][]float64, N), delta: make([][]float64, N), obs: make([][]float64, N),
		steps: make([]int, N), rets: make([]float64, N),
		g: make([]float64, p*n),
	}
	e.conv, _ = env.(episodic.Converger)
	if cfg.Variant != OneStep {
		var ok bool
		if e.pert, ok = env.(episodic.Perturber); !ok {
			return nil, fmt.Errorf("%w: the %s variant needs an environment that runs perturbed episodes (%T does not)", episodic.ErrConfig, cfg.Variant, env)
		}
	}
	steps := 1
	if cfg.Variant == AllSteps {
		steps = h
		e.all = make([]int, h)
		for t := range e.all {
			e.all[t] = t
		}
	}
	if cfg.Variant == RewardToGo {
		e.rewards = make([][]float64, N)
	}
	for k := 0; k < N; k++ {
		e.eps[k] = make([]float64, steps*p)
		e.delta[k] = make([]float64, steps*p)
		e.obs[k] = make([]float64, steps*n)
		if e.rewards != nil {
			e.rewards[k] = make([]float64, h)
		}
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
	scores := e.rets // what each direction's perturbation is scored by
	if e.variant == RewardToGo {
		scores = make([]float64, N)
	}
	err := e.par.Run(N, func(k int) error {
		if e.variant != AllSteps {
			e.steps[k] = e.src.Rand("timesteps", uint64(it), uint64(k)).IntN(h)
		}
		rng := e.src.Rand("directions", uint64(it), uint64(k))
		for i := range e.eps[k] {
			e.eps[k][i] = rng.NormFloat64()
			e.delta[k][i] = e.cfg.Nu * e.eps[k][i]
		}
		ep := e.src.Rand("episodes", uint64(it), uint64(k))
		var r float64
		var err error
		switch e.variant {
		case AllSteps:
			r, err = e.pert.Episode(ep, e.pol.W, e.all, e.delta[k], e.obs[k], nil)
		case RewardToGo:
			r, err = e.pert.Episode(ep, e.pol.W, e.steps[k:k+1], e.delta[k], e.obs[k], e.rewards[k])
			var togo float64
			for _, x := range e.rewards[k][e.steps[k]:] {
				togo += x
			}
			scores[k] = togo
		default:
			r, err = e.env.Rollout(ep, e.pol.W, e.steps[k], e.delta[k], e.obs[k])
		}
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
	sigma := RewardStd(scores)
	if e.variant == AllSteps {
		GradientAllSteps(e.g, e.p, e.eps, e.obs, scores, sigma)
	} else {
		Gradient(e.g, e.eps, e.obs, scores, sigma)
	}
	e.pol.Ascend(e.g)
	st := algos.Stat{
		Samples: int64(N) * int64(h),
		Metrics: []task.Metric{{Name: "train_return", Value: sum / float64(N)}},
	}
	if e.conv != nil {
		done, ms, err := e.conv.Converged(e.pol.W, e.src.Rand("converged", uint64(it)), e.cfg.Diagnostics(it))
		if err != nil {
			return algos.Stat{}, fmt.Errorf("exact: convergence check: %w", err)
		}
		st.Done = done
		st.Metrics = append(st.Metrics, ms...)
	}
	return st, nil
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

// GradientAllSteps is Gradient for the all-steps variant, whose ε_k and s_k
// hold H steps each (step-major: ε_k[t·p+i], s_k[t·n+j], n = len(G)/p): G
// is zeroed; for k = 0..N−1 in order, c = R_k/σ, and for t = 0..H−1 in
// order G[i·n+j] += (c·ε_k[t·p+i])·s_k[t·n+j]; finally every entry is
// divided by N. It panics on mismatched lengths.
func GradientAllSteps(G []float64, p int, eps, obs [][]float64, rets []float64, sigma float64) {
	N := len(rets)
	if N < 1 || p < 1 || len(G)%p != 0 || len(eps) != N || len(obs) != N {
		panic(fmt.Sprintf("exact: GradientAllSteps: %d returns, %d directions, %d observations, len(G) = %d, p = %d", N, len(eps), len(obs), len(G), p))
	}
	n := len(G) / p
	clear(G)
	for k, r := range rets {
		h := len(eps[k]) / p
		if h < 1 || len(eps[k]) != h*p || len(obs[k]) != h*n {
			panic(fmt.Sprintf("exact: GradientAllSteps: direction %d has %d perturbations and %d observations (p = %d, n = %d)", k, len(eps[k]), len(obs[k]), p, n))
		}
		c := r / sigma
		for t := 0; t < h; t++ {
			s := obs[k][t*n : (t+1)*n]
			for i, ei := range eps[k][t*p : (t+1)*p] {
				ce := c * ei
				row := G[i*n : (i+1)*n]
				for j, sj := range s {
					row[j] += ce * sj
				}
			}
		}
	}
	fn := float64(N)
	for j := range G {
		G[j] /= fn
	}
}

// Params returns W (read-only view), p×n row-major.
func (e *ExAct) Params() []float64 { return e.pol.W }

// Snapshot returns W: evaluation needs only the policy.
func (e *ExAct) Snapshot() []float64 { return e.pol.W }

const (
	stateMagic   = "ZEXA"
	stateVersion = 1
)

// MarshalState encodes W and the ES-Adam state ("ZEXA", version 1;
// episodic.Policy.MarshalState).
func (e *ExAct) MarshalState() ([]byte, error) {
	return e.pol.MarshalState(stateMagic, stateVersion)
}

// UnmarshalState restores a MarshalState blob whose dimensions match the
// environment's. On error the receiver is unchanged.
func (e *ExAct) UnmarshalState(b []byte) error {
	if err := e.pol.UnmarshalState(b, stateMagic, stateVersion); err != nil {
		return fmt.Errorf("exact: %w", err)
	}
	return nil
}

// SetParallel implements algos.Parallelizer.
func (e *ExAct) SetParallel(par func(n int, fn func(i int) error) error) { e.par = par }

var _ algos.Parallelizer = (*ExAct)(nil)
