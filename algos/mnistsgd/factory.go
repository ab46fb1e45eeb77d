package mnistsgd

import (
	"fmt"

	"zorepro/algos"
	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Factory makes MNIST SGD available to the stages (an algos.Factory).
type Factory struct{}

// Hyper implements algos.Factory: lr was "eyeball tuned" (spec §2.7); it is
// the only tunable hyperparameter.
func (Factory) Hyper() []string { return []string{"lr"} }

// Configure decodes lr (> 0, required), momentum (0 ≤ μ < 1, default 0.5)
// and batch (≥ 1, default 64).
func (Factory) Configure(p *task.Params) algos.Config {
	return Config{
		LR:       p.Float("lr", task.Required(), task.Above(0)),
		Momentum: p.Float("momentum", task.Default(DefaultMomentum), task.Min(0), task.Below(1)),
		Batch:    int(p.Int("batch", task.Default(int64(DefaultBatch)), task.Min(1))),
	}
}

// Feasible implements algos.Config.
func (c Config) Feasible() bool { return c.Validate() == nil }

// Meta implements algos.Config: snapshots are θ, evaluated on raw pixels.
func (c Config) Meta() map[string]string {
	return map[string]string{"method": "mnistsgd", "layout": mnist.LayoutRaw}
}

// New implements algos.Factory: instance must be a *mnist.Instance; the
// initial θ is lenet.NewParams(src.Rand("init")).
func (Factory) New(cfg algos.Config, instance any, src stream.Source) (algos.Method, error) {
	c, ok := cfg.(Config)
	if !ok {
		return nil, fmt.Errorf("mnistsgd: config is %T", cfg)
	}
	in, ok := instance.(*mnist.Instance)
	if !ok {
		return nil, fmt.Errorf("mnistsgd: cannot train on %T", instance)
	}
	m, err := New(c, in, lenet.NewParams(src.Rand("init")), src)
	if err != nil {
		return nil, err
	}
	return m, nil
}
