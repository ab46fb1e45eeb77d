package reinforce

import (
	"zorepro/algos"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Factory makes REINFORCE available to the stages on problems of type P
// whose policy estimator has type E (an algos.Algorithm).
type Factory[P Problem[E], E Policy] struct{}

var _ algos.Algorithm[Config, Problem[Policy]] = Factory[Problem[Policy], Policy]{}

// Hyper implements algos.Algorithm: the tuning grid is over lr only (§3.8).
func (Factory[P, E]) Hyper() []string { return []string{"lr"} }

// Decode reads lr (> 0), batch (≥ 1) and optimizer (esadam | adam), all
// required, and beta (> 0; required by a Gaussian policy, refused by a
// policy without an exploration scale).
func (Factory[P, E]) Decode(p *task.Params) Config {
	c := Config{
		LR:        p.Float("lr", task.Required(), task.Above(0)),
		Batch:     int(p.Int("batch", task.Required(), task.Min(1), task.Max(algos.MaxPerIteration))),
		Optimizer: p.String("optimizer", task.Required(), task.OneOf(ESAdam, Adam)),
	}
	if p.Has("beta") {
		c.Beta = p.Float("beta", task.Above(0))
	}
	return c
}

// Header implements algos.Config: snapshots are the raw parameters,
// evaluated (where the environment draws test batches) on batches of the
// training batch size (§3.1.6: 512).
func (c Config) Header() trajectory.Header {
	return trajectory.Header{Method: "reinforce", Layout: trajectory.Raw, EvalBatch: c.Batch}
}

// New implements algos.Algorithm; the initial weights come from the
// problem, drawn from the stream "init".
func (Factory[P, E]) New(cfg Config, p P, src stream.Source) (algos.Method, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return New[E](cfg, p, p.InitialWeights(src.Rand("init")), src)
}
