package nreinforce

import (
	"math/rand/v2"

	"zorepro/algos"
	"zorepro/algos/reinforce"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Initialized is a regression problem that draws its own initial weights (spec
// §3.1.7); *linreg.Instance satisfies it.
type Initialized interface {
	reinforce.Problem
	InitialWeights(rng *rand.Rand) []float64
}

// Factory makes natural REINFORCE available to the stages on problems of type P (an
// algos.Algorithm).
type Factory[P Initialized] struct{}

var _ algos.Algorithm[Config, Initialized] = Factory[Initialized]{}

// Hyper implements algos.Algorithm: lr is the only tunable hyperparameter.
func (Factory[P]) Hyper() []string { return []string{"lr"} }

// Decode reads lr (> 0, required: dag.yaml sets 2.0, or 0.01 with
// constant_eps), batch (>= 1, default 512), beta (> 0, default 0.5) and
// constant_eps (default false).
func (Factory[P]) Decode(p *task.Params) Config {
	return Config{
		LR:          p.Float("lr", task.Required(), task.Above(0)),
		Batch:       int(p.Int("batch", task.Default(reinforce.DefaultBatch), task.Min(1))),
		Beta:        p.Float("beta", task.Default(reinforce.DefaultBeta), task.Above(0)),
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
func (Factory[P]) New(cfg Config, p P, src stream.Source) (algos.Method, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return New(cfg, p, p.InitialWeights(src.Rand("init")), src), nil
}
