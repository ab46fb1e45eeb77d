package mnistars

import (
	"zorepro/algos"
	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Factory makes MNIST ARS available to the stages (an algos.Algorithm on
// *mnist.Instance).
type Factory struct{}

var _ algos.Algorithm[Config, *mnist.Instance] = Factory{}

// Hyper implements algos.Algorithm: α × N × ν × b, the loop order of the
// original tuning script (spec §2.7).
func (Factory) Hyper() []string { return []string{"alpha", "directions", "nu", "top"} }

// Decode reads alpha (> 0), directions (≥ 1), nu (> 0) and top
// (1 ≤ top ≤ directions), all required. A top above directions is reported
// through p and makes the Config invalid, so tuning skips such grid
// points.
func (Factory) Decode(p *task.Params) Config {
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

// Header implements algos.Config: snapshots are θ ‖ μ ‖ s, evaluated on
// standardized pixels.
func (c Config) Header() trajectory.Header {
	return trajectory.Header{Method: "ars", Layout: trajectory.Normalized}
}

// New implements algos.Algorithm: the initial θ is
// lenet.NewParams(src.Rand("init")).
func (Factory) New(cfg Config, in *mnist.Instance, src stream.Source) (algos.Method, error) {
	m, err := New(cfg, in, lenet.NewParams(src.Rand("init")), src)
	if err != nil {
		return nil, err
	}
	return m, nil
}
