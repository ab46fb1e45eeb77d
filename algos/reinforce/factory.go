package reinforce

import (
	"math/rand/v2"

	"zorepro/algos"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Initialized is a regression problem that draws its own initial weights (spec
// §3.1.7); *linreg.Instance satisfies it.
type Initialized interface {
	Problem
	InitialWeights(rng *rand.Rand) []float64
}

// Factory makes REINFORCE available to the stages on problems of type P (an
// algos.Algorithm).
type Factory[P Initialized] struct{}

var _ algos.Algorithm[Config, Initialized] = Factory[Initialized]{}

// Hyper implements algos.Algorithm: the tuning grid is over lr only (§3.8).
func (Factory[P]) Hyper() []string { return []string{"lr"} }

// Decode reads lr (> 0, required), batch (>= 1, default 512) and beta
// (> 0, default 0.5).
func (Factory[P]) Decode(p *task.Params) Config {
	return Config{
		LR:    p.Float("lr", task.Required(), task.Above(0)),
		Batch: int(p.Int("batch", task.Default(DefaultBatch), task.Min(1))),
		Beta:  p.Float("beta", task.Default(DefaultBeta), task.Above(0)),
	}
}

// Header implements algos.Config: snapshots are raw weights, evaluated on
// test batches of the training batch size (§3.1.6: 512).
func (c Config) Header() trajectory.Header {
	return trajectory.Header{Method: "reinforce", Layout: trajectory.Raw, EvalBatch: c.Batch}
}

// New implements algos.Algorithm; the initial weights come from the
// problem, drawn from the stream "init".
func (Factory[P]) New(cfg Config, p P, src stream.Source) (algos.Method, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return New(cfg, p, p.InitialWeights(src.Rand("init")), src), nil
}
