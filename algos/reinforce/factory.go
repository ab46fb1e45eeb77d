package reinforce

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"zorepro/algos"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Factory makes REINFORCE available to the stages (an algos.Factory).
type Factory struct{}

// Hyper implements algos.Factory: the tuning grid is over lr only (§3.8).
func (Factory) Hyper() []string { return []string{"lr"} }

// Configure decodes lr (> 0, required), batch (>= 1, default 512) and beta
// (> 0, default 0.5).
func (Factory) Configure(p *task.Params) algos.Config {
	return Config{
		LR:    p.Float("lr", task.Required(), task.Above(0)),
		Batch: int(p.Int("batch", task.Default(DefaultBatch), task.Min(1))),
		Beta:  p.Float("beta", task.Default(DefaultBeta), task.Above(0)),
	}
}

// Feasible implements algos.Config.
func (c Config) Feasible() bool { return c.Validate() == nil }

// Meta implements algos.Config: snapshots are raw weights, evaluated on
// test batches of the training batch size (§3.1.6: 512).
func (c Config) Meta() map[string]string {
	return map[string]string{"method": "reinforce", "layout": "raw", "eval_batch": strconv.Itoa(c.Batch)}
}

// New implements algos.Factory; the initial weights come from the
// instance, drawn from the stream "init".
func (Factory) New(cfg algos.Config, instance any, src stream.Source) (algos.Method, error) {
	c, ok := cfg.(Config)
	if !ok {
		return nil, fmt.Errorf("reinforce: config is %T", cfg)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p, ok := instance.(interface {
		Problem
		InitialWeights(*rand.Rand) []float64
	})
	if !ok {
		return nil, fmt.Errorf("reinforce: cannot train on %T", instance)
	}
	return New(c, p, p.InitialWeights(src.Rand("init")), src), nil
}
