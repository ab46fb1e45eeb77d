package olr

import (
	"fmt"
	"math/rand/v2"

	"zorepro/envs/linreg"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Env is online linear regression as the stages see it. Its learners
// (algos/olrs) measure regret while they play, so a snapshot already holds
// the metrics and Evaluate returns it unchanged.
type Env struct{}

// Metric names, in snapshot order.
var metrics = []string{
	"avg_regret",        // (Σ c_i(θ_i) − min_Θ Σ c_i(θ)) / t: the theorem's quantity
	"avg_regret_played", // the same for the losses of the perturbed predictions actually played
	"avg_loss",          // Σ c_i(θ_i) / t
	"avg_best_loss",     // min_Θ Σ c_i(θ) / t
	"constrained",       // 1 when the ball constraint was active for the optimum in hindsight
}

// PlanGenerate reads d, c_theta and c_a; the instance is drawn from the
// stream "instance" exactly as linreg draws its own.
func (Env) PlanGenerate(p *task.Params) func(src stream.Source) ([]byte, error) {
	d := p.Int("d", task.Required(), task.Min(1), task.Max(20000))
	ct := p.Float("c_theta", task.Default(3.0), task.Above(0))
	ca := p.Float("c_a", task.Default(3.0), task.Above(0))
	return func(src stream.Source) ([]byte, error) {
		in := &Instance{Lin: linreg.Generate(int(d), src.Rand("instance")), CTheta: ct, CA: ca}
		return in.MarshalBinary()
	}
}

// Load decodes an instance.
func (Env) Load(data []byte) (*Instance, error) { return blob.Unmarshal[Instance](data) }

// Metrics names Evaluate's values.
func (Env) Metrics() []string { return append([]string(nil), metrics...) }

// Evaluate returns the snapshot's metrics.
func (Env) Evaluate(_ *Instance, snap []float64, _ trajectory.Header, _ *rand.Rand) ([]float64, error) {
	if len(snap) != len(metrics) {
		return nil, fmt.Errorf("olr: snapshot has %d values, want %d (%v)", len(snap), len(metrics), metrics)
	}
	return append([]float64(nil), snap...), nil
}
