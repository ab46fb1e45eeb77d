package lqr

import (
	"fmt"
	"math/rand/v2"

	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Env is the LQR problem family as the stages see it: it generates, loads
// and evaluates instances (the algos.Env and algos.Generator interfaces).
type Env struct{}

// Metric names; Evaluate returns MetricGradSq (lqr.go: ‖G‖²_F of one
// trajectory from x₀* with fresh noise from the evaluation stream, the
// statistic of the stop rule, §5.2), then these two.
const (
	// MetricExpGradSq is ‖∇J(K)‖²_F, the exact expected gradient (§6.5).
	MetricExpGradSq = "exp_grad_sq"
	// MetricExpCost is J(K), the exact expected episode cost (a return of
	// −J).
	MetricExpCost = "exp_cost"
)

// PlanGenerate reads the generation parameters and returns the generator:
//   - noise: c, the standard deviation of the dynamics noise, > 0 (required);
//   - n: the state dimension, default 100;
//   - horizon: H, default 100;
//   - tolerance: the stationarity threshold on ‖G‖²_F, default 0.05.
//
// x₀* is the first n draws of stream "x0star" of stream.New(seed, X0Scope,
// nil), seed being the task's root seed, so it depends on the seed alone
// (package documentation).
func (Env) PlanGenerate(p *task.Params) func(src stream.Source) ([]byte, error) {
	noise := p.Float("noise", task.Required(), task.Above(0))
	n := p.Int("n", task.Default(DefaultDim), task.Min(1), task.Max(MaxDim))
	h := p.Int("horizon", task.Default(DefaultHorizon), task.Min(1), task.Max(MaxHorizon))
	tol := p.Float("tolerance", task.Default(DefaultTolerance), task.Above(0))
	return func(src stream.Source) ([]byte, error) {
		rng := stream.New(src.Root(), X0Scope, nil).Rand("x0star")
		in, err := Generate(int(n), int(h), noise, tol, rng)
		if err != nil {
			return nil, err
		}
		return in.MarshalBinary()
	}
}

// Load decodes an instance.
func (Env) Load(data []byte) (*Instance, error) { return blob.Unmarshal[Instance](data) }

// Metrics names Evaluate's values.
func (Env) Metrics() []string { return []string{MetricGradSq, MetricExpGradSq, MetricExpCost} }

// Evaluate returns, for a snapshot K (the gain, length n; the header is
// not used): the stationarity statistic ‖G‖²_F from x₀* with its noise drawn
// from rng (Stationarity), ‖∇J(K)‖²_F and J(K) (Expected).
func (Env) Evaluate(in *Instance, snap []float64, _ trajectory.Header, rng *rand.Rand) ([]float64, error) {
	if len(snap) != in.N {
		return nil, fmt.Errorf("%w: %d values, want the gain K of length %d", ErrSnapshot, len(snap), in.N)
	}
	g2, _, _ := in.Stationarity(snap, rng)
	j, grad := in.Expected(snap)
	return []float64{g2, dot(grad, grad), j}, nil
}
