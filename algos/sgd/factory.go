package sgd

import (
	"zorepro/algos"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Factory makes SGD available to the stages on problems of type P whose
// minibatch loss has type L (an algos.Algorithm).
type Factory[P Problem[L], L Loss] struct{}

var _ algos.Algorithm[Config, Problem[Loss]] = Factory[Problem[Loss], Loss]{}

// Hyper implements algos.Algorithm: the tunable hyperparameters in loop
// order.
func (Factory[P, L]) Hyper() []string { return []string{"lr", "batch"} }

// Decode reads lr (> 0) and batch (≥ 1), both required, and momentum
// (0 ≤ μ < 1, default 0).
func (Factory[P, L]) Decode(p *task.Params) Config {
	return Config{
		LR:       p.Float("lr", task.Required(), task.Above(0)),
		Batch:    int(p.Int("batch", task.Required(), task.Min(1), task.Max(algos.MaxPerIteration))),
		Momentum: p.Float("momentum", task.Default(0.0), task.Min(0), task.Below(1)),
	}
}

// Header implements algos.Config: snapshots are the raw parameters,
// evaluated (where the environment draws test batches) on batches of the
// training batch size (spec §3.1.6).
func (c Config) Header() trajectory.Header {
	return trajectory.Header{Method: "sgd", Layout: trajectory.Raw, EvalBatch: c.Batch}
}

// New implements algos.Algorithm: the initial parameters are
// p.InitialWeights(src.Rand("init")).
func (Factory[P, L]) New(cfg Config, p P, src stream.Source) (algos.Method, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return New[L](cfg, p, p.InitialWeights(src.Rand("init")), src)
}
