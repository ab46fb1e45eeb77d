package olrs

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"zorepro/algos"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Problem is an online regression stream the learners play (spec §3,
// Theorem 1): *olr.Instance satisfies it, with *olr.Moments.
type Problem[M Moments] interface {
	Bounds
	// Draw fills the rows of S (features) and a (targets) with the next
	// rounds, from rng.
	Draw(rng *rand.Rand, S *mat.Dense, a []float64)
	// Project maps θ onto Θ in place.
	Project(theta []float64)
	// NewMoments returns the empty moments of a stream.
	NewMoments() M
}

// Bounds are what Theorem 1's schedules need of a problem.
type Bounds interface {
	// Dim is b, the length of θ and of a round's features.
	Dim() int
	// Constants returns C_θ (Θ's radius), C_s (the features' bound), C_a
	// (the targets' bound), C and L of the theorem.
	Constants() (cTheta, cS, cA, c, l float64)
}

// Moments accumulate a stream's rounds, so that the loss of any θ over
// them and the optimum in hindsight over Θ can be computed.
type Moments interface {
	// Add accumulates the rounds (rows of S, targets a).
	Add(S *mat.Dense, a []float64)
	// Loss returns Σ_i (θᵀs_i − a_i)² over the rounds added.
	Loss(theta []float64) float64
	// Best returns the optimum in hindsight over Θ and whether Θ's
	// constraint is active there.
	Best() (theta []float64, constrained bool, err error)
	MarshalBinary() ([]byte, error)
	UnmarshalBinary([]byte) error
}

// Rule is one exploration strategy's round.
type Rule interface {
	// Round plays one round with features s and target a: it returns the
	// loss of the prediction it played and updates theta in place (the
	// caller projects it onto Θ afterwards).
	Round(theta, s []float64, a float64, rng *rand.Rand) (played float64)
}

// Learner plays T rounds with a Rule. It implements algos.Method.
type Learner[M Moments] struct {
	in     Problem[M]
	rule   Rule
	t      int64
	chunk  int
	src    stream.Source
	theta  []float64
	loss   float64 // Σ c_i(θ_i)
	played float64 // Σ loss of the played predictions
	mom    M
	done   int64
}

var _ algos.Method = (*Learner[Moments])(nil)

// New returns a learner for T rounds in chunks of chunk rounds.
func New[M Moments](in Problem[M], rule Rule, T int64, chunk int, src stream.Source) *Learner[M] {
	if T < 1 || chunk < 1 {
		panic(fmt.Sprintf("olrs: T = %d, chunk = %d", T, chunk))
	}
	return &Learner[M]{in: in, rule: rule, t: T, chunk: chunk, src: src, theta: make([]float64, in.Dim()), mom: in.NewMoments()}
}

// Step plays the next chunk of rounds.
func (l *Learner[M]) Step(it int64) (algos.Stat, error) {
	n := int(min(int64(l.chunk), l.t-l.done))
	if n <= 0 {
		return algos.Stat{Done: true}, nil
	}
	b := l.in.Dim()
	S := mat.NewDense(n, b, nil)
	a := make([]float64, n)
	l.in.Draw(l.src.Rand("rounds", uint64(it)), S, a)
	rng := l.src.Rand("explore", uint64(it))
	for i := 0; i < n; i++ {
		s := S.RawRowView(i)
		var pred float64
		for j, v := range s {
			pred += l.theta[j] * v
		}
		r := pred - a[i]
		l.loss += r * r
		l.played += l.rule.Round(l.theta, s, a[i], rng)
		l.in.Project(l.theta)
	}
	l.mom.Add(S, a)
	l.done += int64(n)
	for _, v := range l.theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return algos.Stat{}, fmt.Errorf("olrs: θ is not finite after %d rounds", l.done)
		}
	}
	return algos.Stat{Samples: int64(n), Done: l.done >= l.t, Metrics: []task.Metric{{Name: "avg_loss", Value: l.loss / float64(l.done)}}}, nil
}

// Params returns θ.
func (l *Learner[M]) Params() []float64 { return l.theta }

// Snapshot returns the regret metrics after the rounds played so far, in
// the order of olr.Env's metrics.
func (l *Learner[M]) Snapshot() []float64 {
	best, constrained, err := l.mom.Best()
	if err != nil || l.done == 0 {
		nan := math.NaN()
		return []float64{nan, nan, nan, nan, nan}
	}
	bestLoss := l.mom.Loss(best)
	t := float64(l.done)
	c := 0.0
	if constrained {
		c = 1
	}
	return []float64{(l.loss - bestLoss) / t, (l.played - bestLoss) / t, l.loss / t, bestLoss / t, c}
}

// MarshalState encodes θ, the loss sums, the rounds played and the moments.
func (l *Learner[M]) MarshalState() ([]byte, error) {
	mom, err := l.mom.MarshalBinary()
	if err != nil {
		return nil, err
	}
	e := blob.NewEncoder("ZOLS", 1)
	e.Floats(l.theta)
	e.Float64(l.loss)
	e.Float64(l.played)
	e.Int64(l.done)
	e.Blob(mom)
	return e.Data(), nil
}

// UnmarshalState restores a state written by MarshalState.
func (l *Learner[M]) UnmarshalState(data []byte) error {
	d := blob.NewDecoder(data, "ZOLS", 1)
	theta := d.Floats()
	loss, played, done := d.Float64(), d.Float64(), d.Int64()
	mom := d.Blob()
	if err := d.Finish(); err != nil {
		return err
	}
	if len(theta) != len(l.theta) {
		return fmt.Errorf("olrs: state has θ of %d, want %d", len(theta), len(l.theta))
	}
	if err := l.mom.UnmarshalBinary(mom); err != nil {
		return err
	}
	copy(l.theta, theta)
	l.loss, l.played, l.done = loss, played, done
	return nil
}

// Config is shared by both rules' factories: the horizon T (the theorem's
// schedules depend on it) and the chunk size.
type Config struct {
	Method string `json:"-"`
	T      int64  `json:"t"`
	Chunk  int    `json:"chunk"`
}

// Validate implements algos.Config.
func (c Config) Validate() error {
	if c.T < 1 || c.Chunk < 1 {
		return fmt.Errorf("olrs: T = %d, chunk = %d, want both ≥ 1", c.T, c.Chunk)
	}
	return nil
}

// Header implements algos.Config: snapshots hold the regret metrics.
func (c Config) Header() trajectory.Header { return trajectory.Header{Method: c.Method} }

// Budget implements algos.Budgeted: exactly T rounds.
func (c Config) Budget() algos.Budget { return algos.Budget{Samples: c.T} }
