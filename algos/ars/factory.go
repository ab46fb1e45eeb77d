package ars

import (
	"zorepro/algos"
	"zorepro/algos/episodic"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Factory makes one-step ARS V2-t available to the stages on problems of
// type P whose queries have type Q (an algos.Algorithm; registered as
// "ars").
type Factory[P Problem[Q], Q Queries] struct{}

var _ algos.Algorithm[Config, Problem[Queries]] = Factory[Problem[Queries], Queries]{}

// Hyper implements algos.Algorithm: α × N × ν × b, the loop order of the
// original tuning scripts (§2.7, §3.8).
func (Factory[P, Q]) Hyper() []string { return []string{"alpha", "directions", "nu", "top"} }

// Decode reads alpha (> 0), directions (≥ 1), nu (> 0) and top
// (1 ≤ top ≤ directions), all required. A top above directions is reported
// through p and makes the Config invalid, so tuning skips such grid points.
func (Factory[P, Q]) Decode(p *task.Params) Config {
	c := Config{
		Alpha:      p.Float("alpha", task.Required(), task.Above(0)),
		Directions: int(p.Int("directions", task.Required(), task.Min(1), task.Max(algos.MaxPerIteration))),
		Nu:         p.Float("nu", task.Required(), task.Above(0)),
		Top:        int(p.Int("top", task.Required(), task.Min(1), task.Max(algos.MaxPerIteration))),
	}
	if c.Top > c.Directions && c.Directions > 0 {
		p.Conflictf("top", "must be <= directions = %d, got %d", c.Directions, c.Top)
	}
	return c
}

// Header implements algos.Config: snapshots carry the normalizer, and test
// batches (where the environment draws them) have N examples (§3.1.6).
func (c Config) Header() trajectory.Header {
	return trajectory.Header{Method: "ars", Layout: trajectory.Normalized, EvalBatch: c.Directions}
}

// New implements algos.Algorithm; the initial parameters are
// p.InitialWeights(src.Rand("init")).
func (Factory[P, Q]) New(cfg Config, p P, src stream.Source) (algos.Method, error) {
	return New[Q](cfg, p, p.InitialWeights(src.Rand("init")), src)
}

// V1Factory makes multi-step ARS V1 available to the stages on episodic
// environments of type P (an algos.Algorithm; registered as "arsv1").
type V1Factory[P episodic.Episodic] struct{}

var _ algos.Algorithm[V1Config, episodic.Episodic] = V1Factory[episodic.Episodic]{}

// Hyper implements algos.Algorithm: α × N × ν (episodic.Hyper).
func (V1Factory[P]) Hyper() []string { return episodic.Hyper() }

// Decode implements algos.Algorithm: alpha (> 0), directions (>= 1), nu
// (> 0) and diagnostics_every (episodic.Decode).
func (V1Factory[P]) Decode(p *task.Params) V1Config { return V1Config(episodic.Decode(p)) }

// Validate implements algos.Config.
func (c V1Config) Validate() error { return episodic.Config(c).Validate() }

// Header implements algos.Config: snapshots are W, p×n row-major.
func (c V1Config) Header() trajectory.Header { return trajectory.Header{Method: "arsv1"} }

// New implements algos.Algorithm (the environment may also be an
// episodic.Converger). Rollouts run serially until SetParallel provides a
// pool.
func (V1Factory[P]) New(cfg V1Config, env P, src stream.Source) (algos.Method, error) {
	return NewV1(cfg, env, src, episodic.Options{})
}
