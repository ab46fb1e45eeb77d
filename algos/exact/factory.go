package exact

import (
	"zorepro/algos"
	"zorepro/algos/episodic"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Factory makes ExAct available to the stages on episodic environments of
// type P (an algos.Algorithm).
type Factory[P episodic.Episodic] struct{}

var _ algos.Algorithm[Config, episodic.Episodic] = Factory[episodic.Episodic]{}

// Hyper implements algos.Algorithm: α × N × ν (episodic.Hyper).
func (Factory[P]) Hyper() []string { return episodic.Hyper() }

// Decode implements algos.Algorithm: alpha (> 0), directions (>= 1), nu
// (> 0) and diagnostics_every (episodic.Decode).
func (Factory[P]) Decode(p *task.Params) Config { return Config(episodic.Decode(p)) }

// Validate implements algos.Config.
func (c Config) Validate() error { return episodic.Config(c).Validate() }

// Header implements algos.Config: snapshots are W, p×n row-major.
func (c Config) Header() trajectory.Header { return trajectory.Header{Method: "exact"} }

// New implements algos.Algorithm (the environment may also be an
// episodic.Converger). Rollouts run serially until SetParallel provides a
// pool.
func (Factory[P]) New(cfg Config, env P, src stream.Source) (algos.Method, error) {
	return New(cfg, env, src, episodic.Options{})
}
