package ars

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"zorepro/algos"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Factory makes one-step ARS available to the stages (an algos.Factory).
type Factory struct{}

// Hyper implements algos.Factory: α × N × ν × b, the loop order of the
// original tuning script (§3.8).
func (Factory) Hyper() []string { return []string{"alpha", "directions", "nu", "top"} }

// Configure decodes alpha (> 0), directions (>= 1), nu (> 0) and top
// (1 <= top <= directions).
func (Factory) Configure(p *task.Params) algos.Config {
	c := Config{
		Alpha:      p.Float("alpha", task.Required(), task.Above(0)),
		Directions: int(p.Int("directions", task.Required(), task.Min(1))),
		Nu:         p.Float("nu", task.Required(), task.Above(0)),
		Top:        int(p.Int("top", task.Required(), task.Min(1))),
	}
	if c.Top > c.Directions && c.Directions > 0 {
		p.Errorf("top", "%d is out of range (must be <= directions = %d)", c.Top, c.Directions)
	}
	return c
}

// Feasible implements algos.Config.
func (c Config) Feasible() bool { return c.Validate() == nil }

// Meta implements algos.Config: snapshots carry the normalizer, and test
// batches have N examples (§3.1.6).
func (c Config) Meta() map[string]string {
	return map[string]string{"method": "ars", "layout": "normalized", "eval_batch": strconv.Itoa(c.Directions)}
}

// New implements algos.Factory; the initial weights come from the
// instance, drawn from the stream "init".
func (Factory) New(cfg algos.Config, instance any, src stream.Source) (algos.Method, error) {
	c, ok := cfg.(Config)
	if !ok {
		return nil, fmt.Errorf("ars: config is %T", cfg)
	}
	p, ok := instance.(interface {
		Problem
		InitialWeights(*rand.Rand) []float64
	})
	if !ok {
		return nil, fmt.Errorf("ars: cannot train on %T", instance)
	}
	return New(c, p, p.InitialWeights(src.Rand("init")), src)
}
