package exact

import (
	"errors"
	"fmt"
	"slices"

	"zorepro/algos"
	"zorepro/algos/episodic"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Factory makes ExAct available to the stages on episodic environments of
// type P (an algos.Algorithm).
type Factory[P episodic.Episodic] struct{}

var _ algos.Algorithm[Config, episodic.Episodic] = Factory[episodic.Episodic]{}

// Hyper implements algos.Algorithm: α × N × ν (episodic.Hyper).
func (Factory[P]) Hyper() []string { return episodic.Hyper() }

// Decode implements algos.Algorithm: alpha (> 0), directions (>= 1), nu
// (> 0) and diagnostics_every (episodic.Decode), and variant (one-step,
// the default; reward-to-go; all-steps).
func (Factory[P]) Decode(p *task.Params) Config {
	return Config{Config: episodic.Decode(p), Variant: p.String("variant", task.Default(OneStep), task.OneOf(Variants...))}
}

// Validate implements algos.Config.
func (c Config) Validate() error {
	err := c.Config.Validate()
	if !slices.Contains(Variants, c.Variant) {
		err = errors.Join(err, fmt.Errorf("%w: Variant = %q, want one of %v", episodic.ErrConfig, c.Variant, Variants))
	}
	return err
}

// Header implements algos.Config: snapshots are W, p×n row-major. The
// method is "exact" for the one-step variant (the plotted one), else
// "exact-<variant>".
func (c Config) Header() trajectory.Header {
	if c.Variant == OneStep {
		return trajectory.Header{Method: "exact"}
	}
	return trajectory.Header{Method: "exact-" + c.Variant}
}

// New implements algos.Algorithm (the environment may also be an
// episodic.Converger). Rollouts run serially until SetParallel provides a
// pool.
func (Factory[P]) New(cfg Config, env P, src stream.Source) (algos.Method, error) {
	return New(cfg, env, src, episodic.Options{})
}
