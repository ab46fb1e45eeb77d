package linreg

import (
	"fmt"
	"math/rand/v2"

	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Env is linear regression with partial information as the stages see it:
// it loads instances, generates them (PlanGenerate) and evaluates
// snapshots (the algos.Env and algos.Generator interfaces).
type Env struct{}

// Metric names, in the order Evaluate returns them.
const (
	MetricTestLoss = "test_loss" // ½·MSE on a fresh batch of the method's batch size (§3.1.6)
	MetricPopLoss  = "pop_loss"  // the exact population loss (§6 item 14)
)

// PlanGenerate reads the dimension d and returns the generator: one
// instance from the stream "instance" of the task.
func (Env) PlanGenerate(p *task.Params) func(src stream.Source) ([]byte, error) {
	d := p.Int("d", task.Required(), task.Min(1), task.Max(20000))
	return func(src stream.Source) ([]byte, error) {
		return Generate(int(d), src.Rand("instance")).MarshalBinary()
	}
}

// Load decodes an instance.
func (Env) Load(data []byte) (*Instance, error) { return blob.Unmarshal[Instance](data) }

// Metrics names Evaluate's values.
func (Env) Metrics() []string { return []string{MetricTestLoss, MetricPopLoss} }

// Evaluate returns the test loss on a fresh batch of h.EvalBatch examples
// drawn from rng, and the population loss, of one snapshot in layout
// h.Layout (see EvalSnapshot; trajectory.Raw for w itself,
// trajectory.Normalized for w ‖ μ ‖ s).
func (Env) Evaluate(in *Instance, snap []float64, h trajectory.Header, rng *rand.Rand) ([]float64, error) {
	if h.EvalBatch < 1 {
		return nil, fmt.Errorf("%w: the trajectory records no test batch size (eval_batch)", ErrSnapshot)
	}
	X, y := in.NewBatch(rng, h.EvalBatch)
	test, err := in.EvalSnapshot(h.Layout, snap, X, y)
	if err != nil {
		return nil, err
	}
	pop, err := in.PopulationLossSnapshot(h.Layout, snap)
	if err != nil {
		return nil, err
	}
	return []float64{test, pop}, nil
}
