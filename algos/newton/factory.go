package newton

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"zorepro/algos"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Factory makes Newton available to the stages (an algos.Factory).
type Factory struct{}

// Hyper implements algos.Factory: the tunable hyperparameters in loop order.
func (Factory) Hyper() []string { return []string{"batch"} }

// Configure decodes batch (>= 1, required; dag.yaml sets 64).
func (Factory) Configure(p *task.Params) algos.Config {
	return Config{Batch: int(p.Int("batch", task.Required(), task.Min(1)))}
}

// Feasible implements algos.Config.
func (c Config) Feasible() bool { return c.Validate() == nil }

// Meta implements algos.Config: snapshots are raw weights, evaluated on
// test batches of the training batch size (§3.1.6).
func (c Config) Meta() map[string]string {
	return map[string]string{"method": "newton", "layout": "raw", "eval_batch": strconv.Itoa(c.Batch)}
}

// New implements algos.Factory; the initial weights come from the
// instance, drawn from the stream "init".
func (Factory) New(cfg algos.Config, instance any, src stream.Source) (algos.Method, error) {
	c, ok := cfg.(Config)
	if !ok {
		return nil, fmt.Errorf("newton: config is %T", cfg)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p, ok := instance.(interface {
		Problem
		InitialWeights(*rand.Rand) []float64
	})
	if !ok {
		return nil, fmt.Errorf("newton: cannot train on %T", instance)
	}
	return New(c, p, p.InitialWeights(src.Rand("init")), src), nil
}
