package mnistreinforce

import (
	"zorepro/algos"
	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Factory makes MNIST REINFORCE available to the stages (an algos.Algorithm on
// *mnist.Instance).
type Factory struct{}

var _ algos.Algorithm[Config, *mnist.Instance] = Factory{}

// Hyper implements algos.Algorithm: lr was "eyeball tuned" (spec §2.7); it
// is the only tunable hyperparameter.
func (Factory) Hyper() []string { return []string{"lr"} }

// Decode reads lr (> 0, required) and batch (≥ 1, default 256; 512 is
// the paper-text variant).
func (Factory) Decode(p *task.Params) Config {
	return Config{
		LR:    p.Float("lr", task.Required(), task.Above(0)),
		Batch: int(p.Int("batch", task.Default(int64(DefaultBatch)), task.Min(1))),
	}
}

// Header implements algos.Config: snapshots are θ, evaluated on raw pixels.
func (c Config) Header() trajectory.Header {
	return trajectory.Header{Method: "reinforce", Layout: trajectory.Raw}
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
