package arsv1

import (
	"fmt"

	"zorepro/algos"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Factory makes ARS V1 available to the stages (an algos.Factory).
type Factory struct {
	// Parallel, if set, runs each iteration's rollouts (Options.Parallel);
	// the zero Factory runs them serially. Results do not depend on it.
	Parallel Parallel
}

// Hyper implements algos.Factory: α × N × ν, the loop order of the original
// tuning scripts (spec §4.4, §5.4).
func (Factory) Hyper() []string { return []string{"alpha", "directions", "nu"} }

// Configure decodes alpha (> 0), directions (>= 1) and nu (> 0).
func (Factory) Configure(p *task.Params) algos.Config {
	return Config{
		Alpha:      p.Float("alpha", task.Required(), task.Above(0)),
		Directions: int(p.Int("directions", task.Required(), task.Min(1))),
		Nu:         p.Float("nu", task.Required(), task.Above(0)),
		// The environment's diagnostics (e.g. LQR's exact expected
		// gradient) every so many iterations; 0 turns them off.
		DiagnosticsEvery: int(p.Int("diagnostics_every", task.Default(int64(10)), task.Min(0))),
	}
}

// Feasible implements algos.Config.
func (c Config) Feasible() bool { return c.Validate() == nil }

// Meta implements algos.Config: snapshots are W, p×n row-major.
func (c Config) Meta() map[string]string { return map[string]string{"method": "arsv1"} }

// New implements algos.Factory: the instance must be an Episodic
// environment (optionally a Converger).
func (f Factory) New(cfg algos.Config, instance any, src stream.Source) (algos.Method, error) {
	c, ok := cfg.(Config)
	if !ok {
		return nil, fmt.Errorf("arsv1: config is %T", cfg)
	}
	env, ok := instance.(Episodic)
	if !ok {
		return nil, fmt.Errorf("arsv1: cannot train on %T (not an episodic environment)", instance)
	}
	return New(c, env, src, Options{Parallel: f.Parallel})
}
