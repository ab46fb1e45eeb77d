package algos

import (
	"math/rand/v2"

	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Factory is one optimization algorithm as the stages see it: it decodes
// the algorithm's parameters and builds a Method on a problem instance.
// Each algorithm package exports one, so that a task's code identity names
// exactly the algorithm it runs.
type Factory interface {
	// Hyper lists the tunable hyperparameters in grid loop order (ties in
	// tuning go to the first grid point in this order).
	Hyper() []string
	// Configure decodes the algorithm's parameters, reporting problems
	// through p.
	Configure(p *task.Params) Config
	// New builds the method on a problem instance (as returned by an
	// Env's Load); src supplies the method's named streams.
	New(cfg Config, instance any, src stream.Source) (Method, error)
}

// Config is a decoded algorithm configuration.
type Config interface {
	// Feasible reports whether the configuration satisfies the
	// algorithm's cross-parameter constraints (e.g. top-b <= directions);
	// tuning skips infeasible grid points.
	Feasible() bool
	// Meta is recorded in the trajectory for evaluation (e.g. the
	// snapshot layout and the test batch size).
	Meta() map[string]string
}

// Env is a problem family as the stages see it.
type Env interface {
	// Load decodes an instance from the generate stage's output.
	Load(data []byte) (any, error)
	// Metrics names the values Evaluate returns.
	Metrics() []string
	// Evaluate computes the metrics of one snapshot; rng is the
	// evaluation stream of that snapshot.
	Evaluate(instance any, snapshot []float64, meta map[string]string, rng *rand.Rand) ([]float64, error)
}

// Generator is implemented by Envs whose instances are generated from a
// seed: PlanGenerate decodes the generation parameters and returns the
// function producing the instance's bytes.
type Generator interface {
	PlanGenerate(p *task.Params) func(src stream.Source) ([]byte, error)
}

// Parallelizer is implemented by methods whose iterations fan out into
// independent units (e.g. rollouts); the train stage lends them the task's
// worker pool. fn(i) must write only index-owned state, so results do not
// depend on how many workers run.
type Parallelizer interface {
	SetParallel(par func(n int, fn func(i int) error) error)
}

// Budgeted is implemented by configurations that fix their own sample
// budget (e.g. an online learner's horizon T); the train stage then needs
// no budget parameter.
type Budgeted interface {
	Budget() Budget
}
