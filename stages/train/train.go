package train

import (
	"context"
	"encoding/json"
	"fmt"

	"zorepro/algos"
	"zorepro/pipeline/task"
)

// Kind is the train stage kind.
type Kind struct {
	// Trainers are the algorithms by environment, then by algorithm name
	// (the "env" and "algo" parameters).
	Trainers algos.Trainers
}

// Name implements task.Kind.
func (k *Kind) Name() string { return "train" }

// Version implements task.Kind.
func (k *Kind) Version() int { return 1 }

// Slots implements task.Kind.
func (k *Kind) Slots() []task.Slot {
	return []task.Slot{{Name: "data", Required: true}, {Name: "hyper"}}
}

// Plan implements task.Kind.
func (k *Kind) Plan(p *task.Params) task.Runner {
	r := &runner{}
	tr, ok := k.Trainers.Decode(p)
	// The budget may come from the configuration instead (Budgeted).
	r.budget = algos.DecodeBudget(p, algos.Budget{}, false)
	r.schedule = schedule(p)
	if !ok {
		return nil
	}
	// use_tuned: false keeps the stage's own hyperparameters even when a
	// tune stage is connected (e.g. a quick profile training with the
	// paper's chosen values while a small grid is still tuned beside them).
	r.useTuned = p.Bool("use_tuned", task.Default(true))
	r.trainer = tr
	r.setup = tr.Decode(p)
	if b, ok := r.setup.Budget(); ok && !p.Has("budget") {
		r.budget = b
	} else if !p.Has("budget") {
		p.Errorf("budget", "missing (required: a positive number of samples)")
	}
	return r
}

type runner struct {
	useTuned bool
	trainer  algos.Trainer
	setup    algos.Setup
	budget   algos.Budget
	schedule algos.Schedule
}

func (r *runner) Components() []any { return r.trainer.Components() }

// Cost implements task.Costed: at most the budget.
func (r *runner) Cost() int64 { return r.budget.Samples }

func (r *runner) Run(ctx context.Context, env task.Env) error {
	inst, err := r.trainer.LoadInput(env.Inputs("data")[0])
	if err != nil {
		return err
	}
	setup := r.setup
	if hy := env.Inputs("hyper"); len(hy) == 1 && r.useTuned {
		if setup, err = tuned(setup, hy[0]); err != nil {
			return err
		}
	}
	m, err := setup.New(inst, env.Streams())
	if err != nil {
		return err
	}
	if pm, ok := m.(algos.Parallelizer); ok {
		pm.SetParallel(func(n int, fn func(i int) error) error { return env.Parallel(ctx, n, fn) })
	}
	rec := &Recorder{Env: env, Budget: r.budget.Samples}
	traj, err := algos.Run(ctx, m, r.budget, r.schedule, rec)
	if err != nil {
		return err
	}
	traj.Header = setup.Header()
	out, err := traj.MarshalBinary()
	if err != nil {
		return err
	}
	return env.Output("trajectory", out)
}

// tuned lays a tune stage's choice (chosen.json's "params") over setup.
func tuned(setup algos.Setup, in task.Input) (algos.Setup, error) {
	data, err := in.Read("chosen.json")
	if err != nil {
		return nil, err
	}
	var chosen struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(data, &chosen); err != nil {
		return nil, fmt.Errorf("%s chosen.json: %w", in.Task(), err)
	}
	s, err := setup.Tuned(chosen.Params)
	if err != nil {
		return nil, fmt.Errorf("%s chosen.json: %w", in.Task(), err)
	}
	return s, nil
}

// schedule decodes the snapshot schedule.
func schedule(p *task.Params) algos.Schedule {
	s := algos.Schedule{
		Every:        p.Int("snapshot_every", task.Default(1), task.Min(0)),
		PerDecade:    int(p.Int("snapshot_per_decade", task.Default(0), task.Min(0))),
		EverySamples: p.Int("snapshot_every_samples", task.Default(0), task.Min(0)),
	}
	if s.Every == 0 && s.PerDecade == 0 && s.EverySamples == 0 {
		p.Errorf("snapshot_every", "one of snapshot_every, snapshot_per_decade and snapshot_every_samples must be positive")
	}
	return s
}

// Recorder adapts a task.Env to the algos driver.
type Recorder struct {
	Env    task.Env
	Budget int64
	last   int64
}

// Iteration implements algos.Recorder.
func (r *Recorder) Iteration(it task.Iter) {
	r.last = it.Iteration
	r.Env.Iteration(it)
	r.Env.Progress(it.Samples, r.Budget)
}

// CheckpointDue implements algos.Recorder.
func (r *Recorder) CheckpointDue(int64) bool { return r.Env.CheckpointDue() }

// Checkpoint implements algos.Recorder.
func (r *Recorder) Checkpoint(state []byte) error { return r.Env.Checkpoint(state, r.last) }

// Resume implements algos.Recorder.
func (r *Recorder) Resume() ([]byte, bool, error) {
	state, it, ok, err := r.Env.Resume()
	if ok {
		r.last = it
	}
	return state, ok, err
}
