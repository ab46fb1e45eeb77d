package newton

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

// Factory makes Newton available to the stages on problems of type P (an
// algos.Algorithm).
type Factory[P Initialized] struct{}

var _ algos.Algorithm[Config, Initialized] = Factory[Initialized]{}

// Hyper implements algos.Algorithm: the tunable hyperparameters in loop order.
func (Factory[P]) Hyper() []string { return []string{"batch"} }

// Decode reads batch (>= 1, required; dag.yaml sets 64).
func (Factory[P]) Decode(p *task.Params) Config {
	return Config{Batch: int(p.Int("batch", task.Required(), task.Min(1), task.Max(algos.MaxPerIteration)))}
}

// Header implements algos.Config: snapshots are raw weights, evaluated on
// test batches of the training batch size (§3.1.6).
func (c Config) Header() trajectory.Header {
	return trajectory.Header{Method: "newton", Layout: trajectory.Raw, EvalBatch: c.Batch}
}

// New implements algos.Algorithm; the initial weights come from the
// problem, drawn from the stream "init".
func (Factory[P]) New(cfg Config, p P, src stream.Source) (algos.Method, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return New(cfg, p, p.InitialWeights(src.Rand("init")), src), nil
}
