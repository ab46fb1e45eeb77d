package mnistars

import (
	"fmt"

	"zorepro/algos"
	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Factory makes MNIST ARS available to the stages (an algos.Factory).
type Factory struct{}

// Hyper implements algos.Factory: α × N × ν × b, the loop order of the
// original tuning script (spec §2.7).
func (Factory) Hyper() []string { return []string{"alpha", "directions", "nu", "top"} }

// Configure decodes alpha (> 0), directions (≥ 1), nu (> 0) and top
// (1 ≤ top ≤ directions), all required. A top above directions is reported
// through p and makes the Config infeasible, so tuning skips such grid
// points.
func (Factory) Configure(p *task.Params) algos.Config {
	c := Config{
		Alpha:      p.Float("alpha", task.Required(), task.Above(0)),
		Directions: int(p.Int("directions", task.Required(), task.Min(1))),
		Nu:         p.Float("nu", task.Required(), task.Above(0)),
		Top:        int(p.Int("top", task.Required(), task.Min(1))),
	}
	if c.Top > c.Directions && c.Directions > 0 {
		p.Errorf("top", "%d is out of range (must be <= directions = %d)", c.Top, c.Directions)
	}
	return c
}

// Feasible implements algos.Config.
func (c Config) Feasible() bool { return c.Validate() == nil }

// Meta implements algos.Config: snapshots are θ ‖ μ ‖ s, evaluated on
// standardized pixels.
func (c Config) Meta() map[string]string {
	return map[string]string{"method": "mnistars", "layout": mnist.LayoutNormalized}
}

// New implements algos.Factory: instance must be a *mnist.Instance; the
// initial θ is lenet.NewParams(src.Rand("init")).
func (Factory) New(cfg algos.Config, instance any, src stream.Source) (algos.Method, error) {
	c, ok := cfg.(Config)
	if !ok {
		return nil, fmt.Errorf("mnistars: config is %T", cfg)
	}
	in, ok := instance.(*mnist.Instance)
	if !ok {
		return nil, fmt.Errorf("mnistars: cannot train on %T", instance)
	}
	m, err := New(c, in, lenet.NewParams(src.Rand("init")), src)
	if err != nil {
		return nil, err
	}
	return m, nil
}
