package linreg

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Env is linear regression with partial information as the stages see it
// (an algos.Env and algos.Generator).
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
func (Env) Load(data []byte) (any, error) {
	in := new(Instance)
	if err := in.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	return in, nil
}

// Metrics implements algos.Env.
func (Env) Metrics() []string { return []string{MetricTestLoss, MetricPopLoss} }

// Evaluate returns the test loss on a fresh batch of meta["eval_batch"]
// examples drawn from rng, and the population loss, of one snapshot in
// layout meta["layout"].
func (Env) Evaluate(inst any, snap []float64, meta map[string]string, rng *rand.Rand) ([]float64, error) {
	in, ok := inst.(*Instance)
	if !ok {
		return nil, fmt.Errorf("linreg: instance is %T", inst)
	}
	n, err := strconv.Atoi(meta["eval_batch"])
	if err != nil || n < 1 {
		return nil, fmt.Errorf("linreg: trajectory meta eval_batch = %q, want a positive integer", meta["eval_batch"])
	}
	layout := meta["layout"]
	X, y := in.NewBatch(rng, n)
	test, err := in.EvalSnapshot(layout, snap, X, y)
	if err != nil {
		return nil, err
	}
	pop, err := in.PopulationLossSnapshot(layout, snap)
	if err != nil {
		return nil, err
	}
	return []float64{test, pop}, nil
}
