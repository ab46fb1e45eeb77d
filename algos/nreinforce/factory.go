package nreinforce

import (
	"zorepro/algos"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Factory makes natural REINFORCE available to the stages on problems of type P (an
// algos.Algorithm).
type Factory[P Problem[E], E Policy] struct{}

var _ algos.Algorithm[Config, Problem[Policy]] = Factory[Problem[Policy], Policy]{}

// Hyper implements algos.Algorithm: lr is the only tunable hyperparameter.
func (Factory[P, E]) Hyper() []string { return []string{"lr"} }

// Decode reads lr (> 0, required: dag.yaml sets 2.0, or 0.01 with
// constant_eps), batch (>= 1, default 512), beta (> 0, default 0.5) and
// constant_eps (default false).
func (Factory[P, E]) Decode(p *task.Params) Config {
	return Config{
		LR:          p.Float("lr", task.Required(), task.Above(0)),
		Batch:       int(p.Int("batch", task.Default(DefaultBatch), task.Min(1), task.Max(algos.MaxPerIteration))),
		Beta:        p.Float("beta", task.Default(DefaultBeta), task.Above(0)),
		ConstantEps: p.Bool("constant_eps", task.Default(false)),
	}
}

// Header implements algos.Config: snapshots are raw weights, evaluated on
// test batches of the training batch size (§3.1.6: 512).
func (c Config) Header() trajectory.Header {
	return trajectory.Header{Method: "nreinforce", Layout: trajectory.Raw, EvalBatch: c.Batch}
}

// New implements algos.Algorithm; the initial weights come from the
// problem, drawn from the stream "init".
func (Factory[P, E]) New(cfg Config, p P, src stream.Source) (algos.Method, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return New[E](cfg, p, p.InitialWeights(src.Rand("init")), src)
}
