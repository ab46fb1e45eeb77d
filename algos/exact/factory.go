package exact

import (
	"fmt"

	"zorepro/algos"
	"zorepro/algos/episodic"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Factory makes ExAct available to the stages (an algos.Factory).
type Factory struct {
	// Parallel, if set, runs each iteration's rollouts (episodic.Options);
	// the zero Factory runs them serially. Results do not depend on it.
	Parallel episodic.Parallel
}

// Hyper implements algos.Factory: α × N × ν (episodic.Hyper).
func (Factory) Hyper() []string { return episodic.Hyper() }

// Configure implements algos.Factory: alpha (> 0), directions (>= 1), nu
// (> 0) and diagnostics_every (episodic.Configure).
func (Factory) Configure(p *task.Params) algos.Config { return Config(episodic.Configure(p)) }

// Feasible implements algos.Config.
func (c Config) Feasible() bool { return episodic.Config(c).Validate() == nil }

// Meta implements algos.Config: snapshots are W, p×n row-major.
func (c Config) Meta() map[string]string { return map[string]string{"method": "exact"} }

// New implements algos.Factory: the instance must be an episodic.Episodic
// environment (optionally an episodic.Converger).
func (f Factory) New(cfg algos.Config, instance any, src stream.Source) (algos.Method, error) {
	c, ok := cfg.(Config)
	if !ok {
		return nil, fmt.Errorf("exact: config is %T", cfg)
	}
	env, ok := instance.(episodic.Episodic)
	if !ok {
		return nil, fmt.Errorf("exact: cannot train on %T (not an episodic environment)", instance)
	}
	return New(c, env, src, episodic.Options{Parallel: f.Parallel})
}
