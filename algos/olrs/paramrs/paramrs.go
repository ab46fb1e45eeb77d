package paramrs

import (
	"math"
	"math/rand/v2"

	"zorepro/algos"
	"zorepro/algos/olrs"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Rule is one round of Algorithm 1.
type Rule struct {
	Alpha, Delta float64
	u            []float64
}

// Schedule returns Theorem 1's α and δ for Algorithm 1.
func Schedule(in olrs.Bounds, T int64) (alpha, delta float64) {
	cTheta, cS, _, c, l := in.Constants()
	b := float64(in.Dim())
	k := c*c + cS*cS
	delta = math.Pow(float64(T), -0.25) * math.Sqrt(cTheta*b*k/(2*l))
	alpha = cTheta * delta / (b * k * math.Sqrt(float64(T)))
	return alpha, delta
}

// Round implements olrs.Rule.
func (r *Rule) Round(theta, s []float64, a float64, rng *rand.Rand) float64 {
	b := len(theta)
	if len(r.u) != b {
		r.u = make([]float64, b)
	}
	var n2 float64
	for j := range r.u {
		r.u[j] = rng.NormFloat64()
		n2 += r.u[j] * r.u[j]
	}
	norm := math.Sqrt(n2)
	var pred float64
	for j := range r.u {
		r.u[j] /= norm
		pred += (theta[j] + r.Delta*r.u[j]) * s[j]
	}
	c := (pred - a) * (pred - a)
	step := r.Alpha * c * float64(b) / r.Delta
	for j := range theta {
		theta[j] -= step * r.u[j]
	}
	return c
}

// Factory makes Algorithm 1 available to the stages.
type Factory[P olrs.Problem[M], M olrs.Moments] struct{}

var _ algos.Algorithm[olrs.Config, olrs.Problem[olrs.Moments]] = Factory[olrs.Problem[olrs.Moments], olrs.Moments]{}

// Hyper implements algos.Algorithm: nothing is tuned, the theorem fixes α, δ.
func (Factory[P, M]) Hyper() []string { return nil }

// Decode reads t (the horizon T) and chunk (rounds per iteration).
func (Factory[P, M]) Decode(p *task.Params) olrs.Config {
	return olrs.Config{Method: "paramrs", T: p.Int("t", task.Required(), task.Min(1)), Chunk: int(p.Int("chunk", task.Default(int64(1000)), task.Min(1), task.Max(algos.MaxPerIteration)))}
}

// New implements algos.Algorithm.
func (Factory[P, M]) New(c olrs.Config, in P, src stream.Source) (algos.Method, error) {
	alpha, delta := Schedule(in, c.T)
	return olrs.New[M](in, &Rule{Alpha: alpha, Delta: delta}, c.T, c.Chunk, src), nil
}
