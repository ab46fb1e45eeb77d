package ars

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

// Factory makes one-step ARS available to the stages on problems of type P (an
// algos.Algorithm).
type Factory[P Initialized] struct{}

var _ algos.Algorithm[Config, Initialized] = Factory[Initialized]{}

// Hyper implements algos.Algorithm: α × N × ν × b, the loop order of the
// original tuning script (§3.8).
func (Factory[P]) Hyper() []string { return []string{"alpha", "directions", "nu", "top"} }

// Decode reads alpha (> 0), directions (>= 1), nu (> 0) and top
// (1 <= top <= directions).
func (Factory[P]) Decode(p *task.Params) Config {
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

// Header implements algos.Config: snapshots carry the normalizer, and test
// batches have N examples (§3.1.6).
func (c Config) Header() trajectory.Header {
	return trajectory.Header{Method: "ars", Layout: trajectory.Normalized, EvalBatch: c.Directions}
}

// New implements algos.Algorithm; the initial weights come from the
// problem, drawn from the stream "init".
func (Factory[P]) New(cfg Config, p P, src stream.Source) (algos.Method, error) {
	return New(cfg, p, p.InitialWeights(src.Rand("init")), src)
}
