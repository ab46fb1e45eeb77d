package baseline

import (
	"context"
	"fmt"

	"zorepro/algos"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
	"zorepro/stages/evaluate/curvecsv"
)

// Kind is the baseline stage kind.
type Kind struct {
	// Trainers are the algorithms by environment, then by algorithm name
	// (the "env" and "algo" parameters), as the train kind has them.
	Trainers algos.Trainers
}

// Name implements task.Kind.
func (k *Kind) Name() string { return "baseline" }

// Version implements task.Kind.
func (k *Kind) Version() int { return 1 }

// Slots implements task.Kind.
func (k *Kind) Slots() []task.Slot { return []task.Slot{{Name: "data", Required: true}} }

// Plan implements task.Kind.
func (k *Kind) Plan(p *task.Params) task.Runner {
	tr, ok := k.Trainers.Decode(p)
	if !ok {
		return nil
	}
	return &runner{trainer: tr, setup: tr.Decode(p)}
}

type runner struct {
	trainer algos.Trainer
	setup   algos.Setup
}

func (r *runner) Components() []any { return r.trainer.Components() }

func (r *runner) Run(_ context.Context, env task.Env) error {
	inst, err := r.trainer.LoadInput(env.Inputs("data")[0])
	if err != nil {
		return err
	}
	src := env.Streams()
	m, err := r.setup.New(inst, src)
	if err != nil {
		return err
	}
	start := m.Snapshot()
	names := r.trainer.Metrics()
	v, err := inst.Evaluate(start, r.setup.Header(), src.Rand("eval", 0))
	if err != nil {
		return fmt.Errorf("the starting policy: %w", err)
	}
	if len(v) != len(names) {
		return fmt.Errorf("the starting policy: %d metrics, want %d", len(v), len(names))
	}
	it := task.Iter{Iteration: 0, Samples: 0, Digest: trajectory.Digest(start)}
	for j, n := range names {
		it.Metrics = append(it.Metrics, task.Metric{Name: n, Value: v[j]})
	}
	env.Iteration(it)
	curve := curvecsv.Curve{Metrics: names, Rows: []curvecsv.Row{{Values: v}}}
	return env.Output("curve.csv", curve.Bytes())
}
